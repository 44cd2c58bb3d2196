/* test_split: how a rebalance spreads a reindex's unfinished jobs over the
 * live nodes (rebalance/split.h): even counts for equal weights, the rows
 * left weighed, previous owners kept where the balance allows (a node's
 * death moves only its jobs, a join as few as even out), each kind
 * of job (reindex, delayed run) balanced on its own; and the bucket a
 * delayed run stages a document in (sync/delayed/delayed.h), which the
 * server computed before: the expected values are MariaDB 10.11's own
 * MOD(CAST(k AS UNSIGNED), n) and MOD(CRC32(k), n). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "rebalance/split.h"
#include "sync/delayed/delayed.h"

static void count_per_node(const struct split_job *j, size_t n, size_t *per, size_t nn) {
    memset(per, 0, nn * sizeof *per);
    for (size_t i = 0; i < n; i++) {
        assert_true(j[i].node < nn);
        per[j[i].node]++;
    }
}

static void test_equal_weights_even(void **state) {
    (void)state;
    const char *nodes[] = {"a", "b", "c"};
    struct split_job j[7];
    for (size_t i = 0; i < 7; i++) j[i] = (struct split_job){.weight = 100};
    size_t per[3];
    split_jobs(j, 7, nodes, 3);
    count_per_node(j, 7, per, 3);
    /* 7 over 3: 3, 2, 2 in some order */
    size_t max = 0, min = 7;
    for (int k = 0; k < 3; k++) max = per[k] > max ? per[k] : max, min = per[k] < min ? per[k] : min;
    assert_int_equal(3, max);
    assert_int_equal(2, min);
    /* 4 jobs over 2 nodes: 2 each */
    split_jobs(j, 4, nodes, 2);
    count_per_node(j, 4, per, 2);
    assert_int_equal(2, per[0]);
    assert_int_equal(2, per[1]);
}

static void test_weights(void **state) {
    (void)state;
    const char *nodes[] = {"a", "b"};
    /* a job nearly done weighs little: the heavy one alone on one node */
    struct split_job j[4] = {{.weight = 1000}, {.weight = 10}, {.weight = 400}, {.weight = 500}};
    split_jobs(j, 4, nodes, 2);
    assert_int_not_equal(j[0].node, j[2].node);
    assert_int_not_equal(j[0].node, j[3].node);
    assert_int_equal(j[2].node, j[3].node);
    /* a weight of 0 still counts as one row */
    struct split_job z[2] = {{.weight = 0}, {.weight = 0}};
    split_jobs(z, 2, nodes, 2);
    assert_int_not_equal(z[0].node, z[1].node);
}

static void test_previous_owner_kept(void **state) {
    (void)state;
    /* b and c ran two jobs each; a joins: one job moves to a, the others
     * stay where they were */
    const char *nodes[] = {"a", "b", "c"};
    struct split_job j[4] = {{.weight = 50, .previous = "b"}, {.weight = 50, .previous = "b"},
                             {.weight = 50, .previous = "c"}, {.weight = 50, .previous = "c"}};
    split_jobs(j, 4, nodes, 3);
    size_t moved = 0;
    for (int i = 0; i < 4; i++) moved += strcmp(nodes[j[i].node], j[i].previous) != 0;
    assert_int_equal(1, moved);
    /* c died: its jobs go to the survivors, b keeps its own */
    const char *left[] = {"a", "b"};
    struct split_job k[3] = {{.weight = 50, .previous = "b"}, {.weight = 50, .previous = "c"},
                             {.weight = 50, .previous = "c"}};
    split_jobs(k, 3, left, 2);
    assert_string_equal("b", left[k[0].node]);
}

/* node-2 of three dies with two jobs each; the survivors
 * have read more of theirs (lighter) than the dead node had (heavier).
 * Only node-2's jobs move, one to each survivor. (The split that went
 * heaviest first over all jobs moved 13 and 15-18.) */
static void test_node_death_moves_only_its_jobs(void **state) {
    (void)state;
    const char *left[] = {"node-1", "node-3"};
    /* ids 13..18 in order: owners 1, 2, 3, 1, 2, 3 */
    struct split_job j[6] = {{.weight = 1500, .previous = "node-1"},
                             {.weight = 3800, .previous = "node-2"},
                             {.weight = 1800, .previous = "node-3"},
                             {.weight = 2200, .previous = "node-1"},
                             {.weight = 3900, .previous = "node-2"},
                             {.weight = 2000, .previous = "node-3"}};
    split_jobs(j, 6, left, 2);
    assert_string_equal("node-1", left[j[0].node]);
    assert_string_equal("node-3", left[j[2].node]);
    assert_string_equal("node-1", left[j[3].node]);
    assert_string_equal("node-3", left[j[5].node]);
    assert_int_not_equal(j[1].node, j[4].node);
    /* equal weights, any number of jobs per node: survivors keep theirs */
    for (size_t per = 1; per <= 5; per++) {
        const char *three[] = {"a", "b", "c"};
        struct split_job e[15];
        for (size_t i = 0; i < 3 * per; i++)
            e[i] = (struct split_job){.weight = 100, .previous = three[i % 3]};
        split_jobs(e, 3 * per, (const char *const[]){"a", "c"}, 2);
        size_t got[2] = {0, 0};
        for (size_t i = 0; i < 3 * per; i++) {
            got[e[i].node]++;
            if (i % 3 == 0) assert_int_equal(0, e[i].node);
            if (i % 3 == 2) assert_int_equal(1, e[i].node);
        }
        assert_true(got[0] <= got[1] + 1 && got[1] <= got[0] + 1); /* differ by at most one */
    }
}

/* a node joins: as few jobs move as even the counts out; a node that ran
 * everything gives half away */
static void test_join_moves_fewest(void **state) {
    (void)state;
    const char *nodes[] = {"a", "b", "c"};
    struct split_job j[8];
    for (size_t i = 0; i < 8; i++)
        j[i] = (struct split_job){.weight = 70, .previous = i % 2 ? "b" : "c"};
    split_jobs(j, 8, nodes, 3);
    size_t per[3], moved = 0;
    count_per_node(j, 8, per, 3);
    for (int i = 0; i < 8; i++) moved += strcmp(nodes[j[i].node], j[i].previous) != 0;
    assert_int_equal(2, moved); /* 4 + 4 -> 2 + 3 + 3 */
    assert_int_equal(2, per[0]);
    assert_int_equal(3, per[1]);
    assert_int_equal(3, per[2]);
    struct split_job all[6];
    for (size_t i = 0; i < 6; i++) all[i] = (struct split_job){.weight = 10, .previous = "b"};
    split_jobs(all, 6, nodes, 3);
    count_per_node(all, 6, per, 3);
    assert_int_equal(2, per[0]);
    assert_int_equal(2, per[1]);
    assert_int_equal(2, per[2]);
    /* weights: a gap no job fits in moves nothing */
    struct split_job w[3] = {{.weight = 900, .previous = "a"}, {.weight = 600, .previous = "b"},
                             {.weight = 500, .previous = "c"}};
    split_jobs(w, 3, nodes, 3);
    for (int i = 0; i < 3; i++) assert_string_equal(w[i].previous, nodes[w[i].node]);
}

/* a delayed run's jobs (kind 1) are spread on their own beside a
 * reindex's far heavier ones (kind 0), ties to the least loaded node */
static void test_kinds_each_even(void **state) {
    (void)state;
    const char *nodes[] = {"a", "b"};
    struct split_job j[8];
    for (size_t i = 0; i < 4; i++) j[i] = (struct split_job){.weight = 100000};
    for (size_t i = 4; i < 8; i++) j[i] = (struct split_job){.weight = 500 + i, .kind = 1};
    split_jobs(j, 8, nodes, 2);
    size_t per[2];
    count_per_node(j, 4, per, 2);
    assert_int_equal(2, per[0]);
    assert_int_equal(2, per[1]);
    count_per_node(j + 4, 4, per, 2);
    assert_int_equal(2, per[0]);
    assert_int_equal(2, per[1]);
    /* one of each: not both on the first node */
    struct split_job one[2] = {{.weight = 9000}, {.weight = 10, .kind = 1}};
    split_jobs(one, 2, nodes, 2);
    assert_int_not_equal(one[0].node, one[1].node);
    /* a delayed job's previous owner still wins a tie of its kind */
    struct split_job prev[2] = {{.weight = 9000, .previous = "b"},
                                {.weight = 10, .kind = 1, .previous = "b"}};
    split_jobs(prev, 2, nodes, 2);
    assert_int_equal(1, prev[0].node);
    assert_int_equal(1, prev[1].node);
}

static void test_one_node_and_none(void **state) {
    (void)state;
    const char *nodes[] = {"only"};
    struct split_job j[3] = {{.weight = 5}, {.weight = 6}, {.weight = 7}};
    split_jobs(j, 3, nodes, 1);
    for (int i = 0; i < 3; i++) assert_int_equal(0, j[i].node);
    split_jobs(NULL, 0, nodes, 1); /* nothing to do */
}

/* SELECT MOD(CRC32('hello'),7), MOD(CRC32('sku-00042'),16),
 * MOD(CRC32(X'C3A9'),5), MOD(CAST('-5' AS UNSIGNED),4),
 * MOD(CAST('18446744073709551615' AS UNSIGNED),10),
 * MOD(CAST('123457' AS UNSIGNED),16),
 * MOD(CAST('-9223372036854775808' AS UNSIGNED),3) on MariaDB 10.11:
 * 2 7 1 3 5 1 2 */
static void test_delayed_bucket_as_the_server(void **state) {
    (void)state;
    assert_int_equal(2, delayed_bucket("hello", false, 7));
    assert_int_equal(7, delayed_bucket("sku-00042", false, 16));
    assert_int_equal(1, delayed_bucket("\xc3\xa9", false, 5));
    assert_int_equal(3, delayed_bucket("-5", true, 4));
    assert_int_equal(5, delayed_bucket("18446744073709551615", true, 10));
    assert_int_equal(1, delayed_bucket("123457", true, 16));
    assert_int_equal(2, delayed_bucket("-9223372036854775808", true, 3));
    assert_int_equal(0, delayed_bucket("123457", true, 1)); /* one bucket */
    for (int k = 0; k < 1000; k++) { /* in range, and the same every time */
        char key[16];
        snprintf(key, sizeof key, "k%d", k);
        unsigned b = delayed_bucket(key, false, 13);
        assert_true(b < 13);
        assert_int_equal(b, delayed_bucket(key, false, 13));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_weights_even),
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_previous_owner_kept),
        cmocka_unit_test(test_node_death_moves_only_its_jobs),
        cmocka_unit_test(test_join_moves_fewest),
        cmocka_unit_test(test_kinds_each_even),
        cmocka_unit_test(test_one_node_and_none),
        cmocka_unit_test(test_delayed_bucket_as_the_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
