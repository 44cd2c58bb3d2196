/* test_split: how a rebalance spreads a reindex's unfinished jobs over the
 * live nodes (rebalance/split.h): even counts for equal weights, the rows
 * left weighed, previous owners kept where the balance allows, each kind
 * of job (reindex, delayed run) balanced on its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "rebalance/split.h"

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_weights_even),
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_previous_owner_kept),
        cmocka_unit_test(test_kinds_each_even),
        cmocka_unit_test(test_one_node_and_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
