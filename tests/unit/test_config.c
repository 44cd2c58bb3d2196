/* Unit tests of the configuration parser (src/config.c): every error names
 * the file, the line and the key; defaults, quoting and environment secrets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sbuf.h"

static int load(struct ss_config *c, const char *text, char *err) {
    return config_load_string(c, "t.ini", text, err, CONFIG_ERR_LEN);
}

static void test_defaults_and_values(void **state) {
    (void)state;
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    int rc = load(&c,
                  "# comment\n"
                  "[source]\n"
                  "user = repl\n"
                  "password = \"p#ss \\\"w\"\n"
                  "port=3307\n"
                  "; another comment\n"
                  "[delivery]\n"
                  "batch_max = 1000\n"
                  "purge_strategy = purge_one\n"
                  "[search]\n"
                  "compress = no\n",
                  err);
    assert_int_equal(rc, 0);
    assert_string_equal(c.source.user, "repl");
    assert_string_equal(c.source.password, "p#ss \"w");
    assert_int_equal(c.source.port, 3307);
    assert_string_equal(c.source.host, "127.0.0.1");
    assert_int_equal(c.delivery.batch_max, 1000);
    assert_int_equal(c.delivery.high_watermark, 10000);
    assert_string_equal(c.delivery.purge_strategy, "purge_one");
    assert_false(c.search.compress);
    assert_true(c.search.tls_verify);
    assert_null(c.cluster.zookeeper);
    config_free(&c);
}

static void expect_error(const char *text, const char *needle) {
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    assert_int_equal(load(&c, text, err), -1);
    if (!strstr(err, needle)) fail_msg("error \"%s\" lacks \"%s\"", err, needle);
    config_free(&c);
}

static void test_errors_name_file_line_key(void **state) {
    (void)state;
    expect_error("[source]\nuser=a\nusre = b\n", "t.ini:3: unknown key \"usre\" in section [source]");
    expect_error("[sourse]\n", "t.ini:1: unknown section [sourse]");
    expect_error("[source]\nuser=a\nport = 70000\n", "t.ini:3: [source] port = \"70000\"");
    expect_error("[source]\nuser=a\nport = 12x\n", "t.ini:3: [source] port");
    expect_error("[source]\nport = 1\n", "required key [source] user is missing");
    expect_error("[source]\nuser=a\nuser=b\n", "t.ini:3: [source] user is set twice");
    expect_error("user=a\n", "t.ini:1: key \"user\" before any [section]");
    expect_error("[source]\nuser\n", "t.ini:2: expected \"key = value\"");
    expect_error("[source\n", "t.ini:1: malformed section header");
    expect_error("[source]\nuser=\"abc\n", "t.ini:2: [source] user: unterminated");
    expect_error("[source]\nuser=a\n[delivery]\npurge_strategy=sometimes\n",
                 "t.ini:4: [delivery] purge_strategy = \"sometimes\" is not one of");
    expect_error("[source]\nuser=a\n[search]\ncompress=maybe\n", "must be true or false");
    expect_error("[source]\nuser=a\n[delivery]\nbatch_min=10\nbatch_max=5\n",
                 "batch_min (10) is larger than batch_max (5)");
    expect_error("[source]\nuser=a\n[admin]\ntoken=short\n", "[admin] token is too short");
}

static void test_env_secrets(void **state) {
    (void)state;
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    setenv("SEARCHSYNC_SOURCE_PASSWORD", "from-env", 1);
    setenv("SEARCHSYNC_ADMIN_TOKEN", "0123456789abcdef0123456789abcdef", 1);
    assert_int_equal(load(&c, "[source]\nuser=a\npassword=from-file\n", err), 0);
    assert_string_equal(c.source.password, "from-env");
    assert_string_equal(c.admin.token, "0123456789abcdef0123456789abcdef");
    config_free(&c);
    unsetenv("SEARCHSYNC_SOURCE_PASSWORD");
    unsetenv("SEARCHSYNC_ADMIN_TOKEN");
}

static void test_missing_file(void **state) {
    (void)state;
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    assert_int_equal(config_load(&c, "/nonexistent/searchsync.ini", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/searchsync.ini: cannot open"));
    config_free(&c);
}

static void test_every_key_has_doc_and_valid_default(void **state) {
    (void)state;
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    /* a file setting every key to its default must load */
    sbuf t = SBUF_INIT;
    const char *sec = "";
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        assert_true(k->doc && *k->doc);
        if (strcmp(sec, k->section)) sbuf_printf(&t, "[%s]\n", sec = k->section);
        if (k->def) sbuf_printf(&t, "%s = %s\n", k->name, k->def);
        else if (k->required) sbuf_printf(&t, "%s = x\n", k->name);
    }
    assert_int_equal(load(&c, t.data, err), 0);
    config_free(&c);
    sbuf_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_values),
        cmocka_unit_test(test_errors_name_file_line_key),
        cmocka_unit_test(test_env_secrets),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_every_key_has_doc_and_valid_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
