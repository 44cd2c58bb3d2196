/* Unit tests of the log line formats (src/log.c): text and JSON lines, the
 * JSON escaping of a message, and lines written through a log file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* 2026-11-22T10:00:00.123Z */
static const struct timespec TS = {.tv_sec = 1795341600, .tv_nsec = 123456789};

static char *line(bool json, bool stamp, int level, const char *area, const char *msg,
                  size_t len) {
    sbuf b = SBUF_INIT;
    log_format_line(&b, json, stamp, &TS, level, area, msg, len);
    char *s = strdup(b.data);
    sbuf_free(&b);
    return s;
}

static void test_text(void **state) {
    (void)state;
    char *s = line(false, true, LOG_WARN, "binlog", "resumed at f:4", 14);
    assert_string_equal(s, "2026-11-22T10:00:00.123Z WARN  [binlog] resumed at f:4\n");
    free(s);
    s = line(false, false, LOG_ERROR, "run", "x", 1);
    assert_string_equal(s, "ERROR [run] x\n");
    free(s);
}

static void test_json_keys(void **state) {
    (void)state;
    char *s = line(true, true, LOG_INFO, "run", "syncing 2 index config(s)", 25);
    assert_string_equal(s, "{\"ts\":\"2026-11-22T10:00:00.123Z\",\"level\":\"info\","
                           "\"area\":\"run\",\"msg\":\"syncing 2 index config(s)\"}\n");
    free(s);
    /* syslog stamps lines itself: no ts */
    s = line(true, false, LOG_DEBUG, "a", "m", 1);
    assert_string_equal(s, "{\"level\":\"debug\",\"area\":\"a\",\"msg\":\"m\"}\n");
    free(s);
}

static void test_json_escaping(void **state) {
    (void)state;
    /* quotes, backslash, newline, tab, CR, a control byte, a valid two-byte
     * UTF-8 letter, an invalid byte, a UTF-8 sequence cut short at the end
     * (what a message truncated to the buffer leaves) */
    const char msg[] = "say \"hi\" \\ path\nnext\tcol\rret \x01 caf\xc3\xa9 bad\xff cut\xe2\x82";
    char *s = line(true, false, LOG_ERROR, "ar\"ea", msg, sizeof msg - 1);
    assert_string_equal(s, "{\"level\":\"error\",\"area\":\"ar\\\"ea\",\"msg\":\"say \\\"hi\\\" \\\\ "
                           "path\\nnext\\tcol\\rret \\u0001 caf\xc3\xa9 bad\xef\xbf\xbd "
                           "cut\xef\xbf\xbd\xef\xbf\xbd\"}\n");
    /* one line: the only newline is the last byte */
    assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1);
    free(s);
    /* a NUL inside the message's length is escaped, not a cut */
    s = line(true, false, LOG_INFO, "a", "x\0y", 3);
    assert_string_equal(s, "{\"level\":\"info\",\"area\":\"a\",\"msg\":\"x\\u0000y\"}\n");
    free(s);
}

static void test_file_and_levels(void **state) {
    (void)state;
    char path[] = "/tmp/test_log_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[256];
    assert_int_equal(log_set_target(path, err, sizeof err), 0);
    log_set_format(true);
    log_set_level(LOG_INFO);
    log_debug("t", "not written");
    log_info("t", "tab\there %d", 42);
    /* a long message is cut, the line stays one JSON object */
    char big[6000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    log_warn("t", "%s", big);
    log_set_format(false);
    log_error("t", "plain");
    log_use_stderr();
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[8192];
    assert_non_null(fgets(buf, sizeof buf, f));
    assert_non_null(strstr(buf, "\"level\":\"info\",\"area\":\"t\",\"msg\":\"tab\\there 42\"}\n"));
    assert_non_null(fgets(buf, sizeof buf, f));
    assert_memory_equal(buf, "{\"ts\":\"", 7);
    assert_string_equal(buf + strlen(buf) - 3, "x\"}\n" + 1);
    assert_non_null(fgets(buf, sizeof buf, f));
    assert_non_null(strstr(buf, "ERROR [t] plain\n"));
    assert_null(fgets(buf, sizeof buf, f));
    fclose(f);
    unlink(path);
    /* a file that cannot be opened: an error naming it, nothing changed */
    assert_int_equal(log_set_target("/nonexistent-dir/x.log", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-dir/x.log"));
    assert_false(log_is_syslog());
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_json_keys),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_file_and_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
