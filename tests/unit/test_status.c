/* Unit tests of the pure part of sync/status/status.c: whether the binlog between a
 * checkpoint and the binlog's end holds only checkpoint writes (the UPDATE of
 * <metadata>.offsets each save is, when the metadata lives on the source).
 * The listings are SHOW BINLOG EVENTS rows as MariaDB 10.11 and MySQL 8.0
 * print them. And the status of servers all down (nothing asked): the
 * object still says what is down. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "config.h"
#include "sbuf.h"
#include "sync/status/status.h"

#define N(a) (sizeof(a) / sizeof *(a))

/* one save on MariaDB, from 2823635 to 2824134 */
static const struct status_binlog_event mariadb_save[] = {
    {"Gtid", 2823677, "BEGIN GTID 0-1-2547"},
    {"Annotate_rows", 2823870,
     "INSERT INTO offsets (source, position, txn_seq) VALUES ('prof','mysql-bin.000001:2823635',"
     "1742) ON DUPLICATE KEY UPDATE position=VALUES(position), txn_seq=VALUES(txn_seq)"},
    {"Table_map", 2823975, "table_id: 245 (pmeta.offsets)"},
    {"Update_rows_v1", 2824103, "table_id: 245 flags: STMT_END_F"},
    {"Xid", 2824134, "COMMIT /* xid=47099 */"},
};

static void test_mariadb_save(void **state) {
    (void)state;
    assert_true(status_only_checkpoint_writes(mariadb_save, N(mariadb_save), "pmeta", 2824134));
    /* another metadata schema's offsets: a change of some other table */
    assert_false(status_only_checkpoint_writes(mariadb_save, N(mariadb_save), "meta", 2824134));
    assert_false(status_only_checkpoint_writes(mariadb_save, N(mariadb_save), "xpmeta", 2824134));
    /* the end lies past the listing, or inside the transaction */
    assert_false(status_only_checkpoint_writes(mariadb_save, N(mariadb_save), "pmeta", 2824200));
    assert_false(status_only_checkpoint_writes(mariadb_save, N(mariadb_save), "pmeta", 2823975));
    assert_false(status_only_checkpoint_writes(mariadb_save, 4, "pmeta", 2824134));
    assert_false(status_only_checkpoint_writes(mariadb_save, 0, "pmeta", 2824134));
    assert_false(status_only_checkpoint_writes(mariadb_save, N(mariadb_save), NULL, 2824134));
}

/* a save, then a product changed: behind by a real change */
static void test_other_table_after(void **state) {
    (void)state;
    const struct status_binlog_event ev[] = {
        {"Gtid", 100, "BEGIN GTID 0-1-10"},
        {"Table_map", 150, "table_id: 245 (pmeta.offsets)"},
        {"Update_rows_v1", 200, "table_id: 245 flags: STMT_END_F"},
        {"Xid", 231, "COMMIT /* xid=1 */"},
        {"Gtid", 273, "BEGIN GTID 0-1-11"},
        {"Table_map", 330, "table_id: 31 (shop.products)"},
        {"Update_rows_v1", 500, "table_id: 31 flags: STMT_END_F"},
        {"Xid", 531, "COMMIT /* xid=2 */"},
    };
    assert_true(status_only_checkpoint_writes(ev, N(ev), "pmeta", 231));
    assert_false(status_only_checkpoint_writes(ev, N(ev), "pmeta", 531));
}

/* a save, then the daemon's node state at its stop: bookkeeping only; the
 * node state of another schema is not */
static void test_node_state_after(void **state) {
    (void)state;
    const struct status_binlog_event ev[] = {
        {"Gtid", 100, "BEGIN GTID 0-1-10"},
        {"Table_map", 150, "table_id: 245 (pmeta.offsets)"},
        {"Update_rows_v1", 200, "table_id: 245 flags: STMT_END_F"},
        {"Xid", 231, "COMMIT /* xid=1 */"},
        {"Gtid", 273, "BEGIN GTID 0-1-11"},
        {"Table_map", 330, "table_id: 246 (pmeta.node_states)"},
        {"Update_rows_v1", 500, "table_id: 246 flags: STMT_END_F"},
        {"Xid", 531, "COMMIT /* xid=2 */"},
    };
    assert_true(status_only_checkpoint_writes(ev, N(ev), "pmeta", 531));
    /* another schema's node_states after this schema's save: a change */
    const struct status_binlog_event other[] = {
        {"Gtid", 100, "BEGIN GTID 0-1-10"},
        {"Table_map", 150, "table_id: 245 (pmeta.offsets)"},
        {"Update_rows_v1", 200, "table_id: 245 flags: STMT_END_F"},
        {"Xid", 231, "COMMIT /* xid=1 */"},
        {"Gtid", 273, "BEGIN GTID 0-1-11"},
        {"Table_map", 330, "table_id: 246 (other.node_states)"},
        {"Update_rows_v1", 500, "table_id: 246 flags: STMT_END_F"},
        {"Xid", 531, "COMMIT /* xid=2 */"},
    };
    assert_false(status_only_checkpoint_writes(other, N(other), "pmeta", 531));
}

/* one transaction writing offsets and another table: not only a save */
static void test_mixed_transaction(void **state) {
    (void)state;
    const struct status_binlog_event ev[] = {
        {"Gtid", 100, "BEGIN GTID 0-1-10"},
        {"Table_map", 150, "table_id: 245 (pmeta.offsets)"},
        {"Table_map", 180, "table_id: 31 (shop.products)"},
        {"Update_rows_v1", 200, "table_id: 245"},
        {"Update_rows_v1", 220, "table_id: 31 flags: STMT_END_F"},
        {"Xid", 251, "COMMIT /* xid=1 */"},
    };
    assert_false(status_only_checkpoint_writes(ev, N(ev), "pmeta", 251));
}

/* DDL, deletes, empty transactions and rotations are changes to read */
static void test_other_events(void **state) {
    (void)state;
    const struct status_binlog_event ddl[] = {
        {"Gtid", 100, "GTID 0-1-12"},
        {"Query", 200, "use `pmeta`; ALTER TABLE offsets ADD COLUMN x INT"},
    };
    assert_false(status_only_checkpoint_writes(ddl, N(ddl), "pmeta", 200));
    const struct status_binlog_event del[] = {
        {"Gtid", 100, "BEGIN GTID 0-1-13"},
        {"Table_map", 150, "table_id: 245 (pmeta.offsets)"},
        {"Delete_rows_v1", 200, "table_id: 245 flags: STMT_END_F"},
        {"Xid", 231, "COMMIT /* xid=3 */"},
    };
    assert_false(status_only_checkpoint_writes(del, N(del), "pmeta", 231));
    const struct status_binlog_event empty[] = {
        {"Gtid", 100, "BEGIN GTID 0-1-14"},
        {"Xid", 131, "COMMIT /* xid=4 */"},
    };
    assert_false(status_only_checkpoint_writes(empty, N(empty), "pmeta", 131));
    const struct status_binlog_event rotate[] = {
        {"Rotate", 150, "mysql-bin.000002;pos=4"},
    };
    assert_false(status_only_checkpoint_writes(rotate, N(rotate), "pmeta", 150));
    /* rows before any transaction start */
    const struct status_binlog_event bare[] = {
        {"Table_map", 150, "table_id: 245 (pmeta.offsets)"},
        {"Update_rows_v1", 200, "table_id: 245 flags: STMT_END_F"},
        {"Xid", 231, "COMMIT /* xid=5 */"},
    };
    assert_false(status_only_checkpoint_writes(bare, N(bare), "pmeta", 231));
}

/* MySQL 8.0: Gtid (or Anonymous_Gtid), Query BEGIN, Rows_query with
 * binlog_rows_query_log_events, Update_rows, Xid; two daemons' saves */
static void test_mysql_saves(void **state) {
    (void)state;
    const struct status_binlog_event ev[] = {
        {"Anonymous_Gtid", 236, "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'"},
        {"Query", 320, "BEGIN"},
        {"Rows_query", 420, "# INSERT INTO offsets (source, position, txn_seq) VALUES ..."},
        {"Table_map", 490, "table_id: 92 (searchsync.offsets)"},
        {"Update_rows", 600, "table_id: 92 flags: STMT_END_F"},
        {"Xid", 631, "COMMIT /* xid=77 */"},
        {"Gtid", 710, "SET @@SESSION.GTID_NEXT= '3e11fa47-71ca-11e1-9e33-c80aa9429562:23'"},
        {"Query", 790, "BEGIN"},
        {"Table_map", 860, "table_id: 92 (searchsync.offsets)"},
        {"Write_rows", 960, "table_id: 92 flags: STMT_END_F"},
        {"Xid", 991, "COMMIT /* xid=78 */"},
    };
    assert_true(status_only_checkpoint_writes(ev, N(ev), "searchsync", 631));
    assert_true(status_only_checkpoint_writes(ev, N(ev), "searchsync", 991));
    assert_false(status_only_checkpoint_writes(ev, N(ev), "searchsync", 790));
}

/* the metadata server, the source and the engine all down: the object is
 * still there, each server named in errors, nothing it holds claimed */
static void test_all_down(void **state) {
    (void)state;
    struct ss_config cfg;
    char err[512];
    assert_int_equal(config_load_string(&cfg, "t.ini",
                                        "[source]\nname = shop\nhost = 127.0.0.1\nport = 3306\nuser = repl\n"
                                        "[metadata]\nhost = 127.0.0.9\nport = 3307\n"
                                        "[search]\nurls = http://127.0.0.1:9200\n",
                                        err, sizeof err),
                     0);
    struct ss_status st;
    status_collect(&cfg, NULL, "cannot connect to the metadata server", NULL,
                   "cannot connect to the source server", NULL, "engine down", &st);
    assert_false(st.ok);
    assert_false(st.meta_reached);
    assert_false(st.source_reached);
    assert_null(st.checkpoint);
    assert_int_equal(st.nerrors, 2);
    assert_string_equal(st.errors[0], "metadata: cannot connect to the metadata server");
    assert_string_equal(st.errors[1], "source: cannot connect to the source server");
    sbuf out = SBUF_INIT;
    status_json(&st, &out);
    assert_non_null(strstr(out.data, "\"metadata\":{\"host\":\"127.0.0.9\",\"port\":3307,"
                                     "\"database\":\"searchsync\",\"reachable\":false,"
                                     "\"error\":\"cannot connect to the metadata server\"}"));
    assert_non_null(strstr(out.data, "\"checkpoint\":null"));
    assert_null(strstr(out.data, "\"start\"")); /* unknown, not absent: no start said */
    assert_non_null(strstr(out.data, "\"indices\":[]"));
    sbuf_free(&out);
    status_free(&st);
    config_free(&cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mariadb_save),
        cmocka_unit_test(test_other_table_after),
        cmocka_unit_test(test_node_state_after),
        cmocka_unit_test(test_mixed_transaction),
        cmocka_unit_test(test_other_events),
        cmocka_unit_test(test_mysql_saves),
        cmocka_unit_test(test_all_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
