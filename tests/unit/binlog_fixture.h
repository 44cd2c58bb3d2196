/* binlog_fixture: builds binlog events byte by byte for the decoder's unit
 * tests, and a recorder sink that writes what it receives as text lines.
 * Header-only; included by tests/unit/test_binlog_*.c and the fuzz replay. */
#ifndef SS_BINLOG_FIXTURE_H
#define SS_BINLOG_FIXTURE_H
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "binlog/binlog.h"

static inline void fx_u16(sbuf *b, uint16_t v) {
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    sbuf_add(b, x, 2);
}
static inline void fx_u32(sbuf *b, uint32_t v) {
    uint8_t x[4];
    for (int i = 0; i < 4; i++) x[i] = (uint8_t)(v >> (8 * i));
    sbuf_add(b, x, 4);
}
static inline void fx_u48(sbuf *b, uint64_t v) {
    uint8_t x[6];
    for (int i = 0; i < 6; i++) x[i] = (uint8_t)(v >> (8 * i));
    sbuf_add(b, x, 6);
}
static inline void fx_u64(sbuf *b, uint64_t v) {
    uint8_t x[8];
    for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (8 * i));
    sbuf_add(b, x, 8);
}
static inline void fx_u8(sbuf *b, uint8_t v) { sbuf_add(b, &v, 1); }
static inline void fx_lenenc(sbuf *b, uint64_t v) {
    if (v < 251) fx_u8(b, (uint8_t)v);
    else if (v < 65536) fx_u8(b, 252), fx_u16(b, (uint16_t)v);
    else if (v < (1u << 24)) fx_u8(b, 253), fx_u16(b, (uint16_t)v), fx_u8(b, (uint8_t)(v >> 16));
    else fx_u8(b, 254), fx_u64(b, v);
}
static inline void fx_hex(sbuf *b, const char *hex) {
    while (*hex) {
        if (*hex == ' ') { hex++; continue; }
        unsigned v;
        sscanf(hex, "%2x", &v);
        fx_u8(b, (uint8_t)v);
        hex += 2;
    }
}

/* With SEARCHSYNC_WRITE_CORPUS=DIR, every event a test builds is also kept
 * and written as a fuzz seed (mode byte + events) by fx_corpus_flush(). */
static sbuf fx_corpus;
static inline void fx_corpus_flush(const char *name, uint8_t mode) {
    const char *dir = getenv("SEARCHSYNC_WRITE_CORPUS");
    if (dir && fx_corpus.len) {
        char path[1024];
        snprintf(path, sizeof path, "%s/unit-%s", dir, name);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(&mode, 1, 1, f);
            fwrite(fx_corpus.data, 1, fx_corpus.len, f);
            fclose(f);
        }
    }
    sbuf_free(&fx_corpus);
}

/* a whole event: header + body (+ CRC32) into out (reset first) */
static inline void fx_event(sbuf *out, uint8_t type, uint32_t ts, uint32_t log_pos, uint16_t flags,
                            const void *body, size_t n, bool crc) {
    sbuf_reset(out);
    fx_u32(out, ts);
    fx_u8(out, type);
    fx_u32(out, 1);
    fx_u32(out, (uint32_t)(19 + n + (crc ? 4 : 0)));
    fx_u32(out, log_pos);
    fx_u16(out, flags);
    sbuf_add(out, body, n);
    if (crc) fx_u32(out, (uint32_t)crc32(0L, (const Bytef *)out->data, (uInt)out->len));
    if (getenv("SEARCHSYNC_WRITE_CORPUS") && type != BL_FORMAT_DESCRIPTION) sbuf_add(&fx_corpus, out->data, out->len);
}

/* FORMAT_DESCRIPTION body: version 4, server version, post-header lengths */
static inline void fx_fde_body(sbuf *b, const char *server_version, bool crc) {
    sbuf_reset(b);
    fx_u16(b, 4);
    char sv[50] = {0};
    snprintf(sv, sizeof sv, "%s", server_version);
    sbuf_add(b, sv, 50);
    fx_u32(b, 0);
    fx_u8(b, 19);
    uint8_t ph[171] = {0};
    ph[BL_QUERY - 1] = 13;
    ph[BL_ROTATE - 1] = 8;
    ph[BL_FORMAT_DESCRIPTION - 1] = 84;
    ph[BL_TABLE_MAP - 1] = 8;
    ph[BL_WRITE_ROWS_V1 - 1] = ph[BL_UPDATE_ROWS_V1 - 1] = ph[BL_DELETE_ROWS_V1 - 1] = 8;
    ph[BL_WRITE_ROWS_V2 - 1] = ph[BL_UPDATE_ROWS_V2 - 1] = ph[BL_DELETE_ROWS_V2 - 1] = 10;
    ph[BL_PARTIAL_UPDATE_ROWS - 1] = 10;
    for (int t = 166; t <= 171; t++) ph[t - 1] = t >= 169 ? 10 : 8;
    sbuf_add(b, ph, sizeof ph);
    fx_u8(b, crc ? 1 : 0); /* checksum algorithm */
}

/* TABLE_MAP body */
static inline void fx_table_map_body(sbuf *b, uint64_t id, const char *db, const char *tbl, uint32_t ncols,
                                     const uint8_t *types, const char *meta_hex, const char *nulls_hex,
                                     const sbuf *optional) {
    sbuf_reset(b);
    fx_u48(b, id);
    fx_u16(b, 1);
    fx_u8(b, (uint8_t)strlen(db));
    sbuf_adds(b, db);
    fx_u8(b, 0);
    fx_u8(b, (uint8_t)strlen(tbl));
    sbuf_adds(b, tbl);
    fx_u8(b, 0);
    fx_lenenc(b, ncols);
    sbuf_add(b, types, ncols);
    sbuf m = SBUF_INIT;
    fx_hex(&m, meta_hex);
    fx_lenenc(b, m.len);
    if (m.len) sbuf_add(b, m.data, m.len);
    sbuf_free(&m);
    fx_hex(b, nulls_hex);
    if (optional && optional->len) sbuf_add(b, optional->data, optional->len);
}

/* optional metadata field: type, lenenc length, bytes */
static inline void fx_opt(sbuf *o, uint8_t type, const sbuf *val) {
    fx_u8(o, type);
    fx_lenenc(o, val->len);
    if (val->len) sbuf_add(o, val->data, val->len);
}

/* ------------------------------------------------------------ recorder */
struct recorder {
    sbuf lines;
    bl_valctx v;
    int begins, rows, commits, ddls, heartbeats;
    bl_commit last_commit;
    char last_exec[512];
    int stop_after_rows; /* 0 = never */
};

static inline void rec_init(struct recorder *r) {
    memset(r, 0, sizeof *r);
    sbuf_init(&r->lines);
    bl_valctx_init(&r->v);
}
static inline void rec_free(struct recorder *r) {
    sbuf_free(&r->lines);
    bl_valctx_free(&r->v);
}
static inline int rec_begin(void *ctx, const bl_pos *at, uint32_t ts) {
    struct recorder *r = ctx;
    (void)ts;
    r->begins++;
    sbuf_printf(&r->lines, "begin %s:%llu %s\n", at->file, (unsigned long long)at->pos, at->gtid);
    return 0;
}
static inline int rec_row(void *ctx, const bl_row *row) {
    struct recorder *r = ctx;
    r->rows++;
    jsonw w;
    jw_init(&w, &r->lines);
    sbuf_printf(&r->lines, "%s %s.%s ", bl_change_name[row->kind], row->table->db, row->table->name);
    if (row->before) bl_image_json(&r->v, &w, row->table, row->before, NULL);
    else sbuf_adds(&r->lines, "null");
    sbuf_addc(&r->lines, ' ');
    jw_init(&w, &r->lines);
    if (row->after) bl_image_json(&r->v, &w, row->table, row->after, row->before);
    else sbuf_adds(&r->lines, "null");
    sbuf_addc(&r->lines, '\n');
    if (r->stop_after_rows && r->rows >= r->stop_after_rows) return 1;
    return 0;
}
static inline int rec_commit(void *ctx, const bl_commit *c) {
    struct recorder *r = ctx;
    r->commits++;
    r->last_commit = *c;
    snprintf(r->last_exec, sizeof r->last_exec, "%s", c->gtid_executed);
    sbuf_printf(&r->lines, "commit %s:%llu %s", c->end.file, (unsigned long long)c->end.pos, c->end.gtid);
    if (c->xa) sbuf_printf(&r->lines, " xa%d %s", c->xa, c->xid);
    sbuf_addc(&r->lines, '\n');
    return 0;
}
static inline int rec_ddl(void *ctx, const char *db, const char *sql, size_t n, const bl_commit *c) {
    struct recorder *r = ctx;
    (void)c;
    r->ddls++;
    sbuf_printf(&r->lines, "ddl %s %.*s\n", db, (int)n, sql);
    return 0;
}
static inline int rec_heartbeat(void *ctx, const bl_pos *at) {
    struct recorder *r = ctx;
    r->heartbeats++;
    sbuf_printf(&r->lines, "heartbeat %s:%llu\n", at->file, (unsigned long long)at->pos);
    return 0;
}
static inline bl_sink rec_sink(struct recorder *r) {
    bl_sink s = {.ctx = r, .begin = rec_begin, .row = rec_row, .commit = rec_commit,
                 .ddl = rec_ddl, .heartbeat = rec_heartbeat};
    return s;
}

#endif
