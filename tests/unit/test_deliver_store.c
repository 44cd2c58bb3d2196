/* test_deliver_store: the checkpoint file is written atomically and a torn or
 * corrupt one is refused with a clear error (never a silent wrong resume). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deliver/store.h"

static char dir[256];

static int setup(void **s) {
    (void)s;
    snprintf(dir, sizeof dir, "%s/ss-store-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    return 0;
}
static int teardown(void **s) {
    (void)s;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void t_roundtrip(void **s) {
    (void)s;
    char path[512], pos[256], err[512];
    uint64_t seq = 0;
    snprintf(path, sizeof path, "%s/ckpt", dir);
    assert_int_equal(checkpoint_file_load(path, pos, sizeof pos, &seq, err, sizeof err), 1);
    assert_int_equal(checkpoint_file_save(path, "mysql-bin.000003:4711 gtid=0-1-99", 17, err,
                                          sizeof err), 0);
    assert_int_equal(checkpoint_file_save(path, "mysql-bin.000003:9000", 18, err, sizeof err), 0);
    assert_int_equal(checkpoint_file_load(path, pos, sizeof pos, &seq, err, sizeof err), 0);
    assert_string_equal(pos, "mysql-bin.000003:9000");
    assert_int_equal(seq, 18);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(checkpoint_file_save(path, "a\nb", 1, err, sizeof err), -1);
    /* the callback form */
    assert_int_equal(checkpoint_file_cb(path, "p2", 19), 0);
    assert_int_equal(checkpoint_file_load(path, pos, sizeof pos, &seq, err, sizeof err), 0);
    assert_string_equal(pos, "p2");
}

static void t_corrupt(void **s) {
    (void)s;
    char path[512], pos[256], err[512];
    uint64_t seq;
    snprintf(path, sizeof path, "%s/ckpt", dir);
    assert_int_equal(checkpoint_file_save(path, "mysql-bin.000001:1234", 5, err, sizeof err), 0);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    /* every single flipped byte is detected */
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c == '\n') continue;
        fseek(f, (long)i, SEEK_SET);
        fputc(c ^ 0x01, f);
        fflush(f);
        int rc = checkpoint_file_load(path, pos, sizeof pos, &seq, err, sizeof err);
        if (rc != -1) fail_msg("flipped byte %zu not detected", i);
        fseek(f, (long)i, SEEK_SET);
        fputc(c, f);
        fflush(f);
    }
    fclose(f);
    assert_int_equal(checkpoint_file_load(path, pos, sizeof pos, &seq, err, sizeof err), 0);
    /* torn (truncated) files are refused too */
    for (size_t cut = 0; cut + 1 < n; cut++) {
        assert_int_equal(truncate(path, (off_t)cut), 0);
        assert_int_equal(checkpoint_file_load(path, pos, sizeof pos, &seq, err, sizeof err), -1);
        assert_true(strlen(err) > 0);
        f = fopen(path, "wb");
        fwrite(buf, 1, n, f);
        fclose(f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(t_corrupt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
