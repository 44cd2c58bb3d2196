/* Unit tests of the binlog event parser: header, checksum, positions,
 * transactions, TABLE_MAP metadata, rows v1/v2, MINIMAL images, MariaDB
 * GTIDs and compressed events, reconnect suppression, truncated input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "binlog/binlog.h"
#include "binlog/reader.h"
#include "binlog_fixture.h"

struct stream {
    bl_decoder d;
    struct recorder rec;
    bl_sink sink;
    sbuf ev, body;
    uint64_t pos;
    bool crc;
};

static void st_init(struct stream *s, bool crc) {
    memset(s, 0, sizeof *s);
    rec_init(&s->rec);
    s->sink = rec_sink(&s->rec);
    bl_decoder_init(&s->d, &s->sink);
    sbuf_init(&s->ev);
    sbuf_init(&s->body);
    s->crc = crc;
}
static void st_free(struct stream *s) {
    static int seq;
    char name[32];
    snprintf(name, sizeof name, "ev-%d", seq++);
    fx_corpus_flush(name, (uint8_t)((s->crc ? 1 : 0) | (s->d.flavor == BL_FLAVOR_MARIADB ? 2 : 0)));
    bl_decoder_free(&s->d);
    rec_free(&s->rec);
    sbuf_free(&s->ev);
    sbuf_free(&s->body);
}

/* feed s->body as an event of this type at the running position */
static int feed(struct stream *s, uint8_t type, bool zero_log_pos) {
    size_t len = 19 + s->body.len + (s->crc ? 4 : 0);
    fx_event(&s->ev, type, 1700000000, zero_log_pos ? 0 : (uint32_t)(s->pos + len), 0, s->body.data,
             s->body.len, s->crc);
    s->pos += len;
    return bl_decode(&s->d, (const uint8_t *)s->ev.data, s->ev.len);
}

static void start_stream(struct stream *s, const char *server) {
    /* artificial rotate (no checksum, as some servers send it) */
    sbuf_reset(&s->body);
    fx_u64(&s->body, 4);
    sbuf_adds(&s->body, "mysql-bin.000001");
    fx_event(&s->ev, BL_ROTATE, 0, 0, BL_FLAG_ARTIFICIAL, s->body.data, s->body.len, false);
    assert_int_equal(bl_decode(&s->d, (const uint8_t *)s->ev.data, s->ev.len), BL_OK);
    assert_string_equal(s->d.cur.file, "mysql-bin.000001");
    assert_int_equal(s->d.cur.pos, 4);
    s->pos = 4;
    fx_fde_body(&s->body, server, s->crc);
    assert_int_equal(feed(s, BL_FORMAT_DESCRIPTION, false), BL_OK);
}

static void maria_gtid(struct stream *s, uint64_t seq, uint8_t flags) {
    sbuf_reset(&s->body);
    fx_u64(&s->body, seq);
    fx_u32(&s->body, 0);
    fx_u8(&s->body, flags);
    fx_hex(&s->body, "000000000000");
}

/* table d.t (id INT, name VARCHAR(32), price DECIMAL(10,2) UNSIGNED? no: signed) with full metadata */
static void table_map_dt(struct stream *s, uint64_t id) {
    uint8_t types[3] = {BT_LONG, BT_VARCHAR, BT_NEWDECIMAL};
    sbuf opt = SBUF_INIT, v = SBUF_INIT;
    fx_u8(&v, 0x00); /* signedness: id, price signed */
    fx_opt(&opt, 1, &v);
    sbuf_reset(&v);
    fx_lenenc(&v, 45); /* default charset utf8mb4 */
    fx_opt(&opt, 2, &v);
    sbuf_reset(&v);
    fx_lenenc(&v, 2);
    sbuf_adds(&v, "id");
    fx_lenenc(&v, 4);
    sbuf_adds(&v, "name");
    fx_lenenc(&v, 5);
    sbuf_adds(&v, "price");
    fx_opt(&opt, 4, &v);
    fx_table_map_body(&s->body, id, "d", "t", 3, types, "8000 0a02", "06", &opt);
    sbuf_free(&opt);
    sbuf_free(&v);
}

/* one row of d.t: present bitmap applied by caller */
static void row_dt(sbuf *b, int32_t id, const char *name, const char *dec_hex) {
    uint8_t nulls = 0;
    if (!name) nulls |= 2;
    if (!dec_hex) nulls |= 4;
    fx_u8(b, nulls);
    fx_u32(b, (uint32_t)id);
    if (name) {
        fx_u8(b, (uint8_t)strlen(name));
        sbuf_adds(b, name);
    }
    if (dec_hex) fx_hex(b, dec_hex);
}

static void rows_header(sbuf *b, uint64_t id, bool v2, uint32_t ncols, uint8_t present1, int present2) {
    sbuf_reset(b);
    fx_u48(b, id);
    fx_u16(b, 1);
    if (v2) fx_u16(b, 2);
    fx_lenenc(b, ncols);
    fx_u8(b, present1);
    if (present2 >= 0) fx_u8(b, (uint8_t)present2);
}

static void test_mariadb_transaction(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    assert_int_equal(s.d.flavor, BL_FLAVOR_MARIADB);
    uint64_t txn_start = s.pos;
    maria_gtid(&s, 7, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    /* two rows: DECIMAL(10,2) 1234.50 and -10.55 is DECIMAL(4,2): use (10,2) encodings */
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 5, "abc", "80 00 04 d2 32");      /* 1234.50 */
    row_dt(&s.body, -1, NULL, "7f ff ff f5 c8");       /* -10.55 */
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    sbuf_reset(&s.body);
    fx_u64(&s.body, 99);
    assert_int_equal(feed(&s, BL_XID, false), BL_OK);
    char expect[1024];
    snprintf(expect, sizeof expect,
             "begin mysql-bin.000001:%llu 0-1-7\n"
             "insert d.t null {\"id\":5,\"name\":\"abc\",\"price\":\"1234.50\"}\n"
             "insert d.t null {\"id\":-1,\"name\":null,\"price\":\"-10.55\"}\n"
             "commit mysql-bin.000001:%llu 0-1-7\n",
             (unsigned long long)txn_start, (unsigned long long)s.pos);
    assert_string_equal(s.rec.lines.data, expect);
    assert_string_equal(s.rec.last_exec, "0-1-7");
    assert_int_equal(s.d.cur.pos, s.pos);
    st_free(&s);
}

static void test_checksum_mismatch(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    maria_gtid(&s, 1, 0);
    size_t len = 19 + s.body.len + 4;
    fx_event(&s.ev, BL_MARIA_GTID, 1, (uint32_t)(s.pos + len), 0, s.body.data, s.body.len, true);
    s.ev.data[20] ^= 1;
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, s.ev.len), BL_ERR);
    assert_non_null(strstr(s.d.err, "checksum mismatch"));
    assert_non_null(strstr(s.d.err, "GTID(MariaDB) event at mysql-bin.000001:"));
    st_free(&s);
}

static void test_update_minimal_and_v2(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, false);
    start_stream(&s, "8.0.36");
    assert_int_equal(s.d.flavor, BL_FLAVOR_MYSQL);
    sbuf_reset(&s.body);
    sbuf_adds(&s.body, "");
    /* MySQL: anonymous GTID, BEGIN, rows, XID */
    sbuf_reset(&s.body);
    fx_hex(&s.body, "00 00000000000000000000000000000000 0000000000000000 02 0000000000000000 0000000000000000");
    assert_int_equal(feed(&s, BL_ANONYMOUS_GTID, false), BL_OK);
    sbuf_reset(&s.body);
    fx_u32(&s.body, 1); fx_u32(&s.body, 0); fx_u8(&s.body, 1); fx_u16(&s.body, 0); fx_u16(&s.body, 0);
    sbuf_adds(&s.body, "d");
    fx_u8(&s.body, 0);
    sbuf_adds(&s.body, "BEGIN");
    assert_int_equal(feed(&s, BL_QUERY, false), BL_OK);
    assert_int_equal(s.d.txn_state, TXN_IN);
    table_map_dt(&s, 7);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    /* MINIMAL update: before has only id (col 0), after only name (col 1) */
    rows_header(&s.body, 7, true, 3, 0x01, 0x02);
    fx_u8(&s.body, 0); fx_u32(&s.body, 9);                 /* before: id=9 */
    fx_u8(&s.body, 0); fx_u8(&s.body, 2); sbuf_adds(&s.body, "zz"); /* after: name='zz' */
    assert_int_equal(feed(&s, BL_UPDATE_ROWS_V2, true), BL_OK); /* end_log_pos 0: count bytes */
    /* delete with a NULL */
    rows_header(&s.body, 7, true, 3, 0x07, -1);
    row_dt(&s.body, 3, NULL, "80 00 00 00 00");
    assert_int_equal(feed(&s, BL_DELETE_ROWS_V2, true), BL_OK);
    sbuf_reset(&s.body);
    fx_u64(&s.body, 1);
    assert_int_equal(feed(&s, BL_XID, false), BL_OK);
    const char *l = s.rec.lines.data;
    assert_non_null(strstr(l, "update d.t {\"id\":9} {\"name\":\"zz\"}\n"));
    assert_non_null(strstr(l, "delete d.t {\"id\":3,\"name\":null,\"price\":\"0.00\"} null\n"));
    assert_int_equal(s.rec.last_commit.end.pos, s.pos);
    assert_int_equal(s.d.cur.pos, s.pos);
    st_free(&s);
}

static void test_ddl_and_heartbeat(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    maria_gtid(&s, 8, 1); /* standalone */
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    sbuf_reset(&s.body);
    fx_u32(&s.body, 1); fx_u32(&s.body, 0); fx_u8(&s.body, 1); fx_u16(&s.body, 0); fx_u16(&s.body, 0);
    sbuf_adds(&s.body, "d");
    fx_u8(&s.body, 0);
    sbuf_adds(&s.body, "ALTER TABLE t ADD c INT");
    unsigned gen = s.d.schema_gen;
    assert_int_equal(feed(&s, BL_QUERY, false), BL_OK);
    assert_int_equal(s.rec.ddls, 1);
    assert_int_equal(s.rec.commits, 1);
    assert_true(s.d.schema_gen != gen);
    assert_non_null(strstr(s.rec.lines.data, "ddl d ALTER TABLE t ADD c INT\ncommit mysql-bin.000001:"));
    /* heartbeat: artificial, does not move the position */
    uint64_t before = s.d.cur.pos;
    sbuf_reset(&s.body);
    sbuf_adds(&s.body, "mysql-bin.000001");
    fx_event(&s.ev, BL_HEARTBEAT, 0, (uint32_t)before, 0, s.body.data, s.body.len, true);
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, s.ev.len), BL_OK);
    assert_int_equal(s.d.cur.pos, before);
    assert_int_equal(s.rec.heartbeats, 1);
    st_free(&s);
}

static void test_gtid_list_and_rotate(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    sbuf_reset(&s.body);
    fx_u32(&s.body, 2);
    fx_u32(&s.body, 0); fx_u32(&s.body, 1); fx_u64(&s.body, 100);
    fx_u32(&s.body, 3); fx_u32(&s.body, 2); fx_u64(&s.body, 5);
    assert_int_equal(feed(&s, BL_MARIA_GTID_LIST, false), BL_OK);
    maria_gtid(&s, 101, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    sbuf_reset(&s.body);
    fx_u64(&s.body, 1);
    assert_int_equal(feed(&s, BL_XID, false), BL_OK);
    assert_string_equal(s.rec.last_exec, "0-1-101,3-2-5");
    /* a real rotate at the end of the file */
    sbuf_reset(&s.body);
    fx_u64(&s.body, 4);
    sbuf_adds(&s.body, "mysql-bin.000002");
    assert_int_equal(feed(&s, BL_ROTATE, false), BL_OK);
    assert_string_equal(s.d.cur.file, "mysql-bin.000002");
    assert_int_equal(s.d.cur.pos, 4);
    st_free(&s);
}

/* MariaDB compressed rows: the row data after the bitmaps is zlib'ed */
static void test_mariadb_compressed_rows(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    maria_gtid(&s, 9, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    sbuf raw = SBUF_INIT;
    row_dt(&raw, 77, "compressed", "80 00 00 00 01");
    uLongf clen = compressBound((uLong)raw.len);
    uint8_t *cbuf = malloc(clen);
    assert_int_equal(compress(cbuf, &clen, (const Bytef *)raw.data, (uLong)raw.len), Z_OK);
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    fx_u8(&s.body, 0x81);
    fx_u8(&s.body, (uint8_t)raw.len);
    sbuf_add(&s.body, cbuf, clen);
    assert_int_equal(feed(&s, BL_WRITE_ROWS_COMPRESSED_V1, false), BL_OK);
    assert_non_null(strstr(s.rec.lines.data, "{\"id\":77,\"name\":\"compressed\",\"price\":\"0.01\"}"));
    free(cbuf);
    sbuf_free(&raw);
    st_free(&s);
}

/* after a reconnect from the last commit, rows already delivered are not repeated */
static void test_reconnect_suppression(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    uint64_t fde_end = s.pos;
    maria_gtid(&s, 1, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 1, "a", "80 00 00 00 01");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    assert_int_equal(s.rec.rows, 1);
    /* connection lost here: no commit yet; resume from the FDE's end */
    bl_pos from = {.pos = fde_end};
    snprintf(from.file, sizeof from.file, "mysql-bin.000001");
    bl_decoder_reconnected(&s.d, &from);
    s.pos = 4;
    sbuf_reset(&s.body);
    fx_u64(&s.body, fde_end);
    sbuf_adds(&s.body, "mysql-bin.000001");
    fx_event(&s.ev, BL_ROTATE, 0, 0, BL_FLAG_ARTIFICIAL, s.body.data, s.body.len, true);
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, s.ev.len), BL_OK);
    fx_fde_body(&s.body, "10.11.6-MariaDB-log", true);
    fx_event(&s.ev, BL_FORMAT_DESCRIPTION, 0, 0, 0, s.body.data, s.body.len, true);
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, s.ev.len), BL_OK);
    s.pos = fde_end;
    maria_gtid(&s, 1, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 1, "a", "80 00 00 00 01");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    assert_int_equal(s.rec.rows, 1); /* not repeated */
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 2, "b", "80 00 00 00 02");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    assert_int_equal(s.rec.rows, 2); /* new row delivered */
    sbuf_reset(&s.body);
    fx_u64(&s.body, 1);
    assert_int_equal(feed(&s, BL_XID, false), BL_OK);
    assert_int_equal(s.rec.commits, 1);
    st_free(&s);
}

/* the interrupted transaction is in the next file: still not repeated */
static void test_reconnect_across_rotate(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    maria_gtid(&s, 1, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 1, "a", "80 00 00 00 01");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    sbuf_reset(&s.body);
    fx_u64(&s.body, 1);
    assert_int_equal(feed(&s, BL_XID, false), BL_OK);
    bl_pos commit = s.rec.last_commit.end;
    sbuf_reset(&s.body);
    fx_u64(&s.body, 4);
    sbuf_adds(&s.body, "mysql-bin.000002");
    assert_int_equal(feed(&s, BL_ROTATE, false), BL_OK);
    /* file 2: a transaction, one row delivered, then the connection drops */
    s.pos = 4;
    fx_fde_body(&s.body, "10.11.6-MariaDB-log", true);
    assert_int_equal(feed(&s, BL_FORMAT_DESCRIPTION, false), BL_OK);
    uint64_t f2_fde_end = s.pos;
    maria_gtid(&s, 2, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 2, "b", "80 00 00 00 02");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    assert_int_equal(s.rec.rows, 2);
    bl_decoder_reconnected(&s.d, &commit);
    /* the server replays: rotate to file 2, its events again */
    sbuf_reset(&s.body);
    fx_u64(&s.body, 4);
    sbuf_adds(&s.body, "mysql-bin.000002");
    fx_event(&s.ev, BL_ROTATE, 0, 0, BL_FLAG_ARTIFICIAL, s.body.data, s.body.len, true);
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, s.ev.len), BL_OK);
    s.pos = 4;
    fx_fde_body(&s.body, "10.11.6-MariaDB-log", true);
    assert_int_equal(feed(&s, BL_FORMAT_DESCRIPTION, false), BL_OK);
    assert_int_equal(s.pos, f2_fde_end);
    maria_gtid(&s, 2, 0);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 2, "b", "80 00 00 00 02");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    assert_int_equal(s.rec.rows, 2); /* not repeated */
    rows_header(&s.body, 42, false, 3, 0x07, -1);
    row_dt(&s.body, 3, "c", "80 00 00 00 03");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    assert_int_equal(s.rec.rows, 3);
    st_free(&s);
}

/* every truncation of every event fails cleanly (never crashes) */
static void test_truncations(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, false);
    start_stream(&s, "8.0.36");
    table_map_dt(&s, 42);
    sbuf tm = SBUF_INIT;
    sbuf_add(&tm, s.body.data, s.body.len);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 42, true, 3, 0x07, -1);
    row_dt(&s.body, 1, "hello", "80 00 00 00 01");
    sbuf rows = SBUF_INIT;
    sbuf_add(&rows, s.body.data, s.body.len);
    for (size_t cut = 0; cut < rows.len; cut++) {
        sbuf_reset(&s.body);
        sbuf_add(&s.body, rows.data, cut);
        int rc = feed(&s, BL_WRITE_ROWS_V2, false);
        assert_true(rc == BL_ERR || rc == BL_OK);
    }
    for (size_t cut = 0; cut < tm.len; cut++) {
        sbuf_reset(&s.body);
        sbuf_add(&s.body, tm.data, cut);
        ((uint8_t *)s.body.data)[0] = 99; /* a new table id each time */
        int rc = feed(&s, BL_TABLE_MAP, false);
        assert_true(rc == BL_ERR || rc == BL_OK);
    }
    /* a header that lies about the length */
    fx_event(&s.ev, BL_XID, 0, 0, 0, "12345678", 8, false);
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, s.ev.len - 1), BL_ERR);
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, 5), BL_ERR);
    sbuf_free(&tm);
    sbuf_free(&rows);
    st_free(&s);
}

static void test_rows_without_table_map(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, false);
    start_stream(&s, "8.0.36");
    rows_header(&s.body, 5, true, 3, 0x07, -1);
    row_dt(&s.body, 1, "x", "80 00 00 00 01");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V2, false), BL_ERR);
    assert_non_null(strstr(s.d.err, "without a TABLE_MAP"));
    st_free(&s);
}

/* fuzzer finding: a table of zero columns made every row image empty and
 * the rows loop never advanced */
static void test_zero_column_rows(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, false);
    start_stream(&s, "8.0.36");
    fx_table_map_body(&s.body, 9, "d", "z", 0, (const uint8_t *)"", "", "", NULL);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 9, true, 0, 0, -1);
    s.body.len--; /* no bitmap byte for zero columns */
    fx_hex(&s.body, "000000");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V2, false), BL_ERR);
    assert_non_null(strstr(s.d.err, "empty row image"));
    st_free(&s);
}

static bool want_only_x(void *ctx, const char *db, const char *t) {
    (void)ctx;
    return !strcmp(db, "d") && !strcmp(t, "x");
}

static void test_table_filter(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, false);
    s.sink.want_table = want_only_x;
    start_stream(&s, "8.0.36");
    table_map_dt(&s, 42);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 42, true, 3, 0x07, -1);
    row_dt(&s.body, 1, "x", "80 00 00 00 01");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V2, false), BL_OK);
    assert_int_equal(s.rec.rows, 0);
    st_free(&s);
}

/* a table skipped at its first TABLE_MAP stays skipped while the
 * same TABLE_MAP bytes repeat, until the sink says its answers changed */
static bool want_dt;
static bool want_dt_when_told(void *ctx, const char *db, const char *t) {
    (void)ctx;
    return want_dt && !strcmp(db, "d") && !strcmp(t, "t");
}

static void insert_dt(struct stream *s, int32_t id) {
    table_map_dt(s, 42);
    assert_int_equal(feed(s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s->body, 42, true, 3, 0x07, -1);
    row_dt(&s->body, id, "x", "80 00 00 00 01");
    assert_int_equal(feed(s, BL_WRITE_ROWS_V2, false), BL_OK);
}

static void test_table_refilter(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, false);
    s.sink.want_table = want_dt_when_told;
    want_dt = false;
    start_stream(&s, "8.0.36");
    insert_dt(&s, 1);
    assert_int_equal(s.rec.rows, 0);
    want_dt = true; /* the sink's mapping now has d.t, the decoder not told yet */
    insert_dt(&s, 2);
    assert_int_equal(s.rec.rows, 0);
    bl_decoder_refilter(&s.d);
    insert_dt(&s, 3);
    assert_int_equal(s.rec.rows, 1);
    assert_non_null(strstr(s.rec.lines.data, "\"id\":3"));
    assert_null(strstr(s.rec.lines.data, "\"id\":2"));
    want_dt = false; /* and dropped again */
    bl_decoder_refilter(&s.d);
    insert_dt(&s, 4);
    assert_int_equal(s.rec.rows, 1);
    st_free(&s);
}

/* the MariaDB start statement was once built in a 512-byte stack
 * buffer (and a 1,024-byte statement): a GTID list of many domains overflowed
 * it. It is built whole, at any length, and escaped. */
static void test_connect_state_long_gtid_list(void **state) {
    (void)state;
    sbuf list = SBUF_INIT, sql = SBUF_INIT, want = SBUF_INIT;
    for (unsigned dom = 0; dom < 3000; dom++)
        sbuf_printf(&list, "%s%u-%u-%llu", dom ? "," : "", dom, 1000000 + dom,
                    10000000000ULL + dom);
    assert_true(list.len > 60000);
    bl_connect_state_sql(&sql, list.data);
    sbuf_printf(&want, "SET @slave_connect_state='%s'", list.data);
    assert_int_equal(sql.len, want.len);
    assert_string_equal(sql.data, want.data);
    bl_connect_state_sql(&sql, "0-1-2',@x='\\");
    assert_string_equal(sql.data, "SET @slave_connect_state='0-1-2\\',@x=\\'\\\\'");
    bl_connect_state_sql(&sql, "");
    assert_string_equal(sql.data, "SET @slave_connect_state=''");
    sbuf_free(&list);
    sbuf_free(&sql);
    sbuf_free(&want);
}

/* the collation ids a server reports were once one process-wide table,
 * freed and rewritten at every connect: two readers raced on it, and one
 * server's ids decided the other's text. Each decoder has its own. */
static void test_collations_per_decoder(void **state) {
    (void)state;
    struct stream a, b;
    st_init(&a, false);
    st_init(&b, false);
    bl_collation_register(&a.d, 45, "latin1");
    bl_collation_register(&b.d, 45, "cp1251");
    bl_collation_register(&b.d, 45, "cp1251"); /* again, as at a reconnect */
    const char *iconv_name;
    assert_int_equal(bl_collation_cs(&a.d, 45, &iconv_name), CS_LATIN1);
    assert_int_equal(bl_collation_cs(&b.d, 45, &iconv_name), CS_OTHER);
    assert_string_equal(iconv_name, "CP1251");
    assert_int_equal(bl_collation_cs(NULL, 45, &iconv_name), CS_UTF8); /* built-in */
    /* a TABLE_MAP's charsets resolve through its own decoder's table */
    start_stream(&a, "8.0.36");
    start_stream(&b, "8.0.36");
    table_map_dt(&a, 42);
    assert_int_equal(feed(&a, BL_TABLE_MAP, false), BL_OK);
    table_map_dt(&b, 42);
    assert_int_equal(feed(&b, BL_TABLE_MAP, false), BL_OK);
    assert_int_equal(bl_table_find(&a.d, 42)->cols[1].cs, CS_LATIN1);
    assert_int_equal(bl_table_find(&b.d, 42)->cols[1].cs, CS_OTHER);
    assert_string_equal(bl_table_find(&b.d, 42)->cols[1].cs_name, "CP1251");
    st_free(&a); /* freeing one decoder's table leaves the other's */
    assert_int_equal(bl_collation_cs(&b.d, 45, &iconv_name), CS_OTHER);
    st_free(&b);
}

/* one parser of binlog file sequence numbers */
static void test_file_seq(void **state) {
    (void)state;
    assert_int_equal(bl_file_seq("mysql-bin.000042"), 42);
    assert_int_equal(bl_file_seq("mysql-bin.1000000"), 1000000);
    assert_int_equal(bl_file_seq("host.with.dots-bin.000007"), 7);
    assert_int_equal(bl_file_seq("/var/lib/mysql/binlog.000123"), 123);
    assert_int_equal(bl_file_seq("nodot"), 0);
    assert_int_equal(bl_file_seq("trailing."), 0);
    assert_int_equal(bl_file_seq(""), 0);
    assert_int_equal(bl_file_seq(NULL), 0);
    assert_int_equal(bl_file_seq("mysql-bin.99999999999"), UINT32_MAX);
    assert_true(bl_file_seq("mysql-bin.000010") > bl_file_seq("mysql-bin.000009"));
}

static void query_body(sbuf *b, const char *sql) {
    sbuf_reset(b);
    fx_u32(b, 1); fx_u32(b, 0); fx_u8(b, 1); fx_u16(b, 0); fx_u16(b, 0);
    sbuf_adds(b, "d");
    fx_u8(b, 0);
    sbuf_adds(b, sql);
}

static void xa_prepare_body(sbuf *b, bool one_phase, uint32_t fmt, const char *gtrid,
                            const char *bqual) {
    sbuf_reset(b);
    fx_u8(b, one_phase);
    fx_u32(b, fmt);
    fx_u32(b, (uint32_t)strlen(gtrid));
    fx_u32(b, (uint32_t)strlen(bqual));
    sbuf_adds(b, gtrid);
    sbuf_adds(b, bqual);
}

/* Two-phase XA as MariaDB logs it: the prepared part ends at
 * XA_PREPARE_LOG_EVENT (xa = prepared, with its xid), the XA COMMIT and
 * XA ROLLBACK statements end transactions of their own naming the same xid;
 * MySQL's one-phase commit (XA_PREPARE one_phase 1) is an ordinary commit. */
static void test_xa_two_phase(void **state) {
    (void)state;
    struct stream s;
    st_init(&s, true);
    start_stream(&s, "10.11.6-MariaDB-log");
    maria_gtid(&s, 12, 0x40 | 0x04); /* FL_PREPARED_XA | FL_TRANSACTIONAL */
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    table_map_dt(&s, 7);
    assert_int_equal(feed(&s, BL_TABLE_MAP, false), BL_OK);
    rows_header(&s.body, 7, false, 3, 0x07, -1);
    row_dt(&s.body, 1, "a", "80 00 00 00 00");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    query_body(&s.body, "XA END X'7831',X'',1");
    assert_int_equal(feed(&s, BL_QUERY, false), BL_OK);
    assert_int_equal(s.rec.commits, 0);
    xa_prepare_body(&s.body, false, 1, "x1", "");
    assert_int_equal(feed(&s, BL_XA_PREPARE, false), BL_OK);
    assert_int_equal(s.rec.commits, 1);
    assert_int_equal(s.rec.last_commit.xa, BL_XA_PREPARED);
    assert_string_equal(s.rec.last_commit.xid, "X'7831',X'',1");
    maria_gtid(&s, 13, 0x80 | 0x04); /* FL_COMPLETED_XA */
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    query_body(&s.body, "XA COMMIT X'7831',X'',1");
    assert_int_equal(feed(&s, BL_QUERY, false), BL_OK);
    assert_int_equal(s.rec.commits, 2);
    assert_int_equal(s.rec.last_commit.xa, BL_XA_COMMITTED);
    assert_string_equal(s.rec.last_commit.xid, "X'7831',X'',1");
    /* an ordinary transaction after it says nothing of XA */
    maria_gtid(&s, 14, 0x04);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    rows_header(&s.body, 7, false, 3, 0x07, -1);
    row_dt(&s.body, 2, "b", "80 00 00 00 00");
    assert_int_equal(feed(&s, BL_WRITE_ROWS_V1, false), BL_OK);
    sbuf_reset(&s.body);
    fx_u64(&s.body, 5);
    assert_int_equal(feed(&s, BL_XID, false), BL_OK);
    assert_int_equal(s.rec.last_commit.xa, BL_XA_NONE);
    assert_string_equal(s.rec.last_commit.xid, "");
    /* a rollback, with a branch qualifier and a format id */
    maria_gtid(&s, 15, 0x80 | 0x04);
    assert_int_equal(feed(&s, BL_MARIA_GTID, false), BL_OK);
    query_body(&s.body, "XA ROLLBACK X'6162',X'6364',7");
    assert_int_equal(feed(&s, BL_QUERY, false), BL_OK);
    assert_int_equal(s.rec.last_commit.xa, BL_XA_ROLLED_BACK);
    assert_string_equal(s.rec.last_commit.xid, "X'6162',X'6364',7");
    assert_non_null(strstr(s.rec.lines.data, " xa1 X'7831',X'',1\n"));
    st_free(&s);

    st_init(&s, false);
    start_stream(&s, "8.0.36");
    query_body(&s.body, "XA START X'6f70',X'',1");
    assert_int_equal(feed(&s, BL_QUERY, false), BL_OK);
    assert_int_equal(s.d.txn_state, TXN_IN);
    xa_prepare_body(&s.body, true, 1, "op", "");
    assert_int_equal(feed(&s, BL_XA_PREPARE, false), BL_OK);
    assert_int_equal(s.rec.commits, 1);
    assert_int_equal(s.rec.last_commit.xa, BL_XA_NONE);
    /* a malformed event is an error naming it, not a commit */
    xa_prepare_body(&s.body, false, 1, "x", "");
    s.body.data[5] = 99; /* gtrid length past the body */
    assert_int_equal(feed(&s, BL_XA_PREPARE, false), BL_ERR);
    assert_non_null(strstr(s.d.err, "xid lengths"));
    st_free(&s);
}

static void test_xid_parse(void **state) {
    (void)state;
    char out[BL_XID_MAX];
    assert_true(bl_xid_parse("X'7831',X'',1", 13, out, sizeof out));
    assert_string_equal(out, "X'7831',X'',1");
    const char *t = " 'x1' ";
    assert_true(bl_xid_parse(t, strlen(t), out, sizeof out));
    assert_string_equal(out, "X'7831',X'',1");
    t = "'ab','cd',7;";
    assert_true(bl_xid_parse(t, strlen(t), out, sizeof out));
    assert_string_equal(out, "X'6162',X'6364',7");
    t = "0x4142 , x'ff' , 0";
    assert_true(bl_xid_parse(t, strlen(t), out, sizeof out));
    assert_string_equal(out, "X'4142',X'ff',0");
    t = "'it''s'";
    assert_true(bl_xid_parse(t, strlen(t), out, sizeof out));
    assert_string_equal(out, "X'69742773',X'',1");
    t = "'x1' ONE PHASE";
    assert_false(bl_xid_parse(t, strlen(t), out, sizeof out));
    t = "X'7g'";
    assert_false(bl_xid_parse(t, strlen(t), out, sizeof out));
    t = "'unterminated";
    assert_false(bl_xid_parse(t, strlen(t), out, sizeof out));
    assert_false(bl_xid_parse("", 0, out, sizeof out));
    char big[200];
    memset(big, 'a', sizeof big);
    big[0] = '\'', big[199] = '\'';
    assert_false(bl_xid_parse(big, sizeof big, out, sizeof out)); /* gtrid over 64 bytes */
    uint8_t g[64], b[64];
    memset(g, 0xab, sizeof g), memset(b, 0xcd, sizeof b);
    bl_xid_format(out, sizeof out, 4294967295u, g, 64, b, 64);
    assert_int_equal(strlen(out), 2 + 128 + 4 + 128 + 2 + 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mariadb_transaction),
        cmocka_unit_test(test_checksum_mismatch),
        cmocka_unit_test(test_update_minimal_and_v2),
        cmocka_unit_test(test_ddl_and_heartbeat),
        cmocka_unit_test(test_gtid_list_and_rotate),
        cmocka_unit_test(test_mariadb_compressed_rows),
        cmocka_unit_test(test_reconnect_suppression),
        cmocka_unit_test(test_reconnect_across_rotate),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_rows_without_table_map),
        cmocka_unit_test(test_table_filter),
        cmocka_unit_test(test_table_refilter),
        cmocka_unit_test(test_connect_state_long_gtid_list),
        cmocka_unit_test(test_collations_per_decoder),
        cmocka_unit_test(test_file_seq),
        cmocka_unit_test(test_zero_column_rows),
        cmocka_unit_test(test_xa_two_phase),
        cmocka_unit_test(test_xid_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
