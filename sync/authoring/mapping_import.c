/* mapping_import: see mapping_import.h. */
#include "sync/authoring/mapping_import.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "db.h"
#include "search/replicas.h"
#include "search/search.h"
#include "sync/delayed/delayed.h"
#include "sync/mapping/index_mapping.h"

static const struct mp_table *find_table(const struct mp_index *ix, const struct mp_table *t) {
    for (size_t i = 0; i < ix->ntables; i++)
        if (!strcmp(ix->tables[i].db, t->db) && !strcmp(ix->tables[i].table, t->table))
            return &ix->tables[i];
    return NULL;
}

static void table_json(const struct mp_table *t, sbuf *out) {
    /* a one-table index config serializes exactly that table */
    struct mp_index tmp = {0};
    tmp.alias = "x";
    tmp.tables = (struct mp_table *)t;
    tmp.ntables = 1;
    mapping_write_index(&tmp, out);
}

/* The generated mappings with replicas left out (a replica change needs no
 * reindex). The reference dialect knows every type. */
static int body_for_plan(const struct mp_index *ix, sbuf *out) {
    struct search_dialect d;
    search_dialect_named("opensearch-99", &d);
    struct mp_index tmp = *ix;
    tmp.replicas = 0;
    char err[256];
    return index_mapping_body(&tmp, &d, false, out, err, sizeof err);
}

/* Which index configs of nw source cfg feeds (an array of nw.nindices,
 * the caller's to free); each other one noted: the daemons of its sources
 * check it against their servers. */
static bool *fed_here(const struct ss_config *cfg, const struct mapping *nw, sbuf *notes) {
    const char *mapping = config_mapping_name(cfg), *source = cfg->source.name;
    bool *mine = xcalloc(nw->nindices + 1, sizeof *mine);
    for (size_t i = 0; i < nw->nindices; i++) {
        mine[i] = mp_index_fed_by(&nw->indices[i], mapping, source);
        if (!mine[i])
            sbuf_printf(notes, "index %s: not fed by source %s: checked as a file only; the "
                        "daemons of its sources check it against their servers\n",
                        nw->indices[i].alias, source);
    }
    return mine;
}

/* The index bodies of nw generate (types valid for some engine): 0, or -1
 * with err (named after the file, name). */
static int bodies_generate(const struct mapping *nw, const char *name, char *err, size_t errlen) {
    for (size_t i = 0; i < nw->nindices; i++) {
        sbuf b = SBUF_INIT;
        struct search_dialect d;
        search_dialect_named("opensearch-99", &d);
        char why[1024];
        int r = index_mapping_body(&nw->indices[i], &d, false, &b, why, sizeof why);
        sbuf_free(&b);
        if (r < 0) return errf(err, errlen, "%s: %s", name, why);
    }
    return 0;
}

/* The plan, one line each; returns the number of changes. */
static int write_plan(const struct mapping *old, const struct mapping *nw, sbuf *out) {
    int changes = 0;
    sbuf a = SBUF_INIT, b = SBUF_INIT;
    for (size_t i = 0; i < nw->nindices; i++) {
        const struct mp_index *n = &nw->indices[i];
        const struct mp_index *o = mp_index_named(old, n->alias);
        if (!o) {
            sbuf_printf(out, "+ index %s (%zu table%s) -- needs a first build (reindex)\n", n->alias,
                    n->ntables, n->ntables == 1 ? "" : "s");
            for (size_t t = 0; t < n->ntables; t++)
                sbuf_printf(out, "  + table %s.%s\n", n->tables[t].db, n->tables[t].table);
            changes++;
            continue;
        }
        sbuf_reset(&a);
        sbuf_reset(&b);
        mapping_write_index(o, &a);
        mapping_write_index(n, &b);
        if (!strcmp(a.data, b.data)) continue;
        changes++;
        sbuf_reset(&a);
        sbuf_reset(&b);
        int ra = body_for_plan(o, &a), rb = body_for_plan(n, &b);
        bool reindex = ra < 0 || rb < 0 || strcmp(a.data, b.data) != 0;
        sbuf_printf(out, "~ index %s%s\n", n->alias,
                reindex ? " -- generated mapping changed: needs a reindex" : "");
        if (o->shards != n->shards)
            sbuf_printf(out, "  ~ shards %d -> %d\n", o->shards, n->shards);
        if (o->replicas != n->replicas)
            sbuf_printf(out, "  ~ replicas %d -> %d\n", o->replicas, n->replicas);
        if (o->history_retention != n->history_retention)
            sbuf_printf(out, "  ~ history_retention %d -> %d\n", o->history_retention,
                    n->history_retention);
        for (size_t t = 0; t < n->ntables; t++) {
            const struct mp_table *nt = &n->tables[t], *ot = find_table(o, nt);
            if (!ot) {
                sbuf_printf(out, "  + table %s.%s\n", nt->db, nt->table);
                continue;
            }
            sbuf_reset(&a);
            sbuf_reset(&b);
            table_json(ot, &a);
            table_json(nt, &b);
            if (strcmp(a.data, b.data)) sbuf_printf(out, "  ~ table %s.%s\n", nt->db, nt->table);
            if (!ot->where != !nt->where || (ot->where && strcmp(ot->where, nt->where)))
                sbuf_printf(out, "    ~ where %s%s%s -> %s%s%s -- documents already indexed "
                                 "follow it as their rows change: reindex (or check --repair) "
                                 "to apply it to all\n",
                            ot->where ? "\"" : "", ot->where ? ot->where : "(none)",
                            ot->where ? "\"" : "", nt->where ? "\"" : "",
                            nt->where ? nt->where : "(none)", nt->where ? "\"" : "");
        }
        for (size_t t = 0; t < o->ntables; t++)
            if (!find_table(n, &o->tables[t]))
                sbuf_printf(out, "  - table %s.%s\n", o->tables[t].db, o->tables[t].table);
    }
    for (size_t i = 0; i < old->nindices; i++)
        if (!mp_index_named(nw, old->indices[i].alias)) {
            sbuf_printf(out, "- index %s (its engine indices are left in place)\n",
                    old->indices[i].alias);
            changes++;
        }
    sbuf_free(&a);
    sbuf_free(&b);
    return changes;
}

/* "replicas" left out of an index config: as many as the engine's data
 * nodes can hold (one, none on a single node); 1 when the engine does not
 * answer. The engine is asked once, at the first such index config. */
static void default_replicas(const struct ss_config *cfg, struct mapping *nw) {
    for (size_t i = 0; i < nw->nindices; i++) {
        if (nw->indices[i].replicas != MP_REPLICAS_DEFAULT) continue;
        char e[512];
        int r = config_default_replicas(cfg, e, sizeof e);
        for (size_t j = i; j < nw->nindices; j++)
            if (nw->indices[j].replicas == MP_REPLICAS_DEFAULT)
                nw->indices[j].replicas = r < 0 ? 1 : r;
        break;
    }
}

/* The validated mapping nw stored as mapping's new generation (the source
 * registered first) and the import recorded in sync_log; a failure of that
 * record only goes to mi->log_err (the mapping is stored). MI_OK or
 * MI_RUNTIME (mi->err). */
static int import_apply(const struct ss_config *cfg, MYSQL *meta, const char *mapping,
                        const struct mapping *nw, struct mapping_import *mi) {
    sbuf s = SBUF_INIT;
    sbuf_adds(&s, "INSERT IGNORE INTO sources (name) VALUES (");
    db_quote(meta, &s, cfg->source.name, strlen(cfg->source.name));
    sbuf_adds(&s, ")");
    int r = db_exec(meta, s.data, mi->err, sizeof mi->err);
    sbuf_free(&s);
    if (r < 0 || mapping_db_save(meta, mapping, nw, mi->err, sizeof mi->err) < 0)
        return MI_RUNTIME;
    mi->applied = true;
    s = (sbuf)SBUF_INIT;
    sbuf_adds(&s, "INSERT INTO sync_log (source, event, detail) VALUES (");
    db_quote(meta, &s, cfg->source.name, strlen(cfg->source.name));
    sbuf_adds(&s, ", 'mapping_import', ");
    db_quote(meta, &s, mi->name, strlen(mi->name));
    sbuf_adds(&s, ")");
    mi->log_err[0] = '\0';
    if (db_exec(meta, s.data, mi->log_err, sizeof mi->log_err) < 0) /* stored: not fatal */
        mi->log_err[sizeof mi->log_err - 1] = '\0';
    else
        mi->log_err[0] = '\0';
    sbuf_free(&s);
    return MI_OK;
}

int mapping_import_run(const struct ss_config *cfg, MYSQL *meta, struct mapping_import *mi) {
    struct mapping nw = {0}, old = {0}, ex = {0};
    struct mp_schema schema = {0};
    MYSQL *src = NULL;
    bool *mine = NULL;
    int rc = MI_OK;
    char *err = mi->err;
    size_t errlen = sizeof mi->err;
    mi->changes = 0;
    mi->applied = false;
    mi->nproblems = 0;
    if (mapping_parse(mi->name, mi->text, mi->len, &nw, err, errlen) < 0) {
        rc = MI_INVALID;
        goto out;
    }
    default_replicas(cfg, &nw);
    db_params sp = db_params_source(cfg);
    src = db_connect(&sp, err, errlen);
    int rowfmt = src ? db_check_row_binlog(src, err, errlen) : -1;
    if (rowfmt == 1) { /* before anything is queued: a build would read nothing later */
        rc = MI_INVALID;
        goto out;
    }
    /* validated as it runs: the index configs this source feeds, each one of
     * several sources as this one's (mapping_source.h), one with table
     * patterns as one unit per shard the source has (mapping_shard.h) */
    const char *mapping = config_mapping_name(cfg);
    mapping_copy(&ex, &nw);
    mapping_for_source(&ex, mapping, cfg->source.name);
    mine = fed_here(cfg, &nw, &mi->notes);
    if (!src || rowfmt < 0 || mapping_expand(src, &ex, NULL, 0, NULL, err, errlen) < 0 ||
        mapping_schema_load(src, &ex, &schema, err, errlen) < 0) {
        rc = MI_RUNTIME;
        goto out;
    }
    int nerr = mapping_validate(&ex, &schema, &mi->problems);
    if (!nerr) {
        nerr = mapping_check_where(src, &ex, &mi->problems, err, errlen);
        int nt = nerr < 0 ? 0 : rt_check_mapping(src, &ex, &mi->problems, err, errlen);
        if (nerr < 0 || nt < 0) {
            rc = MI_RUNTIME;
            goto out;
        }
        nerr += nt;
    }
    if (!nerr) nerr = mapping_types_from(&nw, &ex, mine, &mi->problems);
    if (nerr) {
        mi->nproblems = nerr;
        snprintf(err, errlen, "%s: %d problem%s:", mi->name, nerr, nerr == 1 ? "" : "s");
        rc = MI_INVALID;
        goto out;
    }
    if (bodies_generate(&nw, mi->name, err, errlen) < 0) {
        rc = MI_INVALID;
        goto out;
    }
    if (mapping_db_load(meta, mapping, &old, err, errlen) < 0) {
        rc = MI_RUNTIME;
        goto out;
    }
    mi->changes = write_plan(&old, &nw, &mi->plan);
    if (mi->changes && mi->apply) rc = import_apply(cfg, meta, mapping, &nw, mi);
out:
    free(mine);
    mapping_free(&nw);
    mapping_free(&ex);
    mapping_free(&old);
    mp_schema_free(&schema);
    db_close(src);
    return rc;
}

void mapping_import_free(struct mapping_import *mi) {
    sbuf_free(&mi->notes);
    sbuf_free(&mi->plan);
    sbuf_free(&mi->problems);
}
