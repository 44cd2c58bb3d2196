/* test_source_ini: the configuration of a source added at run time
 * (sync/ops/ops_source_ini.c), derived from the adder's file: loaded back
 * with config_load it is source `west` with the adder's metadata schema
 * (written out even where the adder took it from its own [source]), engine,
 * mapping and reading keys; its password comes from NAME.password only; a
 * secret the adder had from its environment is carried; [kafka], the
 * adder's server and socket are gone; both files are mode 0600; and the
 * admin port picked is one that can be bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sbuf.h"
#include "sync/ops/ops_sources.h"

static char dir[] = "/tmp/test_source_ini.XXXXXX";

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    sbuf b = SBUF_INIT;
    assert_int_equal(0, sbuf_read_fp(&b, f));
    fclose(f);
    return sbuf_detach(&b);
}

static void test_derived(void **state) {
    (void)state;
    char adder[300], err[CONFIG_ERR_LEN];
    snprintf(adder, sizeof adder, "%s/east.ini", dir);
    sbuf text = SBUF_INIT;
    /* [metadata] names only its database: its server and user are [source]'s */
    /* a Kafka source: a source added so reads a binlog, [kafka] is dropped */
    sbuf_printf(&text, "[source]\nkind = kafka\nname = east\nmapping = shop\nhost = db-east\nport = 3307\n"
                       "user = repl\npassword = \"east#secret\"\nserver_id = 11\nstart = now\n"
                       "heartbeat_ms = 700\ndatabases = shop\n"
                       "[metadata]\ndatabase = ss_meta\n"
                       "[search]\nurls = http://engine:9200\n"
                       "[kafka]\nbrokers = k:9092\ntopics = cdc.orders\ngroup = g1\n"
                       "[admin]\nlisten = 127.0.0.1:18089\nsources_dir = %s\n"
                       "[cluster]\nnode_id = n1\n"
                       "[log]\nfile = /var/log/searchsync/east.log\n", dir);
    write_text(adder, text.data);
    sbuf_free(&text);
    struct ss_config cfg;
    if (config_load(&cfg, adder, err, sizeof err) != 0) fail_msg("the adder's file: %s", err);
    setenv("SEARCHSYNC_SEARCH_API_KEY", "key\"with\\quotes", 1);
    struct source_spec s = {.name = "west", .host = "db-west", .port = 3308, .user = "repl_w",
                            .password = "west pass#1", .ssl_mode = "required"};
    char path[1100];
    assert_int_equal(0, ops_source_ini_write(&cfg, &s, "shop", 424242, "127.0.0.1:18090", path,
                                             sizeof path, err, sizeof err));
    unsetenv("SEARCHSYNC_SEARCH_API_KEY");
    char want[400];
    snprintf(want, sizeof want, "%s/west.ini", dir);
    assert_string_equal(want, path);
    struct stat st;
    assert_int_equal(0, stat(path, &st));
    assert_int_equal(0600, st.st_mode & 0777);
    snprintf(want, sizeof want, "%s/west.password", dir);
    assert_int_equal(0, stat(want, &st));
    assert_int_equal(0600, st.st_mode & 0777);

    struct ss_config w;
    if (config_load(&w, path, err, sizeof err) != 0) fail_msg("the derived file: %s", err);
    assert_string_equal("west", w.source.name);
    assert_string_equal("shop", w.source.mapping);
    assert_string_equal("db-west", w.source.host);
    assert_int_equal(3308, w.source.port);
    assert_string_equal("repl_w", w.source.user);
    assert_string_equal("west pass#1", w.source.password); /* read from west.password */
    assert_string_equal("required", w.source.ssl_mode);
    assert_int_equal(424242, w.source.server_id);
    assert_int_equal(700, w.source.heartbeat_ms); /* the adder's reading keys kept */
    assert_null(w.source.databases);              /* east's databases are not west's */
    /* the metadata schema where the adder has it: east's server and user */
    assert_string_equal("db-east", w.metadata.host);
    assert_int_equal(3307, w.metadata.port);
    assert_string_equal("repl", w.metadata.user);
    assert_string_equal("east#secret", w.metadata.password);
    assert_string_equal("ss_meta", w.metadata.database);
    assert_string_equal("http://engine:9200", w.search.urls);
    assert_string_equal("key\"with\\quotes", w.search.api_key); /* from the adder's env */
    assert_null(w.kafka.brokers);
    assert_false(config_kafka_source(&w));
    assert_string_equal("127.0.0.1:18090", w.admin.listen);
    assert_string_equal("n1-west", w.cluster.node_id);
    assert_string_equal("/var/log/searchsync/west.log", w.log.file);
    /* the password is in west.password alone */
    char *ini = read_text(path);
    assert_null(strstr(ini, "west pass#1"));
    free(ini);
    config_free(&w);

    /* no admin server: listen empty */
    struct source_spec n = s;
    n.name = "north";
    assert_int_equal(0, ops_source_ini_write(&cfg, &n, "shop", 7, "", path, sizeof path, err,
                                             sizeof err));
    assert_int_equal(0, config_load(&w, path, err, sizeof err));
    assert_true(!w.admin.listen || !*w.admin.listen);
    config_free(&w);
    assert_int_equal(0, ops_source_files_remove(&cfg, "north", err, sizeof err));
    assert_int_equal(-1, access(path, F_OK));
    config_free(&cfg);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_derived)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
