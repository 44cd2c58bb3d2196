/* topics_api: the topics of a Kafka source ([source] kind = kafka) in the
 * admin API (docs/http-api.md "Topics"):
 *
 *   GET    /api/v1/topics          every topic: where it comes from ([kafka]
 *                                  topics, the metadata's kafka_topics, the
 *                                  regex, or only the checkpoint), whether the
 *                                  consumer is subscribed to it now and Kafka
 *                                  has it, and per partition the saved offset
 *                                  (the checkpoint), the next one read, the
 *                                  partition's end and the lag (end - saved)
 *   POST   /api/v1/topics          {"topic":..,"format":..} added to the
 *                                  metadata (201; 200 when it was there)
 *   DELETE /api/v1/topics/{topic}  removed from the metadata (404: not there)
 *
 * The SQL and the rules are src/kafka_topics.c's (shared with `searchsync
 * topics`); the running consumer (sync/sources/kafka_source.c) reads the table
 * every 2 s and subscribes without a restart. The live part comes from the
 * consumer's state (sync/sources/kafka_live.h, under the reader_stats lock). A
 * binlog source answers 409. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "db.h"
#include "deliver/store.h"
#include "json_exact.h"
#include "jsonw.h"
#include "kafka_token.h"
#include "kafka_topics.h"
#include "sync/sources/kafka_live.h"
#include "sync/sources/reader_stats.h"
#include "topics_api.h"

/* one topic of the answer */
struct topic {
    char *name;
    bool cfg, meta, regex;
    const char *format, *added_at; /* the metadata row's (borrowed) */
};

static struct topic *topic_at(struct topic **v, size_t *n, const char *name) {
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i].name, name)) return &(*v)[i];
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n] = (struct topic){.name = xstrdup(name)};
    return &(*v)[(*n)++];
}

static void jw_off(jsonw *w, int64_t v) {
    if (v >= 0) jw_int(w, v);
    else jw_null(w);
}

/* One topic of the list: where it comes from, its format, whether the
 * consumer reads it, and its partitions — the saved ones, then those
 * assigned without a saved offset — with their offsets and lag. */
static void topic_json(jsonw *w, const struct topic *x, const struct kafka_live *live,
                       bool reading, struct kafka_offsets *saved) {
    jw_obj_open(w);
    jw_key(w, "topic");
    jw_str(w, x->name);
    jw_key(w, "from");
    jw_arr_open(w);
    if (x->cfg) jw_str(w, "config");
    if (x->meta) jw_str(w, "metadata");
    if (x->regex) jw_str(w, "regex");
    if (!x->cfg && !x->meta && !x->regex) jw_str(w, "checkpoint");
    jw_arr_close(w);
    jw_key(w, "format");
    if (x->format) jw_str(w, x->format);
    else jw_null(w);
    jw_key(w, "added_at");
    if (x->added_at) jw_str(w, x->added_at);
    else jw_null(w);
    bool assigned = false;
    for (size_t k = 0; k < live->nparts && !assigned; k++)
        assigned = !strcmp(live->parts[k].topic, x->name);
    jw_key(w, "subscribed");
    jw_bool(w, reading && (kafka_live_has(live->subscribed, live->nsub, x->name) ||
                           (x->regex && assigned)));
    jw_key(w, "missing");
    jw_bool(w, kafka_live_has(live->missing, live->nmissing, x->name));
    jw_key(w, "unassigned");
    jw_bool(w, kafka_live_has(live->unassigned, live->nunassigned, x->name));
    /* partitions: the saved ones, then those assigned without a saved offset */
    jw_key(w, "partitions");
    jw_arr_open(w);
    int64_t lag = 0;
    bool lag_known = false;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? live->nparts : saved->n;
        for (size_t k = 0; k < n; k++) {
            const char *tn = pass ? live->parts[k].topic : saved->v[k].topic;
            int32_t p = pass ? live->parts[k].partition : saved->v[k].partition;
            if (strcmp(tn, x->name)) continue;
            struct kafka_offset *s = kafka_offsets_at(saved, tn, p, false);
            if (pass && s) continue; /* listed with the saved ones */
            const struct kafka_live_part *lp = NULL;
            for (size_t q = 0; q < live->nparts && !lp; q++)
                if (live->parts[q].partition == p && !strcmp(live->parts[q].topic, tn))
                    lp = &live->parts[q];
            int64_t sv = s ? s->next : -1, end = lp ? lp->high : -1;
            jw_obj_open(w);
            jw_key(w, "partition");
            jw_int(w, p);
            jw_key(w, "saved");
            jw_off(w, sv);
            jw_key(w, "read");
            jw_off(w, lp ? lp->next : -1);
            jw_key(w, "end");
            jw_off(w, end);
            jw_key(w, "lag");
            jw_off(w, sv >= 0 && end >= 0 ? (end > sv ? end - sv : 0) : -1);
            jw_key(w, "assigned");
            jw_bool(w, lp != NULL);
            jw_obj_close(w);
            if (sv >= 0 && end >= 0) lag += end > sv ? end - sv : 0, lag_known = true;
        }
    }
    jw_arr_close(w);
    jw_key(w, "lag");
    jw_off(w, lag_known ? lag : -1);
    jw_obj_close(w);
}

static void h_list(const struct api_ctx *ctx, struct api_resp *r) {
    const struct ss_config *cfg = ctx->cfg;
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    char err[1024];
    struct kafka_topic_rows rows;
    if (kafka_topics_read(m, cfg->source.name, &rows, err, sizeof err) < 0) {
        db_close(m);
        api_error(r, 503, err, "the metadata server must answer (kafka_topics); retry");
        return;
    }
    size_t poslen = 1 << 16;
    char *pos = xmalloc(poslen);
    int found = offsets_load(m, cfg->source.name, pos, poslen, err, sizeof err);
    db_close(m);
    if (found < 0) {
        free(pos);
        kafka_topic_rows_free(&rows);
        api_error(r, 503, err, "the metadata server must answer (offsets); retry");
        return;
    }
    struct kafka_offsets saved = {0};
    if (found == 0 && kafka_token_parse(pos, &saved) < 0) kafka_offsets_free(&saved);
    free(pos);
    struct kafka_live live = {0};
    bool reading = false;
    if (ctx->rs) {
        pthread_mutex_lock(&ctx->rs->mu);
        if (ctx->rs->kafka) {
            kafka_live_copy(&live, ctx->rs->kafka);
            reading = true;
        }
        pthread_mutex_unlock(&ctx->rs->mu);
    }

    /* the topics: the configuration's, the metadata's, then what the
     * consumer was assigned (the regex) or the checkpoint still holds */
    struct topic *t = NULL;
    size_t nt = 0, nc;
    char **cv = kafka_config_topics(cfg, &nc);
    for (size_t i = 0; i < nc; i++) topic_at(&t, &nt, cv[i])->cfg = true;
    kafka_names_free(cv, nc);
    for (size_t i = 0; i < rows.n; i++) {
        struct topic *x = topic_at(&t, &nt, rows.v[i].topic);
        x->meta = true;
        x->format = rows.v[i].format;
        x->added_at = rows.v[i].added_at;
    }
    bool has_regex = cfg->kafka.topic_regex && *cfg->kafka.topic_regex;
    for (size_t i = 0; i < live.nparts; i++) {
        struct topic *x = topic_at(&t, &nt, live.parts[i].topic);
        if (!x->cfg && !x->meta && has_regex) x->regex = true;
    }
    for (size_t i = 0; i < saved.n; i++) topic_at(&t, &nt, saved.v[i].topic);

    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "source");
    jw_str(&w, cfg->source.name);
    jw_key(&w, "format");
    jw_str(&w, cfg->kafka.format ? cfg->kafka.format : "auto");
    jw_key(&w, "regex");
    if (has_regex) jw_str(&w, cfg->kafka.topic_regex);
    else jw_null(&w);
    jw_key(&w, "reading");
    jw_bool(&w, reading);
    jw_key(&w, "topics");
    jw_arr_open(&w);
    for (size_t i = 0; i < nt; i++) {
        topic_json(&w, &t[i], &live, reading, &saved);
    }
    jw_arr_close(&w);
    jw_obj_close(&w);
    r->status = 200;
    r->content_type = "application/json";
    sbuf_addc(&r->body, '\n');
    for (size_t i = 0; i < nt; i++) free(t[i].name);
    free(t);
    kafka_live_free(&live);
    kafka_offsets_free(&saved);
    kafka_topic_rows_free(&rows);
}

/* {"topic": "...", "format": "..."}: 0, or -1 with err and *field */
static int parse_add(const char *body, size_t len, char **topic, char **format,
                     const char **field, char *err, size_t errlen) {
    *topic = *format = NULL;
    *field = "";
    cJSON *j = json_exact_object(body, len, " such as {\"topic\":\"cdc.orders\"} (and optionally "
                                 "\"format\")", err, errlen);
    if (!j) return -1;
    int rc = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, j) {
        const char *k = it->string ? it->string : "";
        if (!strcmp(k, "topic")) {
            if (!cJSON_IsString(it) || !kafka_topic_name_ok(it->valuestring)) {
                *field = "topic";
                rc = errf(err, errlen, "\"topic\" must be a Kafka topic name ("
                                       KAFKA_TOPIC_NAME_RULE ")");
                break;
            }
            free(*topic);
            *topic = xstrdup(it->valuestring);
        } else if (!strcmp(k, "format")) {
            if (cJSON_IsNull(it)) continue;
            if (!cJSON_IsString(it) || kafka_topic_format(it->valuestring) < 0) {
                *field = "format";
                rc = errf(err, errlen, "\"format\" must be " KAFKA_TOPIC_FORMATS
                                       " (or absent: [kafka] format)");
                break;
            }
            free(*format);
            *format = xstrdup(it->valuestring);
        } else {
            *field = "";
            rc = errf(err, errlen, "unknown field \"%.100s\": the body takes \"topic\" and "
                                   "\"format\"", k);
            break;
        }
    }
    if (rc == 0 && !*topic) {
        *field = "topic";
        rc = errf(err, errlen, "\"topic\" is missing: the name of the Kafka topic to read");
    }
    cJSON_Delete(j);
    if (rc < 0) {
        free(*topic), free(*format);
        *topic = *format = NULL;
    }
    return rc;
}

static void h_add(const struct api_ctx *ctx, const char *body, size_t len, struct api_resp *r) {
    char *topic, *format, err[1024];
    const char *field;
    if (parse_add(body, len, &topic, &format, &field, err, sizeof err) < 0) {
        api_error_field(r, 400, field, err, NULL);
        return;
    }
    MYSQL *m = api_meta_connect(ctx, r);
    if (m) {
        const char *src = ctx->cfg->source.name;
        int n = kafka_topics_add(m, src, topic, format, err, sizeof err);
        db_close(m);
        if (n < 0) {
            api_error(r, 503, err, "the metadata server must answer (kafka_topics); retry");
        } else {
            jsonw w;
            jw_init(&w, &r->body);
            jw_obj_open(&w);
            jw_key(&w, "topic");
            jw_str(&w, topic);
            jw_key(&w, "format");
            if (format) jw_str(&w, format);
            else jw_null(&w);
            jw_key(&w, "added");
            jw_bool(&w, n == 1);
            jw_key(&w, "in_config");
            jw_bool(&w, kafka_topic_in_config(ctx->cfg, topic));
            jw_key(&w, "note");
            jw_str(&w, n == 0 ? "already one of the source's topics, as it is"
                              : "the running daemon subscribes within seconds");
            jw_obj_close(&w);
            sbuf_addc(&r->body, '\n');
            r->status = n == 1 ? 201 : 200;
            r->content_type = "application/json";
        }
    }
    free(topic);
    free(format);
}

static void h_delete(const struct api_ctx *ctx, const char *topic, struct api_resp *r) {
    bool in_cfg = kafka_topic_in_config(ctx->cfg, topic);
    if (!kafka_topic_name_ok(topic)) {
        api_error_field(r, 400, "topic", "not a Kafka topic name (" KAFKA_TOPIC_NAME_RULE ")",
                        NULL);
        return;
    }
    MYSQL *m = api_meta_connect(ctx, r);
    if (!m) return;
    char err[1024];
    int n = kafka_topics_remove(m, ctx->cfg->source.name, topic, err, sizeof err);
    db_close(m);
    if (n < 0) {
        api_error(r, 503, err, "the metadata server must answer (kafka_topics); retry");
        return;
    }
    if (n == 0) {
        sbuf e = SBUF_INIT;
        sbuf_printf(&e, "%s is not one of source %s's topics in the metadata", topic,
                    ctx->cfg->source.name);
        api_error(r, 404, e.data, in_cfg ? "it is in [kafka] topics of the configuration: "
                                           "remove it there (and restart)"
                                         : "GET /api/v1/topics lists them");
        sbuf_free(&e);
        return;
    }
    jsonw w;
    jw_init(&w, &r->body);
    jw_obj_open(&w);
    jw_key(&w, "topic");
    jw_str(&w, topic);
    jw_key(&w, "removed");
    jw_bool(&w, true);
    jw_key(&w, "note");
    jw_str(&w, in_cfg ? "removed from the metadata; it is still in [kafka] topics and read"
                      : "the running daemon unsubscribes within seconds; its offsets stay in "
                        "the checkpoint");
    jw_obj_close(&w);
    sbuf_addc(&r->body, '\n');
    r->status = 200;
    r->content_type = "application/json";
}

void topics_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                       size_t len, struct api_resp *r) {
    if (!config_kafka_source(ctx->cfg)) {
        api_error(r, 409, "this daemon's source reads the binlog ([source] kind = binlog): "
                          "topics are for a Kafka source",
                  "set [source] kind = kafka and [kafka] brokers to read topics");
        return;
    }
    if (rt->id == ROUTE_TOPICS_LIST) h_list(ctx, r);
    else if (rt->id == ROUTE_TOPIC_ADD) h_add(ctx, body, len, r);
    else h_delete(ctx, rt->alias, r);
}
