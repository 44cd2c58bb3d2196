/* bench_decode: the decode + JSON step of `tail` alone, on one core.
 *
 * Reads binlog files from disk (a server's data directory), feeds every event
 * to the decoder and renders every row as the `tail` JSON line into a buffer
 * that is reset once it holds 1 MB (nothing is written, so I/O and the
 * network are out of the measurement). Prints rows, seconds and rows/s.
 * usage: bench_decode [--repeat N] BINLOG_FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binlog/binlog.h"

struct ctx {
    sbuf out, pos;
    bl_valctx v;
    uint64_t rows, bytes;
};

static int on_begin(void *c, const bl_pos *at, uint32_t ts) {
    struct ctx *x = c;
    (void)ts;
    sbuf_reset(&x->pos);
    bl_pos_json(&x->pos, at);
    return 0;
}

static int on_row(void *c, const bl_row *r) {
    struct ctx *x = c;
    bl_row_json(&x->v, &x->out, r, x->pos.data, x->pos.len);
    x->rows++;
    if (x->out.len >= (1u << 20)) {
        x->bytes += x->out.len;
        sbuf_reset(&x->out);
    }
    return 0;
}

int main(int argc, char **argv) {
    int repeat = 1, first = 1;
    if (argc > 2 && !strcmp(argv[1], "--repeat")) repeat = atoi(argv[2]), first = 3;
    if (first >= argc) {
        fprintf(stderr, "usage: bench_decode [--repeat N] BINLOG_FILE...\n");
        return 2;
    }
    /* load the files first: the measurement is the decoder, not the disk */
    size_t nf = (size_t)(argc - first);
    uint8_t **data = calloc(nf, sizeof *data);
    size_t *len = calloc(nf, sizeof *len);
    for (size_t i = 0; i < nf; i++) {
        FILE *f = fopen(argv[first + (int)i], "rb");
        if (!f) { perror(argv[first + (int)i]); return 1; }
        fseek(f, 0, SEEK_END);
        len[i] = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        data[i] = malloc(len[i]);
        if (fread(data[i], 1, len[i], f) != len[i]) { perror("read"); return 1; }
        fclose(f);
    }
    struct ctx x;
    memset(&x, 0, sizeof x);
    bl_valctx_init(&x.v);
    bl_sink sink = {.ctx = &x, .begin = on_begin, .row = on_row};
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (int r = 0; r < repeat; r++) {
        for (size_t i = 0; i < nf; i++) {
            bl_decoder d;
            bl_decoder_init(&d, &sink);
            bl_decoder_set_pos(&d, argv[first + (int)i], 4);
            size_t off = 4;
            while (off + BL_HEADER_LEN <= len[i]) {
                uint32_t sz = bl_u32(data[i] + off + 9);
                if (sz < BL_HEADER_LEN || off + sz > len[i]) break;
                if (bl_decode(&d, data[i] + off, sz) == BL_ERR) {
                    fprintf(stderr, "%s\n", d.err);
                    return 1;
                }
                off += sz;
            }
            bl_decoder_free(&d);
        }
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    x.bytes += x.out.len;
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("rows %llu  json_bytes %llu  cpu_seconds %.3f  rows_per_s %.0f  MB_per_s %.1f\n",
           (unsigned long long)x.rows, (unsigned long long)x.bytes, s, (double)x.rows / s,
           (double)x.bytes / s / 1e6);
    bl_valctx_free(&x.v);
    sbuf_free(&x.out);
    sbuf_free(&x.pos);
    for (size_t i = 0; i < nf; i++) free(data[i]);
    free(data);
    free(len);
    return 0;
}
