/* kafka_token: a Kafka source's resume token (see kafka_token.h). */
#include "kafka_token.h"

#include <stdlib.h>
#include <string.h>

struct kafka_offset *kafka_offsets_at(struct kafka_offsets *o, const char *topic,
                                      int32_t partition, bool add) {
    for (size_t i = 0; i < o->n; i++)
        if (o->v[i].partition == partition && !strcmp(o->v[i].topic, topic)) return &o->v[i];
    if (!add) return NULL;
    o->v = xrealloc(o->v, (o->n + 1) * sizeof *o->v);
    o->v[o->n] = (struct kafka_offset){xstrdup(topic), partition, -1};
    return &o->v[o->n++];
}

size_t kafka_offsets_drop_topic(struct kafka_offsets *o, const char *topic) {
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < o->n; i++) {
        if (!strcmp(o->v[i].topic, topic)) {
            free(o->v[i].topic);
            dropped++;
        } else {
            o->v[kept++] = o->v[i];
        }
    }
    o->n = kept;
    return dropped;
}

void kafka_offsets_free(struct kafka_offsets *o) {
    if (!o) return;
    for (size_t i = 0; i < o->n; i++) free(o->v[i].topic);
    free(o->v);
    o->v = NULL;
    o->n = 0;
}

/* digits (with a leading '-' when neg is allowed) of [p, e) as a number
 * within [min, max]; false otherwise */
static bool number(const char *p, const char *e, bool neg, long long max, long long *out) {
    bool minus = neg && p < e && *p == '-';
    if (minus) p++;
    if (p == e || e - p > 19) return false;
    long long v = 0;
    for (; p < e; p++) {
        if (*p < '0' || *p > '9') return false;
        if (v > (max - (*p - '0')) / 10) return false;
        v = v * 10 + (*p - '0');
    }
    *out = minus ? -v : v;
    return true;
}

int kafka_token_parse(const char *s, struct kafka_offsets *o) {
    if (!s || strncmp(s, "kafka", 5) || (s[5] && s[5] != ' ')) return -1;
    for (const char *p = s + 5; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *end = strchr(p, ' ');
        if (!end) end = p + strlen(p);
        /* topic names hold neither '/' nor '=' (Kafka's rules): the item's
         * last '/' before its '=' ends the topic */
        const char *eq = memchr(p, '=', (size_t)(end - p)), *sl = NULL;
        for (const char *q = eq; q && q > p; q--)
            if (*q == '/') {
                sl = q;
                break;
            }
        long long part, next;
        if (!eq || !sl || sl == p || !number(sl + 1, eq, false, INT32_MAX, &part) ||
            !number(eq + 1, end, true, INT64_MAX, &next) || next < -1)
            return -1;
        char *topic = xstrndup(p, (size_t)(sl - p));
        kafka_offsets_at(o, topic, (int32_t)part, true)->next = next;
        free(topic);
        p = end;
    }
    return 0;
}

const char *kafka_token_make(const struct kafka_offsets *o, sbuf *out) {
    sbuf_reset(out);
    sbuf_adds(out, "kafka");
    for (size_t i = 0; i < o->n; i++)
        if (o->v[i].next >= 0)
            sbuf_printf(out, " %s/%d=%lld", o->v[i].topic, (int)o->v[i].partition,
                        (long long)o->v[i].next);
    return out->data;
}
