/* Unit tests of a Kafka source's client settings: the [kafka] security keys
 * as src/config.c checks them together, and as src/kafka_conf.c hands them
 * and the properties of client_properties to librdkafka (what searchsync
 * sets itself refused, naming the key to use; a secret never in a
 * message). The brokers' side is tests/integration/t_kafka_tail.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "kafka_conf.h"

#define BASE "[source]\nkind = kafka\n[kafka]\nbrokers = k:9093\ntopics = a\n"

static void expect_error(const char *text, const char *want) {
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    assert_int_equal(config_load_string(&c, "t.ini", text, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("error \"%s\" lacks \"%s\"", err, want);
    config_free(&c);
}

/* what librdkafka holds for key in conf */
static const char *got(rd_kafka_conf_t *conf, const char *key) {
    static char v[512];
    size_t n = sizeof v;
    if (rd_kafka_conf_get(conf, key, v, &n) != RD_KAFKA_CONF_OK) return "(unknown)";
    return v;
}

static void keys_checked_together(void **state) {
    (void)state;
    expect_error(BASE "sasl_mechanism = PLAIN\nsasl_username = u\nsasl_password = p\n",
                 "security_protocol = plaintext sends no credentials");
    expect_error(BASE "security_protocol = sasl_ssl\nsasl_username = u\nsasl_password = p\n",
                 "without sasl_mechanism");
    expect_error(BASE "security_protocol = sasl_ssl\n", "needs sasl_mechanism");
    expect_error(BASE "security_protocol = sasl_ssl\nsasl_mechanism = SCRAM-SHA-512\n"
                      "sasl_username = u\n", "needs sasl_username and sasl_password");
    expect_error(BASE "security_protocol = sasl_plaintext\nssl_ca = /etc/hostname\n"
                      "sasl_mechanism = PLAIN\nsasl_username = u\nsasl_password = p\n",
                 "uses no TLS");
    expect_error(BASE "security_protocol = ssl\nssl_cert = /etc/hostname\n",
                 "ssl_cert and ssl_key go together");
    expect_error(BASE "security_protocol = ssl\nssl_ca = /nonexistent/ca.pem\n",
                 "[kafka] ssl_ca: cannot read /nonexistent/ca.pem");
    expect_error(BASE "security_protocol = tls\n", "is not one of plaintext|ssl");
    expect_error(BASE "security_protocol = sasl_ssl\nsasl_mechanism = scram\n",
                 "sasl_mechanism = \"scram\" is not one of");
    expect_error(BASE "security_protocol = sasl_ssl\nsasl_mechanism = PLAIN\nsasl_username = u\n"
                      "sasl_password = p\nsasl_password_file = /etc/hostname\n",
                 "sets both sasl_password and sasl_password_file");
}

static void settings_reach_librdkafka(void **state) {
    (void)state;
    char pw[] = "/tmp/searchsync-test-kpw.XXXXXX";
    int fd = mkstemp(pw);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cret\nignored\n", 15), 15);
    close(fd);
    char text[1024];
    snprintf(text, sizeof text, BASE "security_protocol = sasl_ssl\nsasl_mechanism = "
             "SCRAM-SHA-256\nsasl_username = ss\nsasl_password_file = %s\n"
             "ssl_ca = /etc/hostname\n", pw);
    struct ss_config c;
    char err[CONFIG_ERR_LEN] = "";
    assert_int_equal(config_load_string(&c, "t.ini", text, err, sizeof err), 0);
    assert_string_equal(c.kafka.sasl_password, "s3cret");
    rd_kafka_conf_t *conf = kafka_conf_new(&c, "t", err, sizeof err);
    assert_non_null(conf);
    assert_string_equal(got(conf, "security.protocol"), "sasl_ssl");
    assert_string_equal(got(conf, "sasl.mechanisms"), "SCRAM-SHA-256");
    assert_string_equal(got(conf, "sasl.username"), "ss");
    assert_string_equal(got(conf, "ssl.ca.location"), "/etc/hostname");
    rd_kafka_conf_destroy(conf);
    config_free(&c);

    /* the environment's password wins over the file */
    setenv("SEARCHSYNC_KAFKA_PASSWORD", "from-env", 1);
    assert_int_equal(config_load_string(&c, "t.ini", text, err, sizeof err), 0);
    assert_string_equal(c.kafka.sasl_password, "from-env");
    unsetenv("SEARCHSYNC_KAFKA_PASSWORD");
    config_free(&c);
    unlink(pw);

    /* with nothing said: plaintext, no mechanism asked for */
    assert_int_equal(config_load_string(&c, "t.ini", BASE, err, sizeof err), 0);
    conf = kafka_conf_new(&c, "t", err, sizeof err);
    assert_non_null(conf);
    assert_string_equal(got(conf, "security.protocol"), "plaintext");
    rd_kafka_conf_destroy(conf);
    config_free(&c);
}

/* client_properties with LINES: kafka_conf_new's NULL or conf, err */
static rd_kafka_conf_t *with_properties(const char *extra, const char *lines, char *err,
                                        size_t errlen, char *path) {
    strcpy(path, "/tmp/searchsync-test-kprops.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, lines, strlen(lines)), (ssize_t)strlen(lines));
    close(fd);
    char text[1024];
    snprintf(text, sizeof text, BASE "%sclient_properties = %s\n", extra, path);
    struct ss_config c;
    assert_int_equal(config_load_string(&c, "t.ini", text, err, errlen), 0);
    rd_kafka_conf_t *conf = kafka_conf_new(&c, "t", err, errlen);
    config_free(&c);
    unlink(path);
    return conf;
}

static void client_properties(void **state) {
    (void)state;
    char err[CONFIG_ERR_LEN], path[64];
    rd_kafka_conf_t *conf = with_properties(
        "", "# a comment\n! another\n\nfetch.wait.max.ms = 150\nclient.id: mine\n", err,
        sizeof err, path);
    assert_non_null(conf);
    assert_string_equal(got(conf, "fetch.wait.max.ms"), "150");
    assert_string_equal(got(conf, "client.id"), "mine");
    rd_kafka_conf_destroy(conf);

    /* another mechanism, all from the file */
    conf = with_properties("security_protocol = sasl_ssl\n",
                           "sasl.mechanisms = OAUTHBEARER\nsasl.oauthbearer.config = principal=ss\n",
                           err, sizeof err, path);
    assert_non_null(conf);
    assert_string_equal(got(conf, "sasl.mechanisms"), "OAUTHBEARER");
    rd_kafka_conf_destroy(conf);
    assert_null(with_properties("security_protocol = sasl_ssl\n", "fetch.wait.max.ms = 1\n",
                                err, sizeof err, path));
    assert_non_null(strstr(err, "needs [kafka] sasl_mechanism, or sasl.mechanisms"));

    const char *const refused[][2] = {
        {"group.id = g\n", "group.id is set by [kafka] group"},
        {"bootstrap.servers=x:1\n", "bootstrap.servers is set by [kafka] brokers"},
        {"sasl.password = hunter2\n", "sasl.password is set by [kafka] sasl_password"},
        {"ssl.ca.location = /x\n", "ssl.ca.location is set by [kafka] ssl_ca"},
        {"enable.auto.commit = true\n", "enable.auto.commit is set by searchsync itself"},
        {"auto.offset.reset = earliest\n", "auto.offset.reset is set by [source] start"},
        {"\n\nno.such.property = 1\n", ":3: librdkafka setting no.such.property = 1"},
        {"just a line\n", ":1: expected \"name = value\""},
        {"ssl.key.password = \n", "ssl.key.password = (not shown)"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        err[0] = '\0';
        conf = with_properties("", refused[i][0], err, sizeof err, path);
        if (conf) {
            rd_kafka_conf_destroy(conf);
            if (strstr(refused[i][0], "ssl.key.password")) continue; /* empty is accepted */
            fail_msg("\"%s\" was taken", refused[i][0]);
        }
        if (!strstr(err, refused[i][1])) fail_msg("error \"%s\" lacks \"%s\"", err, refused[i][1]);
        assert_null(strstr(err, "hunter2"));
        assert_non_null(strstr(err, path));
    }
    /* a mechanism from [kafka]: the file may not name another */
    assert_null(with_properties("security_protocol = sasl_ssl\nsasl_mechanism = PLAIN\n"
                                "sasl_username = u\nsasl_password = p\n",
                                "sasl.mechanisms = GSSAPI\n", err, sizeof err, path));
    assert_non_null(strstr(err, "sasl.mechanisms is set by [kafka] sasl_mechanism"));
}

/* a value that may be a secret is not in kafka_conf_set's message */
static void secrets_not_shown(void **state) {
    (void)state;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char err[512] = "";
    assert_int_equal(kafka_conf_set(conf, "sasl.password.bogus", "hunter2", err, sizeof err), -1);
    assert_null(strstr(err, "hunter2"));
    assert_non_null(strstr(err, "sasl.password.bogus = (not shown)"));
    assert_int_equal(kafka_conf_set(conf, "fetch.wait.max.ms", "x", err, sizeof err), -1);
    assert_non_null(strstr(err, "fetch.wait.max.ms = x"));
    rd_kafka_conf_destroy(conf);
    assert_false(kafka_security_error(NULL, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_checked_together),
        cmocka_unit_test(settings_reach_librdkafka),
        cmocka_unit_test(client_properties),
        cmocka_unit_test(secrets_not_shown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
