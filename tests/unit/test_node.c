/* test_node: the node's table of subsystems (sync/node/node.c): stopped in
 * drain order, each once, the latest started first within one drain level;
 * health asked of every running subsystem; and its request thread: what
 * node_run posts runs there (not on the caller's thread), in the order
 * posted, and nothing runs once the node stops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "log.h"
#include "sync/node/node.h"

static char order[256];

static void stop_a(void *st) { strcat(order, (const char *)st); }

static bool sick(void *st, char *why, size_t len) {
    (void)st;
    snprintf(why, len, "not going round");
    return false;
}

static const struct node_subsystem LATE = {"late", NODE_DRAIN_DELIVERY, stop_a, NULL};
static const struct node_subsystem EARLY = {"early", NODE_DRAIN_SCHEDULES, stop_a, NULL};
static const struct node_subsystem MID = {"mid", NODE_DRAIN_CONTROL, stop_a, sick};

static void t_drain_order(void **s) {
    (void)s;
    struct node n;
    char err[128];
    assert_int_equal(node_init(&n, NULL, err, sizeof err), 0);
    order[0] = '\0';
    node_started(&n, &LATE, "L");
    node_started(&n, &EARLY, "E1");
    node_started(&n, &MID, "M");
    node_started(&n, &EARLY, "E2");
    char why[256];
    assert_false(node_healthy(&n, why, sizeof why));
    assert_string_equal(why, "mid: not going round");
    char desc[256];
    node_describe(&n, desc, sizeof desc);
    assert_non_null(strstr(desc, "early"));
    node_stop_through(&n, NODE_DRAIN_CONTROL);
    assert_string_equal(order, "E2E1M"); /* the latest started first within a level */
    assert_true(node_healthy(&n, why, sizeof why)); /* a stopped one is not asked */
    node_free(&n); /* the rest (the requests, then delivery's level), each once */
    assert_string_equal(order, "E2E1ML");
}

struct call {
    pthread_t caller, ran_on;
    int seq;
};
static int counter;

static void work(void *arg) {
    struct call *c = arg;
    c->ran_on = pthread_self();
    c->seq = ++counter;
}

static void t_requests(void **s) {
    (void)s;
    struct node n;
    char err[128];
    assert_int_equal(node_init(&n, NULL, err, sizeof err), 0);
    assert_ptr_equal(node_current(), &n);
    struct call a = {.caller = pthread_self()}, b = {.caller = pthread_self()};
    counter = 0;
    assert_int_equal(node_run(&n, "a", work, &a), 0);
    assert_int_equal(node_run(&n, "b", work, &b), 0);
    assert_false(pthread_equal(a.ran_on, a.caller)); /* the node's thread, not the HTTP one */
    assert_true(pthread_equal(a.ran_on, b.ran_on));  /* one thread owns them */
    assert_int_equal(a.seq, 1);
    assert_int_equal(b.seq, 2);
    node_stop_all(&n);
    struct call c = {0};
    assert_int_equal(node_run(&n, "late", work, &c), -1); /* stopping: not run */
    assert_int_equal(c.seq, 0);
    node_free(&n);
    assert_null(node_current());
}

int main(void) {
    log_set_level(LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_drain_order),
        cmocka_unit_test(t_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
