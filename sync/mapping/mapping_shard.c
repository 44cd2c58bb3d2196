/* mapping_shard: table patterns, their shards, and the units an index
 * config is expanded into (see mapping_shard.h). The regular expressions
 * are POSIX extended ones (regcomp): the C library's, nothing written here
 * but the placeholders around them. */
#include "sync/mapping/mapping_shard.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/* one placeholder or a run of literal text of a name part */
struct piece {
    bool ph;            /* a placeholder */
    char name[64];      /* its name */
    const char *re;     /* {name:re}: the regex (not NUL-terminated), NULL for {name} */
    size_t relen;
    const char *lit;    /* literal text */
    size_t litlen;
};

/* the end of a placeholder's regex: the '}' that closes it (braces inside
 * it, like {2,4}, nest; a backslash escapes one character) */
static const char *regex_end(const char *p) {
    int depth = 0;
    for (; *p; p++) {
        if (*p == '\\' && p[1]) p++;
        else if (*p == '{') depth++;
        else if (*p == '}' && depth-- == 0) return p;
    }
    return NULL;
}

/* Split part into pieces (at most max). The count, or -1 with why. */
static int pieces_of(const char *part, struct piece *v, int max, char *why, size_t whylen) {
    int n = 0;
    const char *p = part;
    while (*p) {
        if (n == max) return snprintf(why, whylen, "too many placeholders in \"%s\"", part), -1;
        struct piece *x = &v[n];
        memset(x, 0, sizeof *x);
        if (*p != '{') {
            const char *q = p;
            while (*q && *q != '{') {
                if (*q == '}') {
                    snprintf(why, whylen, "\"%s\": a '}' without its '{'", part);
                    return -1;
                }
                q++;
            }
            x->lit = p, x->litlen = (size_t)(q - p);
            p = q;
            n++;
            continue;
        }
        const char *q = p + 1;
        size_t nl = 0;
        while (isalnum((unsigned char)q[nl]) || q[nl] == '_') nl++;
        if (!nl || nl >= sizeof x->name || isdigit((unsigned char)q[0])) {
            snprintf(why, whylen, "\"%s\": a placeholder is {name} or {name:regex}, its name "
                     "letters, digits and _ (not starting with a digit)", part);
            return -1;
        }
        x->ph = true;
        memcpy(x->name, q, nl);
        x->name[nl] = '\0';
        for (char *c = x->name; *c; c++) *c = (char)tolower((unsigned char)*c);
        q += nl;
        if (*q == '}') {
            p = q + 1;
        } else if (*q == ':') {
            const char *e = regex_end(q + 1);
            if (!e || e == q + 1) {
                snprintf(why, whylen, "\"%s\": placeholder {%s:...} has no regex or no closing "
                         "'}'", part, x->name);
                return -1;
            }
            x->re = q + 1, x->relen = (size_t)(e - q - 1);
            p = e + 1;
        } else {
            snprintf(why, whylen, "\"%s\": placeholder {%s must end with '}' or go on with ':' "
                     "and a regex", part, x->name);
            return -1;
        }
        n++;
    }
    return n;
}

bool mp_is_pattern(const char *name) { return name && strchr(name, '{'); }

/* the value bound to name in binds ("name=value"), NULL when none */
static const char *bound(char *const *binds, size_t n, const char *name) {
    size_t l = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(binds[i], name, l) && binds[i][l] == '=') return binds[i] + l + 1;
    return NULL;
}

static void add_ere_literal(sbuf *re, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (strchr(".[]()*+?{}|^$\\", s[i])) sbuf_addc(re, '\\');
        sbuf_addc(re, s[i]);
    }
}

/* groups a regex opens: '(' not escaped, not in a bracket expression */
static size_t groups_in(const char *s, size_t n) {
    size_t g = 0;
    bool bracket = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) i++;
        else if (bracket) bracket = s[i] != ']';
        else if (s[i] == '[') bracket = true;
        else if (s[i] == '(') g++;
    }
    return g;
}

int mp_pattern_check(const char *part, bool defines, char *why, size_t whylen) {
    struct piece v[16];
    int n = pieces_of(part, v, 16, why, whylen);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (!v[i].ph || !v[i].re) continue;
        if (!defines) {
            snprintf(why, whylen, "\"%s\": only the root table binds placeholders ({%s:...}); "
                     "other tables use them as {%s}", part, v[i].name, v[i].name);
            return -1;
        }
        sbuf re = SBUF_INIT;
        sbuf_addc(&re, '^');
        sbuf_add(&re, v[i].re, v[i].relen);
        sbuf_addc(&re, '$');
        regex_t rx;
        int rc = regcomp(&rx, re.data, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[128];
            regerror(rc, &rx, msg, sizeof msg);
            snprintf(why, whylen, "\"%s\": the regex of {%s} (%.*s): %s", part, v[i].name,
                     (int)v[i].relen, v[i].re, msg);
            sbuf_free(&re);
            return -1;
        }
        regfree(&rx);
        sbuf_free(&re);
        for (int j = 0; j < i; j++)
            if (v[j].ph && v[j].re && !strcmp(v[j].name, v[i].name)) {
                snprintf(why, whylen, "\"%s\": {%s} is bound twice", part, v[i].name);
                return -1;
            }
    }
    return 0;
}

void mp_pattern_names(const char *part, char ***names, size_t *n) {
    struct piece v[16];
    char why[256];
    int k = pieces_of(part, v, 16, why, sizeof why);
    for (int i = 0; i < k; i++)
        if (v[i].ph && v[i].re) {
            *names = xrealloc(*names, (*n + 1) * sizeof **names);
            (*names)[(*n)++] = xstrdup(v[i].name);
        }
}

bool mp_pattern_match(const char *part, const char *name, char ***binds, size_t *nbinds) {
    struct piece v[16];
    char why[256];
    int n = pieces_of(part, v, 16, why, sizeof why);
    if (n < 0) return false;
    sbuf re = SBUF_INIT;
    sbuf_addc(&re, '^');
    size_t group[16] = {0}, g = 0;
    for (int i = 0; i < n; i++) {
        if (!v[i].ph) {
            add_ere_literal(&re, v[i].lit, v[i].litlen);
        } else if (!v[i].re) { /* a use: the value bound already */
            const char *b = bound(*binds, *nbinds, v[i].name);
            if (!b) {
                sbuf_free(&re);
                return false;
            }
            add_ere_literal(&re, b, strlen(b));
        } else {
            group[i] = ++g;
            sbuf_addc(&re, '(');
            sbuf_add(&re, v[i].re, v[i].relen);
            sbuf_addc(&re, ')');
            g += groups_in(v[i].re, v[i].relen);
        }
    }
    sbuf_addc(&re, '$');
    regex_t rx;
    bool ok = false;
    if (regcomp(&rx, re.data, REG_EXTENDED) == 0) {
        regmatch_t m[64];
        size_t nm = g + 1 < 64 ? g + 1 : 64;
        if (regexec(&rx, name, nm, m, 0) == 0) {
            ok = true;
            for (int i = 0; i < n; i++) {
                if (!group[i] || group[i] >= nm || m[group[i]].rm_so < 0) continue;
                sbuf b = SBUF_INIT;
                sbuf_printf(&b, "%s=%.*s", v[i].name, (int)(m[group[i]].rm_eo - m[group[i]].rm_so),
                            name + m[group[i]].rm_so);
                *binds = xrealloc(*binds, (*nbinds + 1) * sizeof **binds);
                (*binds)[(*nbinds)++] = sbuf_detach(&b);
            }
        }
        regfree(&rx);
    }
    sbuf_free(&re);
    return ok;
}

/* part with each placeholder replaced by what put() writes for it (false:
 * it cannot be, put has said why): the one walk of a part's pieces that
 * both substitution and as_defining make. NULL on failure. */
typedef bool (*put_fn)(void *ctx, const struct piece *p, sbuf *out);
static char *rewrite(const char *part, put_fn put, void *ctx, char *why, size_t whylen) {
    struct piece v[16];
    int n = pieces_of(part, v, 16, why, whylen);
    if (n < 0) return NULL;
    sbuf out = SBUF_INIT;
    sbuf_adds(&out, "");
    for (int i = 0; i < n; i++) {
        if (!v[i].ph) {
            sbuf_add(&out, v[i].lit, v[i].litlen);
        } else if (!put(ctx, &v[i], &out)) {
            sbuf_free(&out);
            return NULL;
        }
    }
    return sbuf_detach(&out);
}

struct subst_put {
    const char *part;
    char *const *binds;
    size_t nbinds;
    char *why;
    size_t whylen;
};

static bool put_bound(void *ctx, const struct piece *p, sbuf *out) {
    struct subst_put *c = ctx;
    const char *b = bound(c->binds, c->nbinds, p->name);
    if (!b)
        snprintf(c->why, c->whylen, "\"%s\": {%s} is not bound by the root table's pattern",
                 c->part, p->name);
    else
        sbuf_adds(out, b);
    return b != NULL;
}

char *mp_pattern_subst(const char *part, char *const *binds, size_t nbinds, char *why,
                       size_t whylen) {
    struct subst_put c = {part, binds, nbinds, why, whylen};
    return rewrite(part, put_bound, &c, why, whylen);
}

/* ------------------------------------------------------------- id template */

static bool index_has_patterns_rel(const struct mp_relation *r, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (mp_is_pattern(r[i].db) || mp_is_pattern(r[i].table) ||
            index_has_patterns_rel(r[i].relations, r[i].nrelations))
            return true;
    return false;
}

bool mp_index_sharded(const struct mp_index *ix) {
    if (ix->unit) return true;
    for (size_t t = 0; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        if (mp_is_pattern(tb->db) || mp_is_pattern(tb->table) || mp_is_pattern(tb->parent_db) ||
            mp_is_pattern(tb->parent_table) ||
            index_has_patterns_rel(tb->relations, tb->nrelations))
            return true;
    }
    return false;
}

const char *mp_id_template(const struct mp_index *ix) {
    if (ix->id_template) return ix->id_template;
    if (ix->unique_keys) return "{key}";
    bool sharded = mp_index_sharded(ix);
    if (mp_index_multi(ix)) return sharded ? MP_ID_TEMPLATE_SOURCES_SHARDED : MP_ID_TEMPLATE_SOURCES;
    return sharded ? MP_ID_TEMPLATE_SHARDED : "{key}";
}

bool mp_index_multi(const struct mp_index *ix) { return ix->nsources > 1; }

int mp_id_template_check(const struct mp_index *ix, char *why, size_t whylen) {
    const char *t = mp_id_template(ix);
    struct piece v[16];
    int n = pieces_of(t, v, 16, why, whylen);
    if (n < 0) return -1;
    char **names = NULL;
    size_t nn = 0;
    if (ix->ntables) {
        const char *db = ix->pattern_db ? ix->pattern_db : ix->tables[0].db;
        const char *tb = ix->pattern_table ? ix->pattern_table : ix->tables[0].table;
        mp_pattern_names(db, &names, &nn);
        mp_pattern_names(tb, &names, &nn);
    }
    int keys = 0, rc = 0;
    bool source = false;
    for (int i = 0; i < n && rc == 0; i++) {
        if (!v[i].ph) continue;
        if (v[i].re) {
            snprintf(why, whylen, "id template \"%s\": {%s:...} binds nothing here; write {%s}",
                     t, v[i].name, v[i].name);
            rc = -1;
        } else if (!strcmp(v[i].name, "key")) {
            keys++;
        } else if (!strcmp(v[i].name, "source")) {
            source = true;
        } else if (strcmp(v[i].name, "db") && strcmp(v[i].name, "table")) {
            bool known = false;
            for (size_t k = 0; k < nn; k++) known |= !strcmp(names[k], v[i].name);
            if (!known) {
                snprintf(why, whylen, "id template \"%s\": {%s} is none of {key}, {source}, "
                         "{db}, {table} or a placeholder the root table binds", t, v[i].name);
                rc = -1;
            }
        }
    }
    if (rc == 0 && keys != 1) {
        snprintf(why, whylen, "id template \"%s\" must hold {key} exactly once", t);
        rc = -1;
    }
    /* two sources may hold one key: without the source in the id, their rows
     * would be one document written with versions of two binlogs */
    if (rc == 0 && mp_index_multi(ix) && !ix->unique_keys && !source) {
        snprintf(why, whylen, "id template \"%s\" must hold {source}: the index config has "
                 "%zu sources, whose keys may collide (or set \"unique_keys\": true when keys "
                 "are unique across every source)", t, ix->nsources);
        rc = -1;
    }
    for (size_t k = 0; k < nn; k++) free(names[k]);
    free(names);
    return rc;
}

/* id_pre and id_post of a unit (or of an index config of several sources):
 * the template with the shard's values and the source's name */
static void unit_ids(struct mp_index *u, char **binds, size_t nbinds) {
    const char *t = mp_id_template(u);
    char why[256];
    struct piece v[16];
    int n = pieces_of(t, v, 16, why, sizeof why);
    sbuf pre = SBUF_INIT, post = SBUF_INIT, *cur = &pre;
    sbuf_adds(&pre, "");
    sbuf_adds(&post, "");
    for (int i = 0; i < n; i++) {
        if (!v[i].ph) sbuf_add(cur, v[i].lit, v[i].litlen);
        else if (!strcmp(v[i].name, "key")) cur = &post;
        else if (!strcmp(v[i].name, "db")) sbuf_adds(cur, u->tables[0].db);
        else if (!strcmp(v[i].name, "table")) sbuf_adds(cur, u->tables[0].table);
        else if (!strcmp(v[i].name, "source")) sbuf_adds(cur, u->source ? u->source : "");
        else {
            const char *b = bound(binds, nbinds, v[i].name);
            sbuf_adds(cur, b ? b : "");
        }
    }
    if (!pre.len && !post.len) {
        sbuf_free(&pre);
        sbuf_free(&post);
        return;
    }
    u->id_pre = sbuf_detach(&pre);
    u->id_post = sbuf_detach(&post);
}

void mp_index_make_ids(struct mp_index *ix) {
    free(ix->id_pre), free(ix->id_post);
    ix->id_pre = ix->id_post = NULL;
    unit_ids(ix, NULL, 0);
}

void mp_doc_id(const struct mp_index *ix, const char *key, size_t len, sbuf *out) {
    if (ix->id_pre) sbuf_adds(out, ix->id_pre);
    sbuf_add(out, key, len);
    if (ix->id_post) sbuf_adds(out, ix->id_post);
}

const char *mp_doc_key(const struct mp_index *ix, const char *id, size_t *len) {
    size_t n = strlen(id);
    size_t a = ix->id_pre ? strlen(ix->id_pre) : 0, b = ix->id_post ? strlen(ix->id_post) : 0;
    if (n < a + b || (a && strncmp(id, ix->id_pre, a)) ||
        (b && strcmp(id + n - b, ix->id_post)))
        return NULL;
    *len = n - a - b;
    return id + a;
}

/* ----------------------------------------------------------------- expand */

struct shard {
    const char *db, *table;
    char **binds;
    size_t nbinds;
};

static int shard_cmp(const void *a, const void *b) {
    const struct shard *x = a, *y = b;
    int c = strcmp(x->db, y->db);
    return c ? c : strcmp(x->table, y->table);
}

static bool in_source(const struct mp_source_table *t, size_t n, const char *db,
                      const char *table) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].db, db) && !strcmp(t[i].table, table)) return true;
    return false;
}

/* part with the uses of placeholders ({n}) not defined yet in this db,
 * table pair written as the root's definitions ({n:regex}), so the pair
 * matches on its own; NULL when a use has no definition in the root */
struct defining_put {
    struct piece r[32]; /* the root's pieces, db then table */
    int nr;
    char (*defined)[64]; /* the names defined so far in the pair */
    int *ndefined;
};

static bool put_defining(void *ctx, const struct piece *p, sbuf *out) {
    struct defining_put *c = ctx;
    for (int k = 0; k < *c->ndefined; k++)
        if (!strcmp(c->defined[k], p->name)) {
            sbuf_printf(out, "{%s}", p->name);
            return true;
        }
    for (int j = 0; j < c->nr && *c->ndefined < 32; j++)
        if (c->r[j].ph && c->r[j].re && !strcmp(c->r[j].name, p->name)) {
            sbuf_printf(out, "{%s:%.*s}", p->name, (int)c->r[j].relen, c->r[j].re);
            snprintf(c->defined[(*c->ndefined)++], 64, "%s", p->name);
            return true;
        }
    return false;
}

static char *as_defining(const char *part, const char *pdb, const char *ptb,
                         char (*defined)[64], int *ndefined) {
    struct defining_put c = {.defined = defined, .ndefined = ndefined};
    char why[256];
    int nd = pieces_of(pdb, c.r, 16, why, sizeof why);
    int nt = nd < 0 ? -1 : pieces_of(ptb, c.r + nd, 16, why, sizeof why);
    if (nt < 0) return NULL;
    c.nr = nd + nt;
    return rewrite(part, put_defining, &c, why, sizeof why);
}

/* The patterns of a config's tables below the root and of its relations,
 * kept on each unit (ix: the config, its names still patterns): a shard
 * whose tables are created one by one is left out until the last of them
 * exists, and that table's CREATE must be recognised whichever it is. */
static void add_pattern(struct mp_index *u, const struct mp_index *ix, const char *db,
                        const char *table) {
    if (!db || !table || (!mp_is_pattern(db) && !mp_is_pattern(table))) return;
    char defined[32][64];
    int ndefined = 0;
    char *d = as_defining(db, ix->tables[0].db, ix->tables[0].table, defined, &ndefined);
    char *t = d ? as_defining(table, ix->tables[0].db, ix->tables[0].table, defined, &ndefined)
                : NULL;
    bool dup = false;
    for (size_t i = 0; t && i < u->npatterns && !dup; i++)
        dup = !strcmp(u->patterns[2 * i], d) && !strcmp(u->patterns[2 * i + 1], t);
    if (!t || dup) {
        free(d);
        free(t);
        return;
    }
    u->patterns = xrealloc(u->patterns, 2 * (u->npatterns + 1) * sizeof *u->patterns);
    u->patterns[2 * u->npatterns] = d;
    u->patterns[2 * u->npatterns + 1] = t;
    u->npatterns++;
}

static void add_rel_patterns(struct mp_index *u, const struct mp_index *ix,
                             const struct mp_relation *r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        add_pattern(u, ix, r[i].db, r[i].table);
        add_rel_patterns(u, ix, r[i].relations, r[i].nrelations);
    }
}

static void keep_patterns(struct mp_index *u, const struct mp_index *ix) {
    for (size_t t = 0; t < ix->ntables; t++) {
        if (t > 0) add_pattern(u, ix, ix->tables[t].db, ix->tables[t].table);
        add_rel_patterns(u, ix, ix->tables[t].relations, ix->tables[t].nrelations);
    }
}

/* every db/table of the unit with the shard's values put in; false (and
 * why) when one is not in the source */
struct subst_ctx {
    char **binds;
    size_t nbinds;
    const struct mp_source_table *tables;
    size_t ntables;
    char why[512];
    bool ok;
};

static void subst_name(struct subst_ctx *c, char **db, char **table, bool check) {
    if (!*db || !*table) return;
    char w[256];
    char *d = mp_is_pattern(*db) ? mp_pattern_subst(*db, c->binds, c->nbinds, w, sizeof w)
                                 : xstrdup(*db);
    char *t = mp_is_pattern(*table) ? mp_pattern_subst(*table, c->binds, c->nbinds, w, sizeof w)
                                    : xstrdup(*table);
    if (!d || !t) {
        if (c->ok) snprintf(c->why, sizeof c->why, "%s", w);
        c->ok = false;
    } else if (check && c->ok && !in_source(c->tables, c->ntables, d, t)) {
        snprintf(c->why, sizeof c->why, "%s.%s does not exist", d, t);
        c->ok = false;
    }
    if (d) free(*db), *db = d;
    if (t) free(*table), *table = t;
}

static void subst_rels(struct subst_ctx *c, struct mp_relation *r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        subst_name(c, &r[i].db, &r[i].table, true);
        subst_rels(c, r[i].relations, r[i].nrelations);
    }
}

static bool kept(char *const *keep, size_t nkeep, const char *db, const char *table) {
    size_t dl = strlen(db);
    for (size_t i = 0; i < nkeep; i++)
        if (!strncmp(keep[i], db, dl) && keep[i][dl] == '.' && !strcmp(keep[i] + dl + 1, table))
            return true;
    return false;
}

/* a kept shard the source does not list now: its root's db and table */
static bool kept_root(const char *label, const struct mp_source_table *t, size_t n, char *db,
                      size_t dblen, char *table, size_t tablen) {
    /* "db.table": the first dot (MySQL names in a label cannot be split
     * otherwise; a database name with a dot is not a shard of a pattern) */
    const char *dot = strchr(label, '.');
    if (!dot || (size_t)(dot - label) >= dblen || strlen(dot + 1) >= tablen) return false;
    memcpy(db, label, (size_t)(dot - label));
    db[dot - label] = '\0';
    snprintf(table, tablen, "%s", dot + 1);
    return !in_source(t, n, db, table);
}

void mapping_expand_with(struct mapping *m, const struct mp_source_table *tables, size_t ntables,
                         char *const *keep, size_t nkeep, sbuf *skipped) {
    struct mp_index *out = NULL;
    size_t nout = 0;
    for (size_t i = 0; i < m->nindices; i++) {
        struct mp_index *ix = &m->indices[i];
        if (ix->unit || !mp_index_sharded(ix) || !ix->ntables) {
            out = xrealloc(out, (nout + 1) * sizeof *out);
            out[nout++] = *ix;
            continue;
        }
        const char *pdb = ix->tables[0].db, *ptb = ix->tables[0].table;
        struct shard *sh = NULL;
        size_t nsh = 0;
        char (*kdb)[65] = xcalloc(nkeep ? nkeep : 1, sizeof *kdb);
        char (*ktb)[65] = xcalloc(nkeep ? nkeep : 1, sizeof *ktb);
        size_t nk = 0;
        for (size_t k = 0; k < nkeep; k++)
            if (kept_root(keep[k], tables, ntables, kdb[nk], sizeof kdb[nk], ktb[nk],
                          sizeof ktb[nk]))
                nk++;
        for (size_t t = 0; t < ntables + nk; t++) {
            const char *tdb = t < ntables ? tables[t].db : kdb[t - ntables];
            const char *ttb = t < ntables ? tables[t].table : ktb[t - ntables];
            char **b = NULL;
            size_t nb = 0;
            if (mp_pattern_match(pdb, tdb, &b, &nb) && mp_pattern_match(ptb, ttb, &b, &nb)) {
                sh = xrealloc(sh, (nsh + 1) * sizeof *sh);
                sh[nsh++] = (struct shard){tdb, ttb, b, nb};
                continue;
            }
            for (size_t k = 0; k < nb; k++) free(b[k]);
            free(b);
        }
        qsort(sh, nsh, sizeof *sh, shard_cmp);
        for (size_t s = 0; s < nsh; s++) {
            struct mp_index u;
            mp_index_copy(&u, ix);
            u.pattern_db = xstrdup(pdb);
            u.pattern_table = xstrdup(ptb);
            keep_patterns(&u, ix);
            struct subst_ctx c = {sh[s].binds, sh[s].nbinds, tables, ntables, "", true};
            for (size_t t = 0; t < u.ntables; t++) {
                struct mp_table *tb = &u.tables[t];
                subst_name(&c, &tb->db, &tb->table, t > 0 && tb->parent_table);
                subst_name(&c, &tb->parent_db, &tb->parent_table, false);
                subst_rels(&c, tb->relations, tb->nrelations);
            }
            if (!c.ok && kept(keep, nkeep, sh[s].db, sh[s].table))
                c.ok = true; /* followed already: a table away is judged, not dropped here */
            if (!c.ok) {
                if (skipped)
                    sbuf_printf(skipped, "index %s: shard %s.%s is left out until its tables "
                                "exist (%s)\n", ix->alias, sh[s].db, sh[s].table, c.why);
                mp_index_free(&u);
                continue;
            }
            sbuf label = SBUF_INIT;
            sbuf_printf(&label, "%s.%s", sh[s].db, sh[s].table);
            u.unit = sbuf_detach(&label);
            unit_ids(&u, sh[s].binds, sh[s].nbinds);
            out = xrealloc(out, (nout + 1) * sizeof *out);
            out[nout++] = u;
        }
        for (size_t s = 0; s < nsh; s++) {
            for (size_t k = 0; k < sh[s].nbinds; k++) free(sh[s].binds[k]);
            free(sh[s].binds);
        }
        free(sh);
        free(kdb);
        free(ktb);
        mp_index_free(ix);
    }
    free(m->indices);
    m->indices = out;
    m->nindices = nout;
}

bool mp_index_matches_shard(const struct mp_index *ix, const char *db, const char *table) {
    if (!ix->ntables) return false;
    const char *pdb = ix->pattern_db ? ix->pattern_db : ix->tables[0].db;
    const char *ptb = ix->pattern_table ? ix->pattern_table : ix->tables[0].table;
    if (!mp_is_pattern(pdb) && !mp_is_pattern(ptb)) return false;
    char **b = NULL;
    size_t nb = 0;
    bool ok = mp_pattern_match(pdb, db, &b, &nb) && mp_pattern_match(ptb, table, &b, &nb);
    for (size_t k = 0; k < nb; k++) free(b[k]);
    free(b);
    return ok;
}

bool mp_index_matches_shard_table(const struct mp_index *ix, const char *db, const char *table) {
    if (mp_index_matches_shard(ix, db, table)) return true;
    for (size_t i = 0; i < ix->npatterns; i++) {
        char **b = NULL;
        size_t nb = 0;
        bool ok = mp_pattern_match(ix->patterns[2 * i], db, &b, &nb) &&
                  mp_pattern_match(ix->patterns[2 * i + 1], table, &b, &nb);
        for (size_t k = 0; k < nb; k++) free(b[k]);
        free(b);
        if (ok) return true;
    }
    return false;
}

int mapping_expand(struct st_mysql *src, struct mapping *m, char *const *keep, size_t nkeep,
                   sbuf *skipped, char *err, size_t errlen) {
    bool any = false;
    for (size_t i = 0; i < m->nindices && !any; i++)
        any = !m->indices[i].unit && mp_index_sharded(&m->indices[i]);
    if (!any) return 0;
    MYSQL_RES *r = db_query(src, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                                 "WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN "
                                 "('mysql', 'information_schema', 'performance_schema', 'sys')",
                            0, err, errlen);
    if (!r) return -1;
    size_t n = (size_t)mysql_num_rows(r);
    struct mp_source_table *t = xcalloc(n ? n : 1, sizeof *t);
    char **names = xcalloc(2 * (n ? n : 1), sizeof *names);
    size_t k = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r)) && k < n) {
        if (!row[0] || !row[1]) continue;
        names[2 * k] = xstrdup(row[0]);
        names[2 * k + 1] = xstrdup(row[1]);
        t[k].db = names[2 * k], t[k].table = names[2 * k + 1];
        k++;
    }
    mysql_free_result(r);
    mapping_expand_with(m, t, k, keep, nkeep, skipped);
    for (size_t i = 0; i < 2 * k; i++) free(names[i]);
    free(names);
    free(t);
    return 0;
}
