/* reindex_buckets: how a build's rows are cut into buckets, one job each
 * (see reindex_int.h): ranges of the key (its quantiles, or its spread when
 * the keys are dense), or MOD(bucket column, n) for reindex --by-mod; the
 * conditions and the params a job reads them from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sync/pipeline/docbuild.h"
#include "sync/reindex/reindex.h"
#include "sync/reindex/reindex_int.h"

const char *rx_key_col(const struct mp_table *t) {
    const struct mp_column *k = mp_table_key(t);
    return k ? k->name : NULL;
}

/* SQL orders and compares its values as numbers (a string key holding "18"
 * does neither) */
static bool key_is_integer(const struct mp_table *t) {
    const struct mp_column *k = mp_table_key(t);
    return k && mapping_is_integer_type(k->mysql_type);
}

/* ---------- bucket conditions ---------- */

int reindex_bucket_cond(const char *key, char *const *bounds, int b, int n, sbuf *out) {
    if (n < 1 || b < 0 || b >= n) return -1;
    const char *lo = b > 0 ? bounds[b - 1] : NULL, *hi = b < n - 1 ? bounds[b] : NULL;
    if (b > 0 && !lo) { /* fewer rows than buckets: this one is empty */
        sbuf_adds(out, "0=1");
        return 0;
    }
    if ((lo && !docbuild_is_integer(lo)) || (hi && !docbuild_is_integer(hi))) return -1;
    if (lo) {
        db_ident(out, key);
        sbuf_printf(out, " >= %s", lo);
    }
    if (hi) {
        if (lo) sbuf_adds(out, " AND ");
        db_ident(out, key);
        sbuf_printf(out, " < %s", hi);
    }
    return 0;
}

/* Samples kept while walking a key: at most this many, every stride-th key */
#define QUANTILE_SAMPLES 4096

/* The n-1 keys of table tb that split its rows into n buckets of about
 * equal size (bounds[k-1] is about the key at row count*k/n, k = 1..n-1,
 * in key order; NULL when the table has fewer rows). One pass over the
 * key's index, streamed: every stride-th key is kept, and when the sample
 * is full every other one is dropped and the stride doubles, so memory
 * stays bounded and a bound is off by less than count/QUANTILE_SAMPLES*2
 * rows. Equal-width ranges of the key, as before, put every row in one
 * bucket when a few keys lie far from the rest (ids 10,000,001 and up
 * beside 50k small ones); this walk reads each key once, whatever the
 * number of buckets. Rows inserted after the split fall into the first or
 * the last bucket, which have no lower or upper bound (a job reads no
 * further than the largest key the table held at its first page: the
 * later ones come as dual writes, reindex_runner.c table_end). A table with fewer
 * rows than buckets repeats a bound: the bucket between is empty. */
static int key_quantiles(MYSQL *src, const struct mp_table *tb, const char *key, int n,
                         char **bounds, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    db_select_from(&q, key, tb->db, tb->table);
    sbuf_adds(&q, " ORDER BY ");
    db_ident(&q, key);
    int rc = 0;
    if (mysql_real_query(src, q.data, q.len) != 0) {
        rc = errf(err, errlen, "%s (%u) in: %.200s", mysql_error(src), mysql_errno(src), q.data);
        sbuf_free(&q);
        return rc;
    }
    /* streamed, not db_query: every key of the table passes, only the
     * samples are kept (memory bounded by QUANTILE_SAMPLES, not the table) */
    MYSQL_RES *res = mysql_use_result(src);
    if (!res) {
        rc = errf(err, errlen, "%s (%u) in: %.200s", mysql_error(src), mysql_errno(src), q.data);
        sbuf_free(&q);
        return rc;
    }
    char **sample = xcalloc(QUANTILE_SAMPLES, sizeof *sample);
    size_t kept = 0;
    unsigned long long count = 0, stride = 1;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        if (count++ % stride) continue;
        if (kept == QUANTILE_SAMPLES) { /* keep samples 0, 2, 4, ...: rows 0, 2s, 4s, ... */
            for (size_t i = 0; i < kept; i++) {
                if (i % 2) free(sample[i]);
                else sample[i / 2] = sample[i];
            }
            kept /= 2;
            stride *= 2;
            if ((count - 1) % stride) continue;
        }
        sample[kept++] = row[0] ? xstrdup(row[0]) : NULL;
    }
    if (mysql_errno(src))
        rc = errf(err, errlen, "reading the keys of %s.%s: %s (%u)", tb->db, tb->table,
                  mysql_error(src), mysql_errno(src));
    mysql_free_result(res);
    for (int k = 1; rc == 0 && k < n; k++) {
        unsigned long long at = count * (unsigned long long)k / (unsigned long long)n;
        size_t j = (size_t)(at / stride);
        if (at >= count || j >= kept || !sample[j]) continue;
        bounds[k - 1] = xstrdup(sample[j]);
    }
    for (size_t i = 0; i < kept; i++) free(sample[i]);
    free(sample);
    sbuf_free(&q);
    return rc;
}

/* Probes of the key's spread: equal-width slices of [min, max] looked at */
#define SPREAD_PROBES 64

static __int128 int_of(const char *s) {
    __int128 v = 0;
    bool neg = s[0] == '-';
    for (const char *p = s + neg; *p >= '0' && *p <= '9'; p++) v = v * 10 + (*p - '0');
    return neg ? -v : v;
}

static char *int_str(__int128 v) {
    char buf[48], *p = buf + sizeof buf;
    bool neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    *--p = '\0';
    do *--p = (char)('0' + (int)(u % 10)); while ((u /= 10) && p > buf + 1);
    if (neg) *--p = '-';
    return xstrdup(p);
}

/* The smallest key of tb at or above from (1: *out set, 0: none, -1: error):
 * one index seek. */
static int key_at_or_above(MYSQL *src, const struct mp_table *tb, const char *key, const char *from,
                           char **out, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    db_select_from(&q, key, tb->db, tb->table);
    if (from) {
        sbuf_adds(&q, " WHERE ");
        db_ident(&q, key);
        sbuf_printf(&q, " >= %s", from);
    }
    sbuf_adds(&q, " ORDER BY ");
    db_ident(&q, key);
    sbuf_adds(&q, " LIMIT 1");
    int rc = db_row1(src, q.data, q.len, out, 1, err, errlen);
    sbuf_free(&q);
    if (rc == 1 && (!*out || !docbuild_is_integer(*out))) {
        free(*out);
        *out = NULL;
        return 0;
    }
    return rc;
}

/* Equal-width bounds of [min, max] when the key is spread over the whole
 * range: each of SPREAD_PROBES slices holds a key (an index seek per slice,
 * not a walk). Dense keys (auto-increment with deletes) split this way in a
 * few dozen reads. 1: bounds set; 0: the key has gaps (or too few values),
 * key_quantiles must place the bounds; -1: error. */
static int key_spread_bounds(MYSQL *src, const struct mp_table *tb, const char *key, int n,
                             char **bounds, char *err, size_t errlen) {
    char *lo_s = NULL, *hi_s = NULL;
    int rc = key_at_or_above(src, tb, key, NULL, &lo_s, err, errlen);
    if (rc <= 0) return rc;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT MAX(");
    db_ident(&q, key);
    sbuf_adds(&q, ") FROM ");
    db_ident(&q, tb->db);
    sbuf_addc(&q, '.');
    db_ident(&q, tb->table);
    rc = db_row1(src, q.data, q.len, &hi_s, 1, err, errlen);
    sbuf_free(&q);
    if (rc < 0 || !hi_s || !docbuild_is_integer(hi_s)) {
        free(lo_s);
        free(hi_s);
        return rc < 0 ? -1 : 0;
    }
    __int128 lo = int_of(lo_s), width = int_of(hi_s) - lo + 1;
    free(lo_s);
    free(hi_s);
    if (width < (__int128)SPREAD_PROBES * 4) return 0;
    for (int i = 1; i < SPREAD_PROBES; i++) { /* slice i-1 holds a key below its end? */
        char *start = int_str(lo + width * (i - 1) / SPREAD_PROBES);
        __int128 end = lo + width * i / SPREAD_PROBES;
        char *next = NULL;
        rc = key_at_or_above(src, tb, key, start, &next, err, errlen);
        free(start);
        bool held = rc == 1 && int_of(next) < end;
        free(next);
        if (rc < 0) return -1;
        if (!held) return 0;
    }
    for (int k = 1; k < n; k++) bounds[k - 1] = int_str(lo + width * k / n);
    return 1;
}

static void free_bounds(char ***bounds, size_t ntables, int n) {
    if (!bounds) return;
    for (size_t t = 0; t < ntables; t++) {
        if (!bounds[t]) continue;
        for (int i = 0; i < n; i++) free(bounds[t][i]);
        free(bounds[t]);
    }
    free(bounds);
}

/* Range bounds of every document table with an integer key (NULL entries
 * for the others), found once per request: equal widths when the key has
 * no gaps (a few dozen seeks), else the key's quantiles (one walk of its
 * index). */
static char ***range_bounds(MYSQL *src, const struct mp_index *ix, int n, char *err,
                            size_t errlen) {
    char ***bounds = xcalloc(ix->ntables ? ix->ntables : 1, sizeof *bounds);
    for (size_t t = 0; n > 1 && t < ix->ntables; t++) {
        if (!rx_doc_table(ix, t) || !key_is_integer(&ix->tables[t])) continue;
        bounds[t] = xcalloc((size_t)n, sizeof **bounds);
        const struct mp_table *tb = &ix->tables[t];
        int spread = key_spread_bounds(src, tb, rx_key_col(tb), n, bounds[t], err, errlen);
        if (spread < 0 || (spread == 0 && key_quantiles(src, tb, rx_key_col(tb), n, bounds[t], err,
                                                        errlen) < 0)) {
            free_bounds(bounds, ix->ntables, n);
            return NULL;
        }
    }
    return bounds;
}

/* params of bucket b for every document table; bounds from range_bounds */
static int bucket_params(const struct mp_index *ix, char ***bounds, int b, int n, bool by_mod,
                         sbuf *out, char *err, size_t errlen) {
    for (size_t t = 0; t < ix->ntables; t++) {
        if (!rx_doc_table(ix, t)) continue;
        const struct mp_table *tb = &ix->tables[t];
        const char *key = rx_key_col(tb);
        sbuf_printf(out, "%zu\t", t);
        if (n == 1) {
            sbuf_addc(out, '\n');
            continue;
        }
        if (!by_mod && !key_is_integer(tb)) { /* no ranges of a string key: all in bucket 0 */
            sbuf_adds(out, b != 0 ? "0=1\n" : "\n");
            continue;
        }
        if (by_mod) {
            const char *col = tb->bucket_column ? tb->bucket_column : key;
            sbuf_adds(out, MOD_BUCKET "ABS(COALESCE(");
            db_ident(out, col);
            sbuf_printf(out, ", 0)), %d) = %d\n", n, b);
            continue;
        }
        /* key ranges of about equal rows: boundaries at the table's quantiles */
        int rc = reindex_bucket_cond(key, bounds[t], b, n, out);
        sbuf_addc(out, '\n');
        if (rc < 0)
            return errf(err, errlen, "%s.%s: its key's quantiles are not integers", tb->db,
                        tb->table);
    }
    return 0;
}

/* (reindex_int.h) */
int rx_plan_buckets(MYSQL *src, const struct mapping *m, size_t at, int n, bool by_mod,
                    sbuf *params, int *njobs, char *err, size_t errlen) {
    const char *alias = m->indices[at].alias;
    *njobs = 0;
    /* [reindex] buckets shared out among the shards, at least one each: n
     * in every shard made a build of many small shards run many small jobs,
     * each with its ramp of small first pages and its wait for the engine */
    size_t nunits = 0;
    while (at + nunits < m->nindices && !strcmp(m->indices[at + nunits].alias, alias)) nunits++;
    if (nunits > 1) n = (n + (int)nunits - 1) / (int)nunits;
    for (size_t u = at; u < m->nindices && !strcmp(m->indices[u].alias, alias); u++) {
        const struct mp_index *ux = &m->indices[u];
        char ***bounds = by_mod ? NULL : range_bounds(src, ux, n, err, errlen);
        if (!by_mod && !bounds) return -1;
        for (int b = 0; b < n; b++) {
            sbuf_printf(params, "%s", params->len ? "\x1e" : "");
            if (ux->unit) sbuf_printf(params, "%s%s\n", RX_UNIT_LINE, ux->unit);
            if (bucket_params(ux, bounds, b, n, by_mod, params, err, errlen) < 0) {
                free_bounds(bounds, ux->ntables, n);
                return -1;
            }
            (*njobs)++;
        }
        free_bounds(bounds, ux->ntables, n);
    }
    return 0;
}
