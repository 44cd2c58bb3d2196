/* index_mapping: generated index bodies (see index_mapping.h). Built as a
 * cJSON tree; every number goes in as exact text (cJSON_CreateRaw). */
#include "sync/mapping/index_mapping.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "search/content_hash.h"

struct gen {
    const struct search_dialect *d;
    char *err;
    size_t errlen;
    int failed;
};

static void raw_int(cJSON *o, const char *k, long long v) {
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    cJSON_AddItemToObject(o, k, cJSON_CreateRaw(b));
}

static bool at_least(const struct search_dialect *d, int major, int minor) {
    return d->major > major || (d->major == major && d->minor >= minor);
}

bool index_type_supported(const struct search_dialect *d, const char *t) {
    bool es = d->engine == ENGINE_ELASTICSEARCH, os = d->engine == ENGINE_OPENSEARCH;
    if (!strcmp(t, "unsigned_long")) return (es && at_least(d, 7, 10)) || (os && at_least(d, 2, 8));
    if (!strcmp(t, "flattened")) return es && at_least(d, 7, 3);
    if (!strcmp(t, "flat_object")) return os && at_least(d, 2, 7);
    if (!strcmp(t, "wildcard")) return (es && at_least(d, 7, 9)) || (os && at_least(d, 2, 15));
    return true;
}

static bool index_param_ok(const char *t) {
    static const char *const ok[] = {"long", "integer", "short", "byte", "unsigned_long",
                                     "double", "float", "half_float", "scaled_float", "boolean",
                                     "keyword", "text", "date", "date_nanos", "ip", NULL};
    for (int i = 0; ok[i]; i++)
        if (!strcmp(ok[i], t)) return true;
    return false;
}

static cJSON *column_def(struct gen *g, const char *where, const struct mp_column *c,
                         const char *table_copy_to) {
    const char *t = c->type ? c->type : "keyword";
    if (!index_type_supported(g->d, t)) {
        if (!g->failed)
            snprintf(g->err, g->errlen, "%s column %s: engine type %s is not available in %s %s",
                     where, c->name, t, g->d->name, g->d->number);
        g->failed = 1;
    }
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "type", t);
    if (!strcmp(t, "object")) {
        if (!c->indexed)
            cJSON_AddFalseToObject(f, "enabled");
        else
            cJSON_AddTrueToObject(f, "dynamic");
        return f;
    }
    if (!strcmp(t, "scaled_float")) {
        int s = mapping_decimal_scale(c->mysql_type);
        long long factor = 1;
        for (int i = 0; i < (s < 0 ? 2 : s); i++) factor *= 10;
        raw_int(f, "scaling_factor", factor);
    }
    if (!strcmp(t, "date") || !strcmp(t, "date_nanos"))
        cJSON_AddStringToObject(f, "format",
                                c->format ? c->format : "strict_date_optional_time||epoch_millis");
    if (c->analyzer) cJSON_AddStringToObject(f, "analyzer", c->analyzer);
    if (c->search_analyzer) cJSON_AddStringToObject(f, "search_analyzer", c->search_analyzer);
    const char *copy = c->copy_to;
    if (!copy && table_copy_to && (!strcmp(t, "text") || !strcmp(t, "keyword")))
        copy = table_copy_to;
    if (copy) cJSON_AddStringToObject(f, "copy_to", copy);
    if (!c->indexed && index_param_ok(t)) cJSON_AddFalseToObject(f, "index");
    if (c->keyword) {
        cJSON *fields = cJSON_AddObjectToObject(f, "fields");
        cJSON *kw = cJSON_AddObjectToObject(fields, "keyword");
        cJSON_AddStringToObject(kw, "type", "keyword");
        raw_int(kw, "ignore_above", 256);
    }
    return f;
}

static void add_prop(cJSON *props, const char *name, cJSON *def) {
    if (cJSON_GetObjectItemCaseSensitive(props, name))
        cJSON_Delete(def); /* parent/child tables share fields (validated: same type) */
    else
        cJSON_AddItemToObject(props, name, def);
}

static void add_relations(struct gen *g, const char *where, cJSON *props,
                          const struct mp_column *owner, size_t nowner,
                          const struct mp_relation *rels, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const struct mp_relation *r = &rels[i];
        const char *name = mp_relation_name(r, owner, nowner);
        if (!name) continue; /* validation reports it */
        cJSON *o = cJSON_CreateObject();
        bool nested = mp_relation_nested(r, owner, nowner);
        cJSON_AddStringToObject(o, "type", nested ? "nested" : "object");
        cJSON *p = cJSON_AddObjectToObject(o, "properties");
        char w[512];
        snprintf(w, sizeof w, "%s relation %s (%s.%s)", where, name, r->db, r->table);
        /* flattened (many-to-many): the elements are the linked table's rows */
        const struct mp_relation *e = r->flatten && r->nrelations == 1 ? &r->relations[0] : r;
        for (size_t k = 0; k < e->ncolumns; k++)
            add_prop(p, e->columns[k].name, column_def(g, w, &e->columns[k], NULL));
        add_relations(g, w, p, e->columns, e->ncolumns, e->relations, e->nrelations);
        add_prop(props, name, o);
    }
}

/* copy_to targets that no column defines become text fields at the root. */
static void add_copy_target(cJSON *props, const char *target) {
    if (!target || strchr(target, '.')) return;
    if (cJSON_GetObjectItemCaseSensitive(props, target)) return;
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "type", "text");
    cJSON_AddItemToObject(props, target, f);
}

static void copy_targets_rel(cJSON *props, const struct mp_relation *r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < r[i].ncolumns; k++) add_copy_target(props, r[i].columns[k].copy_to);
        copy_targets_rel(props, r[i].relations, r[i].nrelations);
    }
}

void index_mapping_hash_props(cJSON *props) {
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "type", "long");
    cJSON_AddFalseToObject(h, "index");
    add_prop(props, CONTENT_HASH_FIELD, h);
    cJSON *k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "type", "long");
    add_prop(props, KEY_HASH_FIELD, k);
}

/* building: the seconds a version being built keeps deletes (0: not one) */
static int mapping_body(const struct mp_index *ix, const struct search_dialect *d, bool pretty,
                        int building, sbuf *out, char *err, size_t errlen) {
    if (d->doc_type || (d->engine == ENGINE_ELASTICSEARCH && d->major < 7)) {
        snprintf(err, errlen, "index %s: Elasticsearch %s needs mapping types; not supported",
                 ix->alias, d->number);
        return -1;
    }
    struct gen g = {d, err, errlen, 0};
    cJSON *root = cJSON_CreateObject();
    cJSON *settings = cJSON_AddObjectToObject(root, "settings");
    cJSON *idx = cJSON_AddObjectToObject(settings, "index");
    raw_int(idx, "number_of_shards", ix->shards);
    raw_int(idx, "number_of_replicas", building ? 0 : ix->replicas < 0 ? 1 : ix->replicas);
    if (building) {
        cJSON_AddStringToObject(idx, "refresh_interval", "-1");
        cJSON *tl = cJSON_AddObjectToObject(idx, "translog");
        cJSON_AddStringToObject(tl, "durability", "async");
        char gc[32];
        snprintf(gc, sizeof gc, "%ds", building);
        cJSON_AddStringToObject(idx, "gc_deletes", gc);
    }
    if (ix->analysis) cJSON_AddItemToObject(settings, "analysis", cJSON_CreateRaw(ix->analysis));
    cJSON *mappings = cJSON_AddObjectToObject(root, "mappings");
    cJSON_AddStringToObject(mappings, "dynamic", "strict");
    cJSON *props = cJSON_AddObjectToObject(mappings, "properties");
    bool parent_child = false;
    for (size_t i = 1; i < ix->ntables; i++)
        if (ix->tables[i].parent_table) parent_child = true;
    for (size_t i = 0; i < ix->ntables; i++) {
        const struct mp_table *t = &ix->tables[i];
        if (i > 0 && !t->parent_table) continue; /* settings of a related table only */
        char w[256];
        snprintf(w, sizeof w, "index %s table %s.%s", ix->alias, t->db, t->table);
        for (size_t k = 0; k < t->ncolumns; k++)
            add_prop(props, t->columns[k].name, column_def(&g, w, &t->columns[k], t->copy_to));
        add_relations(&g, w, props, t->columns, t->ncolumns, t->relations, t->nrelations);
    }
    if (mp_index_sharded(ix)) { /* which shard each document is of */
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "type", "keyword");
        add_prop(props, MP_SHARD_FIELD, f);
    }
    if (mp_index_multi(ix)) { /* which source each document is of */
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "type", "keyword");
        add_prop(props, MP_SOURCE_FIELD, f);
    }
    for (size_t i = 0; i < ix->ntables; i++) {
        const struct mp_table *t = &ix->tables[i];
        add_copy_target(props, t->copy_to);
        for (size_t k = 0; k < t->ncolumns; k++) add_copy_target(props, t->columns[k].copy_to);
        copy_targets_rel(props, t->relations, t->nrelations);
    }
    if (parent_child) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "type", "join");
        cJSON *rel = cJSON_AddObjectToObject(j, "relations");
        for (size_t i = 0; i < ix->ntables; i++) {
            const struct mp_table *p = &ix->tables[i];
            if (!p->join_name) continue;
            cJSON *kids = NULL;
            for (size_t k = 0; k < ix->ntables; k++) {
                const struct mp_table *c = &ix->tables[k];
                if (!c->parent_table || !c->join_name || strcmp(c->parent_db, p->db) ||
                    strcmp(c->parent_table, p->table))
                    continue;
                if (!kids) kids = cJSON_AddArrayToObject(rel, p->join_name);
                cJSON_AddItemToArray(kids, cJSON_CreateString(c->join_name));
            }
        }
        add_prop(props, ix->join_field ? ix->join_field : "relation", j);
    }
    cJSON *vf = cJSON_CreateObject();
    cJSON_AddStringToObject(vf, "type", "long");
    cJSON_AddFalseToObject(vf, "index");
    add_prop(props, INDEX_MAPPING_VERSION_FIELD, vf);
    index_mapping_hash_props(props);
    int rc = g.failed ? -1 : 0;
    if (rc == 0) {
        char *s = cJSON_PrintUnformatted(root);
        if (pretty) {
            mapping_pretty(s, strlen(s), out);
            sbuf_addc(out, '\n');
        } else
            sbuf_adds(out, s);
        cJSON_free(s);
    }
    cJSON_Delete(root);
    return rc;
}

int index_mapping_body(const struct mp_index *ix, const struct search_dialect *d, bool pretty,
                       sbuf *out, char *err, size_t errlen) {
    return mapping_body(ix, d, pretty, 0, out, err, errlen);
}

int index_mapping_build_body(const struct mp_index *ix, const struct search_dialect *d,
                             int gc_deletes_s, sbuf *out, char *err, size_t errlen) {
    return mapping_body(ix, d, false, gc_deletes_s > 0 ? gc_deletes_s : 60, out, err, errlen);
}

int index_mapping_put_hash_fields(struct search_conn *k, const char *alias, char *err,
                                  size_t errlen) {
    cJSON *body = cJSON_CreateObject();
    index_mapping_hash_props(cJSON_AddObjectToObject(body, "properties"));
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    char path[600];
    snprintf(path, sizeof path, "/%s,%s_v*/_mapping?allow_no_indices=true&ignore_unavailable=true",
             alias, alias);
    struct search_resp r;
    search_resp_init(&r);
    int rc = 0;
    if (search_request(k, "PUT", path, "application/json", text, strlen(text), &r) != 0 ||
        r.status != 200) {
        snprintf(err, errlen,
                 "index %s: cannot add the check's fields %s and %s to its mapping (%s%.*s): "
                 "writes to it may be refused; reindex it to get a fresh mapping",
                 alias, CONTENT_HASH_FIELD, KEY_HASH_FIELD, r.status ? "" : r.err,
                 r.status ? (int)(r.body.len > 300 ? 300 : r.body.len) : 0,
                 r.status ? r.body.data : "");
        rc = -1;
    }
    search_resp_free(&r);
    free(text);
    return rc;
}
