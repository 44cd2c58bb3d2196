/* Unit tests of a Kafka source's resume token (src/kafka_token.c): the
 * checkpoint's "kafka T/P=N ..." text written and read back, what is not a
 * token (a binlog position, malformed items, numbers out of range), a
 * partition named twice, partitions without an offset left out, and a
 * topic's partitions dropped (a topic deleted in Kafka). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "kafka_token.h"

static void round_trip(void **state) {
    (void)state;
    struct kafka_offsets o = {0};
    kafka_offsets_at(&o, "cdc.canal", 0, true)->next = 17;
    kafka_offsets_at(&o, "cdc.canal", 2, true)->next = 0;
    kafka_offsets_at(&o, "a-b_c.9", 11, true)->next = 9223372036854775807LL;
    kafka_offsets_at(&o, "cdc.canal", 1, true); /* none read yet: left out */
    sbuf t = SBUF_INIT;
    assert_string_equal(kafka_token_make(&o, &t),
                        "kafka cdc.canal/0=17 cdc.canal/2=0 a-b_c.9/11=9223372036854775807");
    struct kafka_offsets r = {0};
    assert_int_equal(kafka_token_parse(t.data, &r), 0);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.v[2].topic, "a-b_c.9");
    assert_int_equal(r.v[2].partition, 11);
    assert_true(r.v[2].next == 9223372036854775807LL);
    assert_int_equal(kafka_offsets_at(&r, "cdc.canal", 0, false)->next, 17);
    assert_null(kafka_offsets_at(&r, "cdc.canal", 1, false));
    sbuf t2 = SBUF_INIT;
    assert_string_equal(kafka_token_make(&r, &t2), t.data);
    kafka_offsets_free(&o);
    kafka_offsets_free(&r);
    sbuf_free(&t);
    sbuf_free(&t2);
}

static void empty_and_spaces(void **state) {
    (void)state;
    struct kafka_offsets o = {0};
    assert_int_equal(kafka_token_parse("kafka", &o), 0);
    assert_int_equal(o.n, 0);
    assert_int_equal(kafka_token_parse("kafka   t/0=5  t/1=6 ", &o), 0);
    assert_int_equal(o.n, 2);
    /* named twice: the last offset */
    assert_int_equal(kafka_token_parse("kafka t/0=7", &o), 0);
    assert_int_equal(o.n, 2);
    assert_int_equal(o.v[0].next, 7);
    /* an older token's -1 (none read) is read, and not written again */
    assert_int_equal(kafka_token_parse("kafka u/3=-1", &o), 0);
    assert_int_equal(kafka_offsets_at(&o, "u", 3, false)->next, -1);
    sbuf t = SBUF_INIT;
    assert_string_equal(kafka_token_make(&o, &t), "kafka t/0=7 t/1=6");
    sbuf_free(&t);
    kafka_offsets_free(&o);
    sbuf e = SBUF_INIT;
    assert_string_equal(kafka_token_make(&o, &e), "kafka");
    sbuf_free(&e);
}

static void not_tokens(void **state) {
    (void)state;
    static const char *const bad[] = {
        "mysql-bin.000003:4",  /* a binlog position */
        "kafkaz t/0=1",        /* not the word */
        "kafka t0=1",          /* no partition */
        "kafka /0=1",          /* no topic */
        "kafka t/0",           /* no offset */
        "kafka t/x=1",         /* partition not a number */
        "kafka t/-1=1",        /* negative partition */
        "kafka t/0=",          /* empty offset */
        "kafka t/0=12a",       /* trailing garbage */
        "kafka t/0=-2",        /* below -1 */
        "kafka t/2147483648=1", /* partition beyond int32 */
        "kafka t/0=9223372036854775808", /* offset beyond int64 */
        "",
        NULL,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct kafka_offsets o = {0};
        assert_int_equal(kafka_token_parse(bad[i], &o), -1);
        kafka_offsets_free(&o);
    }
    /* a bad item after good ones: -1, the good ones kept (freed by the caller) */
    struct kafka_offsets o = {0};
    assert_int_equal(kafka_token_parse("kafka t/0=1 t/1", &o), -1);
    assert_int_equal(o.n, 1);
    kafka_offsets_free(&o);
}

static void slash_in_item(void **state) {
    (void)state;
    /* the last '/' before '=' ends the topic (names hold no '/': defensive) */
    struct kafka_offsets o = {0};
    assert_int_equal(kafka_token_parse("kafka a/b/4=8", &o), 0);
    assert_string_equal(o.v[0].topic, "a/b");
    assert_int_equal(o.v[0].partition, 4);
    kafka_offsets_free(&o);
}

static void drop_topic(void **state) {
    (void)state;
    struct kafka_offsets o = {0};
    assert_int_equal(kafka_token_parse("kafka a/0=1 gone/0=5 b/0=2 gone/1=6 b/1=3", &o), 0);
    assert_int_equal(kafka_offsets_drop_topic(&o, "gone"), 2);
    assert_int_equal(kafka_offsets_drop_topic(&o, "gone"), 0);
    sbuf t = SBUF_INIT;
    assert_string_equal(kafka_token_make(&o, &t), "kafka a/0=1 b/0=2 b/1=3");
    /* added again after the drop: a new entry at the end */
    kafka_offsets_at(&o, "gone", 0, true)->next = 1;
    assert_string_equal(kafka_token_make(&o, &t), "kafka a/0=1 b/0=2 b/1=3 gone/0=1");
    sbuf_free(&t);
    kafka_offsets_free(&o);
    kafka_offsets_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),   cmocka_unit_test(empty_and_spaces),
        cmocka_unit_test(not_tokens),   cmocka_unit_test(slash_in_item),
        cmocka_unit_test(drop_topic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
