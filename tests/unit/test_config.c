/* Unit tests of the configuration parser (src/config.c): every error names
 * the file, the line and the key; defaults, quoting and environment secrets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    expect_error("[source]\nuser=a\n[delivery]\nlinger_ms=1000\n",
                 "linger_ms (1000) is not below flush_interval_ms (1000)");
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

/* password_file, the one-way-to-authenticate rule, AWS signing's needs,
 * readable certificate files, no password in a message about a URL */
static void test_secured_keys(void **state) {
    (void)state;
    char path[] = "/tmp/test_config_pwXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "pw-from-file\nsecond line\n", 26), 26);
    close(fd);
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "", text[512];
    snprintf(text, sizeof text, "[source]\nuser=a\npassword_file=%s\n[search]\nuser=u\n"
             "password_file=%s\n", path, path);
    assert_int_equal(load(&c, text, err), 0);
    assert_string_equal(c.source.password, "pw-from-file");
    assert_string_equal(c.search.password, "pw-from-file");
    assert_string_equal(c.source.ssl_mode, "preferred");
    assert_null(c.metadata.ssl_mode);
    config_free(&c);
    setenv("SEARCHSYNC_SOURCE_PASSWORD", "from-env", 1);
    assert_int_equal(load(&c, text, err), 0);
    assert_string_equal(c.source.password, "from-env");
    config_free(&c);
    unsetenv("SEARCHSYNC_SOURCE_PASSWORD");
    snprintf(text, sizeof text, "[source]\nuser=a\npassword=x\npassword_file=%s\n", path);
    expect_error(text, "[source] sets both password and password_file");
    unlink(path);
    expect_error("[source]\nuser=a\npassword_file=/nonexistent/pw\n",
                 "[source] password_file: cannot read /nonexistent/pw");
    expect_error("[source]\nuser=a\nssl_ca=/nonexistent/ca.pem\n",
                 "[source] ssl_ca: cannot read /nonexistent/ca.pem");
    expect_error("[source]\nuser=a\nssl_mode=verify\n", "[source] ssl_mode = \"verify\" is not one of");
    expect_error("[source]\nuser=a\n[metadata]\nssl_ca=/etc/hostname\n",
                 "[metadata] ssl_ca/ssl_cert/ssl_key are set but ssl_mode is not");
    expect_error("[source]\nuser=a\n[search]\nuser=u\napi_key=k\n",
                 "[search] sets both user/password and api_key");
    expect_error("[source]\nuser=a\n[search]\nurls=https://x\nbearer_token=t\naws_sigv4=true\n",
                 "[search] sets both bearer_token and aws_sigv4");
    expect_error("[source]\nuser=a\n[search]\npassword=p\n", "[search] password is set without user");
    unsetenv("AWS_REGION");
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    expect_error("[source]\nuser=a\n[search]\nurls=https://x\naws_sigv4=true\n",
                 "[search] aws_sigv4 = true needs aws_region");
    expect_error("[source]\nuser=a\n[search]\nurls=http://x\naws_sigv4=true\naws_region=eu-west-1\n"
                 "aws_access_key_id=AKID\naws_secret_access_key=s\n",
                 "with aws_sigv4 the engine is an https:// endpoint");
    setenv("AWS_REGION", "eu-west-1", 1);
    setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    assert_int_equal(load(&c, "[source]\nuser=a\n[search]\nurls=https://x\naws_sigv4=true\n"
                              "aws_service=aoss\n", err), 0);
    assert_string_equal(c.search.aws_region, "eu-west-1");
    assert_string_equal(c.search.aws_secret_access_key, "secret");
    assert_string_equal(c.search.aws_service, "aoss");
    config_free(&c);
    unsetenv("AWS_REGION");
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    assert_int_equal(load(&c, "[source]\nuser=a\n[search]\nurls=htps://u:s3cret@h:9200/x\n", err), -1);
    assert_non_null(strstr(err, "\"htps://h:9200/x\" must start with"));
    assert_null(strstr(err, "s3cret"));
    config_free(&c);
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

/* [source] kind = kafka and [kafka]: brokers and topics required, the
 * canal offset parsed, [source] user optional, [kafka] without the kind refused */
static void test_kafka_keys(void **state) {
    (void)state;
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    assert_int_equal(load(&c, "[source]\nkind = kafka\n[kafka]\nbrokers = k1:9092,k2:9092\n"
                              "topics = a, b\nformat = debezium\ncanal_tz_offset = -03:30\n", err), 0);
    assert_true(config_kafka_source(&c));
    assert_null(c.source.user);
    assert_string_equal(c.kafka.brokers, "k1:9092,k2:9092");
    assert_string_equal(c.kafka.group, "searchsync");
    assert_string_equal(c.kafka.format, "debezium");
    int32_t off = 1;
    assert_int_equal(config_parse_tz_offset(c.kafka.canal_tz_offset, &off), 0);
    assert_int_equal(off, -(3 * 3600 + 30 * 60));
    config_free(&c);
    assert_int_equal(load(&c, "[source]\nkind = kafka\n[kafka]\nbrokers = k:1\ntopic_regex = cdc\\..*\n",
                          err), 0);
    config_free(&c);
    assert_int_equal(load(&c, "[source]\nuser = u\n", err), 0);
    assert_false(config_kafka_source(&c));
    config_free(&c);
    assert_int_equal(config_parse_tz_offset("+08:00", &off), 0);
    assert_int_equal(off, 8 * 3600);
    assert_int_equal(config_parse_tz_offset("UTC", &off), 0);
    assert_int_equal(off, 0);
    assert_int_equal(config_parse_tz_offset("8", &off), -1);
    assert_int_equal(config_parse_tz_offset("+8:00", &off), -1);
    assert_int_equal(config_parse_tz_offset("+15:00", &off), -1);
    expect_error("[source]\nkind = kafka\n[kafka]\ntopics = a\n", "needs [kafka] brokers");
    expect_error("[source]\nkind = kafka\n[kafka]\nbrokers = k:1\n", "needs [kafka] topics");
    expect_error("[source]\nkind = kafka\n[kafka]\nbrokers = k:1\ntopics = , ,\n",
                 "needs [kafka] topics");
    expect_error("[source]\nkind = kafka\n[kafka]\nbrokers = k:1\ntopics = a\ngroup = \"\"\n",
                 "[kafka] group is empty");
    expect_error("[source]\nkind = kafka\n[kafka]\nbrokers = k:1\ntopics = a\nformat = avro\n",
                 "[kafka] format = \"avro\" is not one of");
    expect_error("[source]\nkind = kafka\n[kafka]\nbrokers = k:1\ntopics = a\ncanal_tz_offset = 8\n",
                 "[kafka] canal_tz_offset = \"8\"");
    expect_error("[source]\nuser = u\n[kafka]\nbrokers = k:1\ntopics = a\n",
                 "[kafka] is set but [source] kind is binlog");
    expect_error("[source]\nkind = mq\n", "[source] kind = \"mq\" is not one of");
    expect_error("[source]\nhost = h\n", "required key [source] user is missing");
}

/* the scheduled check's keys: durations, times of day, refused with a message */
static void test_check_keys(void **state) {
    (void)state;
    assert_int_equal(90, config_parse_duration("90"));
    assert_int_equal(90, config_parse_duration("90s"));
    assert_int_equal(900, config_parse_duration("15m"));
    assert_int_equal(90000, config_parse_duration("25h"));
    assert_int_equal(604800, config_parse_duration("7d"));
    assert_int_equal(-1, config_parse_duration("5x"));
    assert_int_equal(-1, config_parse_duration("0"));
    assert_int_equal(-1, config_parse_duration("-3h"));
    assert_int_equal(-1, config_parse_duration("h"));
    assert_int_equal(-1, config_parse_duration("401d"));
    assert_int_equal(195, config_parse_hhmm("03:15"));
    assert_int_equal(1439, config_parse_hhmm("23:59"));
    assert_int_equal(-1, config_parse_hhmm("24:00"));
    assert_int_equal(-1, config_parse_hhmm("3:15"));
    assert_int_equal(-1, config_parse_hhmm("03:60"));
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    assert_int_equal(0, load(&c, "[source]\nuser=a\n[check]\nschedule = every 6h\nsince = all\n", err));
    assert_string_equal("every 6h", c.check.schedule);
    assert_true(c.check.repair); /* default */
    assert_int_equal(30, c.check.settle_s);
    config_free(&c);
    assert_int_equal(-1, load(&c, "[source]\nuser=a\n[check]\nschedule = 3am\n", err));
    assert_non_null(strstr(err, "[check] schedule = \"3am\": give a time of day, UTC, as HH:MM"));
    config_free(&c);
    assert_int_equal(-1, load(&c, "[source]\nuser=a\n[delayed]\nschedule = every\n", err));
    assert_non_null(strstr(err, "[delayed] schedule = \"every\""));
    config_free(&c);
    assert_int_equal(0, load(&c, "[source]\nuser=a\n[delivery]\nreplay_schedule = every 30m\n",
                             err));
    assert_string_equal("every 30m", c.delivery.replay_schedule);
    config_free(&c);
    assert_int_equal(-1, load(&c, "[source]\nuser=a\n[delivery]\nreplay_schedule = often\n", err));
    assert_non_null(strstr(err, "[delivery] replay_schedule = \"often\""));
    assert_non_null(strstr(err, "replay dead letters by hand"));
    config_free(&c);
    assert_int_equal(-1, load(&c, "[source]\nuser=a\n[check]\nsince = forever\n", err));
    assert_non_null(strstr(err, "[check] since = \"forever\""));
    config_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_values),
        cmocka_unit_test(test_errors_name_file_line_key),
        cmocka_unit_test(test_env_secrets),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_secured_keys),
        cmocka_unit_test(test_every_key_has_doc_and_valid_default),
        cmocka_unit_test(test_check_keys),
        cmocka_unit_test(test_kafka_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
