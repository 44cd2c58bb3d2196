/* ops.c: what the node's operations share (see ops.h): their outcome, the
 * connections they open, the index config an operation names. */
#include "sync/ops/ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "db.h"
#include "sbuf.h"
#include "search/search.h"

int ops_exit(enum ops_status st) {
    switch (st) {
    case OPS_OK: return EXIT_OK;
    case OPS_INVALID:
    case OPS_UNKNOWN:
    case OPS_REFUSED: return EXIT_USAGE;
    default: return EXIT_RUNTIME;
    }
}

enum ops_status ops_fail(struct ops_err *e, enum ops_status st, enum ops_at at, const char *fmt,
                         ...) {
    e->st = st;
    e->at = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return st;
}

MYSQL *ops_meta(const struct ops_env *env, bool *owned, struct ops_err *e) {
    *owned = false;
    if (env->meta) return env->meta;
    db_params mp = db_params_metadata(env->cfg);
    mp.database = env->cfg->metadata.database;
    MYSQL *m = db_connect(&mp, e->msg, sizeof e->msg);
    if (!m) {
        e->st = OPS_DOWN;
        e->at = OPS_AT_METADATA;
        return NULL;
    }
    *owned = true;
    return m;
}

void ops_meta_done(MYSQL *m, bool owned) {
    if (owned) db_close(m);
}

MYSQL *ops_source(const struct ops_env *env, struct ops_err *e) {
    db_params sp = db_params_source(env->cfg);
    MYSQL *s = db_connect(&sp, e->msg, sizeof e->msg);
    if (!s) e->st = OPS_DOWN, e->at = OPS_AT_SOURCE;
    return s;
}

struct search_conn *ops_engine(const struct ops_env *env, struct ops_err *e) {
    if (!env->client) {
        ops_fail(e, OPS_STARTING, OPS_AT_ENGINE,
                 "the daemon is still starting: the engine is not detected yet");
        return NULL;
    }
    return search_conn_new(env->client);
}

enum ops_status ops_index_find(const struct ops_env *env, MYSQL *meta, const char *alias,
                               struct ops_index *ix, struct ops_err *e) {
    memset(ix, 0, sizeof *ix);
    const char *source = env->cfg->source.name;
    const char *mapping = config_mapping_name(env->cfg);
    sbuf q = SBUF_INIT;
    /* the index configs this source feeds (MP_FED_BY_PARAMS): its own, or
     * those of the mapping it shares that list it among their sources */
    sbuf_adds(&q, "SELECT id, state, current_version, building_version FROM index_configs "
                  "WHERE source = ");
    db_quote(meta, &q, mapping, strlen(mapping));
    sbuf_adds(&q, " AND ((sources IS NULL AND source = ");
    db_quote(meta, &q, source, strlen(source));
    sbuf_adds(&q, ") OR FIND_IN_SET(");
    db_quote(meta, &q, source, strlen(source));
    sbuf_adds(&q, ", sources) > 0) AND alias = ");
    db_quote(meta, &q, alias, strlen(alias));
    char *row[4] = {0};
    char err[1024];
    int rc = db_row1(meta, q.data, q.len, row, 4, err, sizeof err);
    sbuf_free(&q);
    if (rc < 0) return ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "%s", err);
    if (rc == 0)
        return ops_fail(e, OPS_UNKNOWN, OPS_AT_METADATA, "source %s has no index config \"%s\"",
                        source, alias);
    ix->id = row[0] ? strtoull(row[0], NULL, 10) : 0;
    snprintf(ix->state, sizeof ix->state, "%s", row[1] ? row[1] : "");
    ix->current = row[2] ? (unsigned)strtoul(row[2], NULL, 10) : 0;
    ix->building = row[3] ? (unsigned)strtoul(row[3], NULL, 10) : 0;
    db_row_free(row, 4);
    e->st = OPS_OK;
    return OPS_OK;
}
