/* debezium_int: what src/mq/debezium.c (a Debezium envelope: its columns
 * typed from the schema, its rows) and src/mq/debezium_encode.c (one value
 * encoded as its column's binlog bytes) share: how a field's value is
 * represented (struct dcol) and the JSON accessors both use. Not for other
 * files: the interface is mq.h. */
#ifndef SS_MQ_DEBEZIUM_INT_H
#define SS_MQ_DEBEZIUM_INT_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mq/mq.h"

enum rep {
    R_PLAIN = 0, R_DECIMAL, R_DAYS, R_MILLIS_DT, R_MICROS_DT, R_NANOS_DT, R_ZONED, R_MICROS_TIME,
    R_MILLIS_TIME, R_NANOS_TIME, R_YEAR, R_JSON, R_BITS, R_BYTES, R_GEOM,
    R_UNSTATED, /* a number whose unit a setting not stated decides: unsure */
};

struct dcol {
    int rep;
    int scale;       /* R_DECIMAL: from the schema, -1 = the column's */
    int dec;         /* R_DECIMAL: enum mq_dbz_decimal, 0: the value decides */
    bool dec_schema; /* ... and the message's schema said it */
    int bin;         /* R_BYTES: enum mq_dbz_binary, 0: the value decides */
    bool connect;    /* times in Kafka Connect's milliseconds (time.precision.mode=connect) */
    bool snapshot;   /* the message is a snapshot read (op "r") */
    bool infer_fsp;  /* fsp from the values */
};

#define TIME_SETTING "[kafka] debezium_time_precision_mode"

static inline const cJSON *key(const cJSON *o, const char *k) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}
static inline const char *str(const cJSON *o, const char *k) {
    const cJSON *v = key(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
static inline bool i64_of(const cJSON *v, int64_t *out) {
    const char *s = cJSON_IsRaw(v) || cJSON_IsString(v) ? v->valuestring : NULL;
    bool neg;
    uint64_t mag;
    if (!s || mq_parse_int(s, strlen(s), &neg, &mag) < 0) return false;
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > INT64_MAX) return false;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return true;
}

/* ---- debezium_encode.c ---- */
/* The fraction digits of column c (whose schema does not say them) raised
 * to the fewest of 0, 3, 6 that hold value v exactly. */
void dbz_infer_fsp(bl_column *c, const struct dcol *d, const cJSON *v);
/* One value v of column c, as its field's representation (a struct dcol,
 * ud) says, as the binlog's bytes into out: mq_put_value's encoder. 0, -1
 * not a value of the column, 1 unsure (err says why). */
int dbz_enc_value(sbuf *out, const bl_column *c, const cJSON *v, const void *ud, char *err,
                  size_t errlen);

#endif
