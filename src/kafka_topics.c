/* kafka_topics: a Kafka source's topics, their rules and SQL (see
 * kafka_topics.h). */
#include "kafka_topics.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "mq/mq.h"
#include "sbuf.h"

bool kafka_topic_name_ok(const char *t) {
    size_t n = t ? strlen(t) : 0;
    if (!n || n > 249 || !strcmp(t, ".") || !strcmp(t, "..")) return false;
    for (const char *p = t; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

int kafka_topic_format(const char *name) {
    for (int f = 0; name && f < 4; f++)
        if (!strcmp(name, mq_format_name[f])) return f;
    return -1;
}

char **kafka_config_topics(const struct ss_config *cfg, size_t *n) {
    char *names = xstrdup(cfg->kafka.topics ? cfg->kafka.topics : "");
    char **v = NULL;
    *n = 0;
    char *save = NULL;
    for (char *t = strtok_r(names, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
        size_t i = 0;
        while (i < *n && strcmp(v[i], t)) i++;
        if (i < *n) continue;
        v = xrealloc(v, (*n + 1) * sizeof *v);
        v[(*n)++] = xstrdup(t);
    }
    free(names);
    return v;
}

bool kafka_topic_in_config(const struct ss_config *cfg, const char *topic) {
    size_t n;
    char **v = kafka_config_topics(cfg, &n);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) found = !strcmp(v[i], topic);
    kafka_names_free(v, n);
    return found;
}

void kafka_names_free(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

int kafka_topics_read(MYSQL *m, const char *source, struct kafka_topic_rows *out, char *err,
                      size_t errlen) {
    out->v = NULL, out->n = 0;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT topic, format, CONCAT(LEFT(DATE_FORMAT(added_at, "
                  "'%Y-%m-%dT%H:%i:%s.%f'), 23), 'Z') FROM kafka_topics WHERE source = ");
    db_quote(m, &q, source, strlen(source));
    sbuf_adds(&q, " ORDER BY topic");
    MYSQL_RES *res = db_query(m, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!res) return -1;
    size_t rows = (size_t)mysql_num_rows(res);
    out->v = xcalloc(rows ? rows : 1, sizeof *out->v);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)) && out->n < rows) {
        struct kafka_topic_row *r = &out->v[out->n++];
        r->topic = xstrdup(row[0] ? row[0] : "");
        r->format = row[1] && *row[1] ? xstrdup(row[1]) : NULL;
        r->added_at = xstrdup(row[2] ? row[2] : "");
    }
    mysql_free_result(res);
    return 0;
}

void kafka_topic_rows_free(struct kafka_topic_rows *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) free(r->v[i].topic), free(r->v[i].format),
                                      free(r->v[i].added_at);
    free(r->v);
    r->v = NULL, r->n = 0;
}

int kafka_topics_add(MYSQL *m, const char *source, const char *topic, const char *format,
                     char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO kafka_topics (source, topic, format) VALUES (");
    db_quote(m, &q, source, strlen(source));
    sbuf_addc(&q, ',');
    db_quote(m, &q, topic, strlen(topic));
    sbuf_addc(&q, ',');
    if (format) db_quote(m, &q, format, strlen(format));
    else sbuf_adds(&q, "NULL");
    /* the same row again changes nothing (0 rows); another format: 2 */
    sbuf_adds(&q, ") ON DUPLICATE KEY UPDATE format = VALUES(format)");
    long long n = db_exec_rows(m, q.data, err, errlen);
    sbuf_free(&q);
    return n < 0 ? -1 : n == 0 ? 0 : n == 1 ? 1 : 2;
}

int kafka_topics_remove(MYSQL *m, const char *source, const char *topic, char *err,
                        size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "DELETE FROM kafka_topics WHERE source = ");
    db_quote(m, &q, source, strlen(source));
    sbuf_adds(&q, " AND topic = ");
    db_quote(m, &q, topic, strlen(topic));
    long long n = db_exec_rows(m, q.data, err, errlen);
    sbuf_free(&q);
    return n < 0 ? -1 : n > 0 ? 1 : 0;
}
