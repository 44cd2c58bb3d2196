/* Unit tests, byte fixtures for what MariaDB cannot produce: MySQL binary
 * JSON (small, large, opaque), TRANSACTION_PAYLOAD (zstd), PARTIAL_UPDATE_ROWS
 * JSON diffs, MySQL GTID sets (with tags), GTID_TAGGED and HEARTBEAT_V2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <zstd.h>

#include "binlog/binlog.h"
#include "binlog_fixture.h"

static char *json_of(const char *hex) {
    static char out[8192];
    sbuf b = SBUF_INIT, o = SBUF_INIT;
    fx_hex(&b, hex);
    int rc = bl_json_binary(&o, (const uint8_t *)b.data, b.len);
    snprintf(out, sizeof out, "%s", rc == BL_OK ? o.data : "ERROR");
    sbuf_free(&b);
    sbuf_free(&o);
    return out;
}

static void test_json_small(void **state) {
    (void)state;
    /* {"a":1,"b":"xy"} */
    assert_string_equal(json_of("00 0200 1700 1200 0100 1300 0100 050100 0c1400 6162 027879"),
                        "{\"a\":1,\"b\":\"xy\"}");
    /* [null, "a\"b", -5 (int64), 1.5, 65535 (uint16), -2 (int16)] */
    assert_string_equal(json_of("02 0600 2a00"
                                "040000" "0c1600" "091a00" "0b2200" "06ffff" "05feff"
                                "03 61 22 62"
                                "fbffffffffffffff"
                                "000000000000f83f"),
                        "[null,\"a\\\"b\",-5,1.5,65535,-2]");
    /* scalars at the top level and JSON null for an empty value */
    assert_string_equal(json_of("0401"), "true");
    assert_string_equal(json_of("0c 03 616263"), "\"abc\"");
    assert_string_equal(json_of(""), "null");
    /* uint64 max */
    assert_string_equal(json_of("0a ffffffffffffffff"), "18446744073709551615");
}

static void test_json_large(void **state) {
    (void)state;
    /* large array [1, 70000, true]: INT32 inlined in the large format */
    assert_string_equal(json_of("03 03000000 17000000 05 01000000 07 70110100 04 01000000"),
                        "[1,70000,true]");
    /* a generated large object of 3000 keys, > 64 KB: built here */
    sbuf b = SBUF_INIT, o = SBUF_INIT;
    uint32_t n = 3000;
    uint32_t hdr = 8 + n * 6 + n * 5;
    uint32_t keys = hdr, vals = keys + n * 6; /* keys "k0000".."k2999" are 5 bytes each */
    uint32_t size = vals + n * 21;           /* each value: string of 20 bytes */
    fx_u8(&b, 1);
    fx_u32(&b, n);
    fx_u32(&b, size);
    for (uint32_t i = 0; i < n; i++) fx_u32(&b, keys + i * 5), fx_u16(&b, 5);
    for (uint32_t i = 0; i < n; i++) fx_u8(&b, 12), fx_u32(&b, vals + i * 21);
    char k[8];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(k, sizeof k, "k%04u", i);
        sbuf_add(&b, k, 5);
    }
    while (b.len - 1 < vals) fx_u8(&b, 0);
    for (uint32_t i = 0; i < n; i++) {
        fx_u8(&b, 20);
        sbuf_add(&b, "abcdefghijklmnopqrst", 20);
    }
    assert_true(b.len > 65536);
    assert_int_equal(bl_json_binary(&o, (const uint8_t *)b.data, b.len), BL_OK);
    assert_non_null(strstr(o.data, "\"k2999\":\"abcdefghijklmnopqrst\"}"));
    assert_memory_equal(o.data, "{\"k0000\":\"abcdefghijklmnopqrst\",", 32);
    /* every truncation fails cleanly */
    for (size_t cut = 0; cut < b.len; cut += 97) {
        sbuf_reset(&o);
        int rc = bl_json_binary(&o, (const uint8_t *)b.data, cut);
        assert_true(rc == BL_ERR || rc == BL_OK);
    }
    sbuf_free(&b);
    sbuf_free(&o);
}

static void test_json_opaque(void **state) {
    (void)state;
    /* DECIMAL(3,2) 3.14 */
    assert_string_equal(json_of("0f f6 04 0302830e"), "3.14");
    /* DATETIME 2015-01-15 23:24:25 */
    assert_string_equal(json_of("0f 0c 08 00000019761f9519"), "\"2015-01-15 23:24:25.000000\"");
    /* DATE 2015-01-15 */
    assert_string_equal(json_of("0f 0a 08 00000000761f9519"), "\"2015-01-15\"");
    /* TIME -01:02:03.500000 */
    assert_string_equal(json_of("0f 0b 08 e05ef87cefffffff"), "\"-01:02:03.500000\"");
    /* a BLOB opaque */
    assert_string_equal(json_of("0f fc 03 010203"), "\"base64:type252:AQID\"");
    /* corrupt: offset beyond the document */
    assert_string_equal(json_of("00 0100 0b00 ff00 0100 050100"), "ERROR");
}

/* ------------------------------------------------------------- events */
struct stream {
    bl_decoder d;
    struct recorder rec;
    bl_sink sink;
    sbuf ev, body;
    uint64_t pos;
};

static void st_init(struct stream *s) {
    memset(s, 0, sizeof *s);
    rec_init(&s->rec);
    s->sink = rec_sink(&s->rec);
    bl_decoder_init(&s->d, &s->sink);
    s->pos = 4;
    sbuf_reset(&s->body);
    fx_u64(&s->body, 4);
    sbuf_adds(&s->body, "binlog.000007");
    fx_event(&s->ev, BL_ROTATE, 0, 0, BL_FLAG_ARTIFICIAL, s->body.data, s->body.len, true);
    assert_int_equal(bl_decode(&s->d, (const uint8_t *)s->ev.data, s->ev.len), BL_OK);
    fx_fde_body(&s->body, "8.4.3", true);
    size_t len = 19 + s->body.len + 4;
    fx_event(&s->ev, BL_FORMAT_DESCRIPTION, 0, (uint32_t)(s->pos + len), 0, s->body.data, s->body.len, true);
    s->pos += len;
    assert_int_equal(bl_decode(&s->d, (const uint8_t *)s->ev.data, s->ev.len), BL_OK);
}
static int feed(struct stream *s, uint8_t type) {
    size_t len = 19 + s->body.len + 4;
    fx_event(&s->ev, type, 1700000000, (uint32_t)(s->pos + len), 0, s->body.data, s->body.len, true);
    s->pos += len;
    return bl_decode(&s->d, (const uint8_t *)s->ev.data, s->ev.len);
}
static void st_free(struct stream *s) {
    static int seq;
    char name[32];
    snprintf(name, sizeof name, "m8-%d", seq++);
    fx_corpus_flush(name, 1);
    bl_decoder_free(&s->d);
    rec_free(&s->rec);
    sbuf_free(&s->ev);
    sbuf_free(&s->body);
}

static const uint8_t UUID1[16] = {0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
                                  0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62};

static void gtid_body(sbuf *b, uint64_t gno) {
    sbuf_reset(b);
    fx_u8(b, 0);
    sbuf_add(b, UUID1, 16);
    fx_u64(b, gno);
    fx_hex(b, "02 0000000000000000 0100000000000000");
}

/* table j.t (id INT, j JSON) with names */
static void table_map_jt(sbuf *b) {
    uint8_t types[2] = {BT_LONG, BT_JSON};
    sbuf opt = SBUF_INIT, v = SBUF_INIT;
    fx_u8(&v, 0);
    fx_opt(&opt, 1, &v);
    sbuf_reset(&v);
    fx_lenenc(&v, 2); sbuf_adds(&v, "id");
    fx_lenenc(&v, 1); sbuf_adds(&v, "j");
    fx_opt(&opt, 4, &v);
    fx_table_map_body(b, 12, "j", "t", 2, types, "04", "02", &opt);
    sbuf_free(&opt);
    sbuf_free(&v);
}

static void test_transaction_payload(void **state) {
    (void)state;
    struct stream s;
    st_init(&s);
    uint64_t start = s.pos;
    gtid_body(&s.body, 42);
    assert_int_equal(feed(&s, BL_GTID), BL_OK);
    /* inner events: BEGIN, TABLE_MAP, WRITE_ROWS_V2, XID — no checksums, log_pos 0 */
    sbuf inner = SBUF_INIT, ev = SBUF_INIT, b = SBUF_INIT;
    fx_u32(&b, 1); fx_u32(&b, 0); fx_u8(&b, 1); fx_u16(&b, 0); fx_u16(&b, 0);
    sbuf_adds(&b, "j");
    fx_u8(&b, 0);
    sbuf_adds(&b, "BEGIN");
    fx_event(&ev, BL_QUERY, 1, 0, 0, b.data, b.len, false);
    sbuf_add(&inner, ev.data, ev.len);
    table_map_jt(&b);
    fx_event(&ev, BL_TABLE_MAP, 1, 0, 0, b.data, b.len, false);
    sbuf_add(&inner, ev.data, ev.len);
    sbuf_reset(&b);
    fx_u48(&b, 12); fx_u16(&b, 1); fx_u16(&b, 2); fx_lenenc(&b, 2); fx_u8(&b, 3);
    /* 300 rows of (i, JSON true): the payload compresses well */
    for (int i = 1; i <= 300; i++) {
        fx_u8(&b, 0);
        fx_u32(&b, (uint32_t)i);
        fx_u32(&b, 2);
        fx_hex(&b, "0401");
    }
    fx_event(&ev, BL_WRITE_ROWS_V2, 1, 0, 0, b.data, b.len, false);
    sbuf_add(&inner, ev.data, ev.len);
    sbuf_reset(&b);
    fx_u64(&b, 5);
    fx_event(&ev, BL_XID, 1, 0, 0, b.data, b.len, false);
    sbuf_add(&inner, ev.data, ev.len);
    size_t cap = ZSTD_compressBound(inner.len);
    uint8_t *z = malloc(cap);
    size_t zl = ZSTD_compress(z, cap, inner.data, inner.len, 3);
    assert_false(ZSTD_isError(zl));
    sbuf_reset(&s.body);
    fx_u8(&s.body, 2); fx_u8(&s.body, 1); fx_u8(&s.body, 0);             /* compression zstd */
    sbuf usz = SBUF_INIT;
    fx_lenenc(&usz, inner.len);
    fx_u8(&s.body, 3); fx_u8(&s.body, (uint8_t)usz.len); sbuf_add(&s.body, usz.data, usz.len);
    sbuf psz = SBUF_INIT;
    fx_lenenc(&psz, zl);
    fx_u8(&s.body, 1); fx_u8(&s.body, (uint8_t)psz.len); sbuf_add(&s.body, psz.data, psz.len);
    fx_u8(&s.body, 0);
    sbuf_add(&s.body, z, zl);
    assert_int_equal(feed(&s, BL_TRANSACTION_PAYLOAD), BL_OK);
    assert_int_equal(s.rec.rows, 300);
    assert_int_equal(s.rec.commits, 1);
    assert_int_equal(s.rec.last_commit.end.pos, s.pos);
    assert_string_equal(s.rec.last_commit.end.gtid, "3e11fa47-71ca-11e1-9e33-c80aa9429562:42");
    assert_string_equal(s.rec.last_exec, "3e11fa47-71ca-11e1-9e33-c80aa9429562:42");
    char first[128];
    snprintf(first, sizeof first, "begin binlog.000007:%llu 3e11fa47", (unsigned long long)start);
    assert_memory_equal(s.rec.lines.data, first, strlen(first));
    assert_non_null(strstr(s.rec.lines.data, "insert j.t null {\"id\":300,\"j\":true}\n"));
    /* a corrupt frame is an error naming the event */
    ((uint8_t *)s.body.data)[s.body.len - 3] ^= 0xff;
    int rc = feed(&s, BL_TRANSACTION_PAYLOAD);
    assert_int_equal(rc, BL_ERR);
    assert_non_null(strstr(s.d.err, "TRANSACTION_PAYLOAD"));
    free(z);
    sbuf_free(&inner); sbuf_free(&ev); sbuf_free(&b); sbuf_free(&usz); sbuf_free(&psz);
    st_free(&s);
}

static void test_partial_update(void **state) {
    (void)state;
    struct stream s;
    st_init(&s);
    gtid_body(&s.body, 1);
    assert_int_equal(feed(&s, BL_GTID), BL_OK);
    table_map_jt(&s.body);
    assert_int_equal(feed(&s, BL_TABLE_MAP), BL_OK);
    sbuf_reset(&s.body);
    fx_u48(&s.body, 12); fx_u16(&s.body, 1); fx_u16(&s.body, 2);
    fx_lenenc(&s.body, 2); fx_u8(&s.body, 3); fx_u8(&s.body, 3);
    /* before: id=1, j={"a":1,"b":"xy"} */
    fx_u8(&s.body, 0);
    fx_u32(&s.body, 1);
    sbuf doc = SBUF_INIT;
    fx_hex(&doc, "00 0200 1700 1200 0100 1300 0100 050100 0c1400 6162 027879");
    fx_u32(&s.body, (uint32_t)doc.len);
    sbuf_add(&s.body, doc.data, doc.len);
    /* after: value options PARTIAL_JSON, partial bits 1, nulls, id=1, j = diffs */
    fx_lenenc(&s.body, 1);
    fx_u8(&s.body, 1);
    fx_u8(&s.body, 0);
    fx_u32(&s.body, 1);
    sbuf diffs = SBUF_INIT;
    /* REPLACE $.a UINT64 max: must not pass through a double */
    fx_u8(&diffs, 0); fx_lenenc(&diffs, 3); sbuf_adds(&diffs, "$.a");
    fx_lenenc(&diffs, 9); fx_hex(&diffs, "0a ffffffffffffffff");
    fx_u8(&diffs, 1); fx_lenenc(&diffs, 3); sbuf_adds(&diffs, "$.c");      /* INSERT $.c [7] */
    fx_lenenc(&diffs, 8); fx_hex(&diffs, "02 0100 0700 050700");
    fx_u8(&diffs, 2); fx_lenenc(&diffs, 3); sbuf_adds(&diffs, "$.b");      /* REMOVE $.b */
    fx_u32(&s.body, (uint32_t)diffs.len);
    sbuf_add(&s.body, diffs.data, diffs.len);
    assert_int_equal(feed(&s, BL_PARTIAL_UPDATE_ROWS), BL_OK);
    assert_non_null(strstr(s.rec.lines.data,
                           "update j.t {\"id\":1,\"j\":{\"a\":1,\"b\":\"xy\"}} {\"id\":1,\"j\":{\"a\":18446744073709551615,\"c\":[7]}}\n"));
    sbuf_free(&doc);
    sbuf_free(&diffs);
    st_free(&s);
}

/* MySQL serialization-library varlen unsigned (written independently of gtid.c) */
static void ser_u(sbuf *b, uint64_t v) {
    int n = 1;
    while (n < 8 && v >= (1ULL << (7 * n))) n++;
    uint64_t x = (v << n) | ((1ULL << (n - 1)) - 1);
    for (int i = 0; i < n; i++) fx_u8(b, (uint8_t)(x >> (8 * i)));
}

static void test_gtid_tagged_event_and_heartbeat_v2(void **state) {
    (void)state;
    struct stream s;
    st_init(&s);
    sbuf f = SBUF_INIT;
    ser_u(&f, 0); ser_u(&f, 0);                       /* flags */
    ser_u(&f, 1);
    for (int i = 0; i < 16; i++) ser_u(&f, UUID1[i]); /* uuid */
    ser_u(&f, 2); ser_u(&f, 77 << 1);                 /* gno (zigzag) */
    ser_u(&f, 3); ser_u(&f, 4); sbuf_adds(&f, "blue"); /* tag */
    ser_u(&f, 4); ser_u(&f, 0);
    sbuf_reset(&s.body);
    fx_u8(&s.body, 2);
    size_t total = 1 + 1 + 1 + f.len; /* version, size (1 byte), lnif (1 byte), fields */
    ser_u(&s.body, total);
    ser_u(&s.body, 3);
    sbuf_add(&s.body, f.data, f.len);
    assert_int_equal(feed(&s, BL_GTID_TAGGED), BL_OK);
    assert_string_equal(s.d.txn.gtid, "3e11fa47-71ca-11e1-9e33-c80aa9429562:blue:77");
    sbuf_reset(&s.body);
    fx_u32(&s.body, 1); fx_u32(&s.body, 0); fx_u8(&s.body, 1); fx_u16(&s.body, 0); fx_u16(&s.body, 0);
    sbuf_adds(&s.body, "j");
    fx_u8(&s.body, 0);
    sbuf_adds(&s.body, "CREATE TABLE x (a INT)");
    assert_int_equal(feed(&s, BL_QUERY), BL_OK);
    assert_string_equal(s.rec.last_exec, "3e11fa47-71ca-11e1-9e33-c80aa9429562:blue:77");
    assert_int_equal(s.rec.ddls, 1);
    /* HEARTBEAT_V2: 1 = file name, 2 = position, 0 = end */
    sbuf_reset(&s.body);
    fx_u8(&s.body, 1); fx_lenenc(&s.body, 13); sbuf_adds(&s.body, "binlog.000007");
    fx_u8(&s.body, 2); fx_lenenc(&s.body, 3); fx_u8(&s.body, 0xfc); fx_u16(&s.body, 1234);
    fx_u8(&s.body, 0);
    uint64_t before = s.d.cur.pos;
    size_t len = 19 + s.body.len + 4;
    fx_event(&s.ev, BL_HEARTBEAT_V2, 0, 0, 0, s.body.data, s.body.len, true);
    (void)len;
    assert_int_equal(bl_decode(&s.d, (const uint8_t *)s.ev.data, s.ev.len), BL_OK);
    assert_int_equal(s.rec.heartbeats, 1);
    assert_int_equal(s.d.hb_pos, 1234);
    assert_string_equal(s.d.hb_file, "binlog.000007");
    assert_int_equal(s.d.cur.pos, before);
    sbuf_free(&f);
    st_free(&s);
}

static void test_gtid_sets(void **state) {
    (void)state;
    bl_gtid_set *g = bl_gtid_new();
    char err[256];
    sbuf o = SBUF_INIT;
    assert_int_equal(bl_gtid_parse(g, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7, "
                                      "3e11fa47-71ca-11e1-9e33-c80aa9429562:Blue:3:4,"
                                      "00000000-0000-0000-0000-000000000001:6-9",
                                   err, sizeof err), BL_OK);
    bl_gtid_format(g, &o);
    assert_string_equal(o.data, "00000000-0000-0000-0000-000000000001:6-9,"
                                "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7:blue:3-4");
    /* adding 6 joins 1-5 and 7 */
    bl_gtid_add_mysql(g, UUID1, NULL, 6);
    sbuf_reset(&o);
    bl_gtid_format(g, &o);
    assert_non_null(strstr(o.data, "c80aa9429562:1-7:blue:3-4"));
    /* binary form round trip (tagged format) */
    sbuf bin = SBUF_INIT;
    bl_gtid_encode_mysql(g, &bin);
    assert_memory_equal(bin.data, "\x01\x03\x00\x00\x00\x00\x00\x01", 8);
    bl_gtid_set *h = bl_gtid_new();
    assert_int_equal(bl_gtid_decode_mysql(h, (const uint8_t *)bin.data, bin.len), BL_OK);
    sbuf o2 = SBUF_INIT;
    bl_gtid_format(h, &o2);
    assert_string_equal(o.data, o2.data);
    /* untagged binary form: n_sids 1, uuid, 1 interval [1, 6) */
    assert_int_equal(bl_gtid_parse(g, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", err, sizeof err), BL_OK);
    sbuf_reset(&bin);
    bl_gtid_encode_mysql(g, &bin);
    sbuf want = SBUF_INIT;
    fx_u64(&want, 1);
    sbuf_add(&want, UUID1, 16);
    fx_u64(&want, 1);
    fx_u64(&want, 1);
    fx_u64(&want, 6);
    assert_int_equal(bin.len, want.len);
    assert_memory_equal(bin.data, want.data, want.len);
    /* MariaDB lists */
    assert_int_equal(bl_gtid_parse(g, "1-2-5, 0-1-60", err, sizeof err), BL_OK);
    assert_int_equal(bl_gtid_flavor(g), BL_FLAVOR_MARIADB);
    bl_gtid_add_mariadb(g, 0, 3, 61);
    sbuf_reset(&o);
    bl_gtid_format(g, &o);
    assert_string_equal(o.data, "0-3-61,1-2-5");
    /* malformed */
    assert_int_equal(bl_gtid_parse(g, "0-1", err, sizeof err), BL_ERR);
    assert_int_equal(bl_gtid_parse(g, "zz:1-2", err, sizeof err), BL_ERR);
    assert_int_equal(bl_gtid_parse(g, "3e11fa47-71ca-11e1-9e33-c80aa9429562:5-1", err, sizeof err), BL_ERR);
    /* truncated binary sets */
    bl_gtid_encode_mysql(h, &bin);
    for (size_t cut = 0; cut < 40; cut++) {
        bl_gtid_clear(g);
        (void)bl_gtid_decode_mysql(g, (const uint8_t *)bin.data, cut);
    }
    bl_gtid_free(g);
    bl_gtid_free(h);
    sbuf_free(&o); sbuf_free(&o2); sbuf_free(&bin); sbuf_free(&want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_small),
        cmocka_unit_test(test_json_large),
        cmocka_unit_test(test_json_opaque),
        cmocka_unit_test(test_transaction_payload),
        cmocka_unit_test(test_partial_update),
        cmocka_unit_test(test_gtid_tagged_event_and_heartbeat_v2),
        cmocka_unit_test(test_gtid_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
