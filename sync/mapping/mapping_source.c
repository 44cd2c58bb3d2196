/* mapping_source: which index configs a source feeds, and the mapping as
 * one source runs it (see mapping_source.h). */
#include "sync/mapping/mapping_source.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sync/mapping/mapping_shard.h"

int mp_source_name_check(const char *name, char *why, size_t whylen) {
    size_t n = strlen(name);
    if (!n || n > 64) {
        snprintf(why, whylen, "source name \"%s\" must be 1 to 64 characters", name);
        return -1;
    }
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_.-", *p)) {
            snprintf(why, whylen, "source name \"%s\": only letters, digits, '_', '.' and '-' "
                     "(as [source] name)", name);
            return -1;
        }
    return 0;
}

bool mp_index_fed_by(const struct mp_index *ix, const char *mapping, const char *source) {
    if (!ix->nsources) return !strcmp(mapping, source);
    for (size_t i = 0; i < ix->nsources; i++)
        if (!strcmp(ix->sources[i], source)) return true;
    return false;
}

void mapping_for_source(struct mapping *m, const char *mapping, const char *source) {
    size_t k = 0;
    for (size_t i = 0; i < m->nindices; i++) {
        struct mp_index *ix = &m->indices[i];
        if (!mp_index_fed_by(ix, mapping, source)) {
            mp_index_free(ix);
            continue;
        }
        if (mp_index_multi(ix)) {
            free(ix->source);
            ix->source = xstrdup(source);
            if (!mp_index_sharded(ix)) mp_index_make_ids(ix);
        }
        if (k != i) m->indices[k] = *ix;
        k++;
    }
    m->nindices = k;
}

void mp_fed_by_sql(MYSQL *m, sbuf *q, const char *prefix, const char *mapping,
                   const char *source) {
    sbuf_printf(q, "(%ssource = ", prefix);
    db_quote(m, q, mapping, strlen(mapping));
    sbuf_printf(q, " AND ((%ssources IS NULL AND %ssource = ", prefix, prefix);
    db_quote(m, q, source, strlen(source));
    sbuf_adds(q, ") OR FIND_IN_SET(");
    db_quote(m, q, source, strlen(source));
    sbuf_printf(q, ", %ssources) > 0))", prefix);
}

void mp_sources_join(const struct mp_index *ix, sbuf *out) {
    for (size_t i = 0; i < ix->nsources; i++)
        sbuf_printf(out, "%s%s", i ? "," : "", ix->sources[i]);
}

void mp_sources_split(struct mp_index *ix, const char *list) {
    for (size_t i = 0; i < ix->nsources; i++) free(ix->sources[i]);
    free(ix->sources);
    ix->sources = NULL;
    ix->nsources = 0;
    if (!list || !*list) return;
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) {
            ix->sources = xrealloc(ix->sources, (ix->nsources + 1) * sizeof *ix->sources);
            ix->sources[ix->nsources++] = xstrndup(p, n);
        }
        if (!e) break;
        p = e + 1;
    }
}
