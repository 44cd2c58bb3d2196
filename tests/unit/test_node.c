/* test_node: the node's table of subsystems (sync/node/node.c): stopped in
 * drain order, each once, the latest started first within one drain level;
 * health asked of every running subsystem; and its request thread: what
 * node_run posts runs there (not on the caller's thread), in the order
 * posted, and nothing runs once the node stops; node_post returns at once,
 * each request's completion follows its work before the next one starts,
 * and requests still queued when the node stops complete without running
 * (never left hanging). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sync/node/node.h"

static char order[256];

static void stop_a(void *st) { strcat(order, (const char *)st); }

static bool sick(void *st, char *why, size_t len) {
    (void)st;
    snprintf(why, len, "not going round");
    return false;
}

static const struct node_subsystem LATE = {.name = "late", .drain = NODE_DRAIN_DELIVERY,
                                           .stop = stop_a};
static const struct node_subsystem EARLY = {.name = "early", .drain = NODE_DRAIN_SCHEDULES,
                                            .stop = stop_a};
static const struct node_subsystem MID = {.name = "mid", .drain = NODE_DRAIN_CONTROL,
                                          .stop = stop_a, .healthy = sick};

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

/* node_start: a table started in its order, each handed the context (or
 * its own zeroed state of state_size bytes, freed after its stop); the one
 * with a run runs on node_main's thread; a start that fails stops the node
 * there, and the node stops what had started (the failed one too) in drain
 * order */
struct table_ctx {
    char started[64], stopped[64];
    int fail_at; /* the start to fail (its letter), 0: none */
    pthread_t ran_on;
};
struct owned {
    struct table_ctx *ctx;
    char letter;
};
static struct table_ctx *stop_ctx; /* an owned state's stop reaches the log through it */

static int start_ctx(void *st, void *ctx) { /* state_size 0: state is the context */
    assert_ptr_equal(st, ctx);
    strcat(((struct table_ctx *)ctx)->started, "A");
    return ((struct table_ctx *)ctx)->fail_at == 'A' ? -1 : 0;
}
static void stop_ctx_a(void *st) { strcat(((struct table_ctx *)st)->stopped, "A"); }
static int start_owned(void *st, void *ctx) {
    struct owned *o = st;
    assert_null(o->ctx); /* zeroed */
    o->ctx = ctx;
    o->letter = 'B';
    strcat(o->ctx->started, "B");
    return o->ctx->fail_at == 'B' ? 1 : 0;
}
static void stop_owned(void *st) {
    struct owned *o = st;
    if (o->ctx) strncat(o->ctx->stopped, &o->letter, 1);
    else strcat(stop_ctx->stopped, "?");
}
static int run_c(void *st) {
    ((struct table_ctx *)st)->ran_on = pthread_self();
    strcat(((struct table_ctx *)st)->started, "r");
    return 42;
}
static int start_c(void *st, void *ctx) {
    (void)ctx;
    strcat(((struct table_ctx *)st)->started, "C");
    return 0;
}
static void stop_c(void *st) { strcat(((struct table_ctx *)st)->stopped, "C"); }

static const struct node_subsystem TA = {.name = "a", .drain = NODE_DRAIN_DELIVERY,
                                         .start = start_ctx, .stop = stop_ctx_a};
static const struct node_subsystem TB = {.name = "b", .drain = NODE_DRAIN_SCHEDULES,
                                         .state_size = sizeof(struct owned),
                                         .start = start_owned, .stop = stop_owned};
static const struct node_subsystem TC = {.name = "c", .drain = NODE_DRAIN_READER,
                                         .start = start_c, .run = run_c, .stop = stop_c};
static const struct node_subsystem *const TABLE[] = {&TA, &TB, &TC};

static void t_table(void **s) {
    (void)s;
    char err[128];
    for (int fail = 0; fail <= 'B'; fail = fail ? fail + 1 : 'A') {
        struct node n;
        struct table_ctx c = {.fail_at = fail};
        stop_ctx = &c;
        assert_int_equal(node_init(&n, NULL, err, sizeof err), 0);
        int rc = node_start(&n, TABLE, 3, &c);
        if (fail == 0) {
            assert_int_equal(rc, 0);
            assert_string_equal(c.started, "ABC");
            assert_int_equal(node_main(&n), 42);
            assert_true(pthread_equal(c.ran_on, pthread_self()));
            node_stop_all(&n);
            assert_string_equal(c.stopped, "BCA"); /* drain order, not start order */
        } else if (fail == 'A') {
            assert_int_equal(rc, -1);
            assert_string_equal(c.started, "A");
            node_stop_all(&n);
            assert_string_equal(c.stopped, "A");
        } else {
            assert_int_equal(rc, 1); /* stops without an error */
            assert_string_equal(c.started, "AB");
            node_stop_all(&n);
            assert_string_equal(c.stopped, "BA");
        }
        node_free(&n); /* each once */
        assert_int_equal(strlen(c.stopped), fail == 0 ? 3 : fail == 'A' ? 1 : 2);
        if (fail == 'B') break;
    }
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
}

/* node_post: a log of what ran and completed, in order; a gate holds the
 * first request's work until the test opens it */
static pthread_mutex_t plog_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t plog_cv = PTHREAD_COND_INITIALIZER;
static char plog[256];
static bool gate_open, gate_waiting;

static void plog_add(const char *what) {
    pthread_mutex_lock(&plog_mu);
    strcat(plog, what);
    pthread_cond_broadcast(&plog_cv);
    pthread_mutex_unlock(&plog_mu);
}

static void gated_work(void *arg) {
    pthread_mutex_lock(&plog_mu);
    gate_waiting = true;
    pthread_cond_broadcast(&plog_cv);
    while (!gate_open) pthread_cond_wait(&plog_cv, &plog_mu);
    pthread_mutex_unlock(&plog_mu);
    char w[8];
    snprintf(w, sizeof w, "w%s ", (const char *)arg);
    plog_add(w);
}

static void done_log(void *arg, bool ran) {
    char w[8];
    snprintf(w, sizeof w, "%s%s ", ran ? "d" : "x", (const char *)arg);
    plog_add(w);
}

static void open_gate(void) {
    pthread_mutex_lock(&plog_mu);
    gate_open = true;
    pthread_cond_broadcast(&plog_cv);
    pthread_mutex_unlock(&plog_mu);
}

static void wait_gate_waiting(void) {
    pthread_mutex_lock(&plog_mu);
    while (!gate_waiting) pthread_cond_wait(&plog_cv, &plog_mu);
    pthread_mutex_unlock(&plog_mu);
}

static void reset_plog(void) {
    plog[0] = '\0';
    gate_open = gate_waiting = false;
}

/* completion follows the work, each request's before the next one's work */
static void t_post_order(void **s) {
    (void)s;
    struct node n;
    char err[128];
    assert_int_equal(node_init(&n, NULL, err, sizeof err), 0);
    reset_plog();
    /* returns at once: the first one's work is held at the gate */
    assert_int_equal(node_post(&n, "a", gated_work, "a", done_log, "a"), 0);
    assert_int_equal(node_post(&n, "b", gated_work, "b", done_log, "b"), 0);
    assert_int_equal(node_post(&n, "c", gated_work, "c", NULL, NULL), 0); /* no done */
    wait_gate_waiting();
    assert_string_equal(plog, ""); /* nothing completed while a's work runs */
    open_gate();
    struct call last = {0};
    assert_int_equal(node_run(&n, "last", work, &last), 0); /* after all three */
    assert_string_equal(plog, "wa da wb db wc ");
    node_free(&n);
}

static void *stop_thread(void *arg) {
    node_stop_all(arg);
    return NULL;
}

/* the node stops while a request runs and two are queued: the running one
 * completes (ran), the queued ones complete without running, and a post
 * after the stop is refused without a completion */
static void t_post_stop(void **s) {
    (void)s;
    struct node n;
    char err[128];
    assert_int_equal(node_init(&n, NULL, err, sizeof err), 0);
    reset_plog();
    assert_int_equal(node_post(&n, "a", gated_work, "a", done_log, "a"), 0);
    assert_int_equal(node_post(&n, "b", gated_work, "b", done_log, "b"), 0);
    assert_int_equal(node_post(&n, "c", gated_work, "c", done_log, "c"), 0);
    wait_gate_waiting();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stop_thread, &n), 0);
    for (;;) { /* the stop has begun: the request thread is told */
        pthread_mutex_lock(&n.mu);
        bool stopping = n.req_stop;
        pthread_mutex_unlock(&n.mu);
        if (stopping) break;
        usleep(1000);
    }
    assert_int_equal(node_post(&n, "late", gated_work, "l", done_log, "l"), -1);
    open_gate();
    pthread_join(th, NULL);
    assert_string_equal(plog, "wa da xb xc "); /* b and c: completed, not run */
    assert_int_equal(node_post(&n, "later", gated_work, "l", done_log, "l"), -1);
    assert_int_equal(node_post(NULL, "none", gated_work, "l", done_log, "l"), -1);
    assert_string_equal(plog, "wa da xb xc ");
    node_free(&n);
}

int main(void) {
    log_set_level(LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_drain_order),
        cmocka_unit_test(t_table),
        cmocka_unit_test(t_requests),
        cmocka_unit_test(t_post_order),
        cmocka_unit_test(t_post_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
