/* fuzz_binlog: the libFuzzer target for the binlog event parser.
 *
 * Input: one mode byte (bit 0: checksums on, bit 1: MariaDB, bit 2: no
 * format event first) then events back to back; each event's size field is
 * overwritten with the bytes actually available so the fuzzer reaches the
 * bodies. Every decoded row is rendered to JSON (value.c, json_binary.c), and
 * the raw input also goes through the binary-JSON and GTID-set parsers.
 * Built with clang -fsanitize=fuzzer by `make check-long`; the committed
 * corpus is replayed by tests/fuzz/replay.c in `make check`. */
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "binlog/binlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
    sbuf out;
    bl_valctx v;
};

static int fz_row(void *ctx, const bl_row *r) {
    struct fz *f = ctx;
    jsonw w;
    sbuf_reset(&f->out);
    jw_init(&w, &f->out);
    if (r->before) bl_image_json(&f->v, &w, r->table, r->before, NULL);
    if (r->after) bl_image_json(&f->v, &w, r->table, r->after, r->before);
    return 0;
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void fde(sbuf *ev, bool crc, bool mariadb) {
    uint8_t b[19 + 2 + 50 + 4 + 1 + 171 + 1 + 4];
    memset(b, 0, sizeof b);
    b[4] = BL_FORMAT_DESCRIPTION;
    put_u32(b + 9, sizeof b);
    b[19] = 4;
    memcpy(b + 21, mariadb ? "10.11.6-MariaDB-log" : "8.4.3", mariadb ? 19 : 5);
    b[75] = 19;
    uint8_t *ph = b + 76;
    ph[BL_QUERY - 1] = 13;
    ph[BL_ROTATE - 1] = 8;
    ph[BL_TABLE_MAP - 1] = 8;
    for (int t = 23; t <= 25; t++) ph[t - 1] = 8;
    for (int t = 30; t <= 32; t++) ph[t - 1] = 10;
    ph[BL_PARTIAL_UPDATE_ROWS - 1] = 10;
    for (int t = 166; t <= 171; t++) ph[t - 1] = t >= 169 ? 10 : 8;
    b[sizeof b - 5] = crc ? 1 : 0;
    put_u32(b + sizeof b - 4, (uint32_t)crc32(0L, b, sizeof b - 4));
    sbuf_reset(ev);
    sbuf_add(ev, b, sizeof b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t mode = data[0];
    data++, size--;
    struct fz f;
    sbuf_init(&f.out);
    bl_valctx_init(&f.v);
    bl_sink sink = {.ctx = &f, .row = fz_row};
    bl_decoder d;
    bl_decoder_init(&d, &sink);
    bl_decoder_set_pos(&d, "fuzz.000001", 4);
    sbuf ev = SBUF_INIT;
    if (!(mode & 4)) {
        fde(&ev, mode & 1, mode & 2);
        (void)bl_decode(&d, (const uint8_t *)ev.data, ev.len);
    }
    size_t off = 0;
    while (size - off >= BL_HEADER_LEN) {
        uint32_t len = bl_u32(data + off + 9);
        if (len < BL_HEADER_LEN || len > size - off) len = (uint32_t)(size - off);
        sbuf_reset(&ev);
        sbuf_add(&ev, data + off, len);
        put_u32((uint8_t *)ev.data + 9, len);
        if ((mode & 1) && len >= BL_HEADER_LEN + 4)
            put_u32((uint8_t *)ev.data + len - 4, (uint32_t)crc32(0L, (const Bytef *)ev.data, len - 4));
        (void)bl_decode(&d, (const uint8_t *)ev.data, len);
        off += len;
    }
    /* the standalone parsers on the raw bytes */
    sbuf_reset(&f.out);
    (void)bl_json_binary(&f.out, data, size);
    if (size < 4096) {
        char *t = xstrndup((const char *)data, size);
        bl_gtid_set *g = bl_gtid_new();
        char err[256];
        if (bl_gtid_parse(g, t, err, sizeof err) == BL_OK) {
            sbuf_reset(&f.out);
            bl_gtid_format(g, &f.out);
            sbuf_reset(&f.out);
            bl_gtid_encode_mysql(g, &f.out);
        }
        bl_gtid_clear(g);
        (void)bl_gtid_decode_mysql(g, data, size);
        bl_gtid_free(g);
        free(t);
    }
    sbuf_free(&ev);
    bl_decoder_free(&d);
    bl_valctx_free(&f.v);
    sbuf_free(&f.out);
    return 0;
}
