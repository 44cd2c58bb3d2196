/* docbuild_dump: print the documents sync/docbuild builds, one NDJSON line
 * each, for tests and debugging.
 *
 * usage: docbuild_dump --config FILE --mapping FILE --index ALIAS
 *                      [--table DB.TABLE] [--chunk N] [--quiet] [--sql-before SQL]
 *                      [KEY...|-]
 *   Keys are root keys, or keys of the parent/child table --table. "-" (or
 *   no key) reads keys from stdin, one a line. Output lines:
 *     {"id":"5","routing":null,"doc":{...}}       a built document
 *     {"id":"7","absent":true}                    no row for that key
 *   --quiet prints nothing per document; the last line on stderr is always
 *   "docs N absent N queries N rows N keyed N spread N seconds S docs/s R".
 *   --sql-before runs SQL on the source after the mapping was validated and
 *   before the build: the source changed under a mapping judged before (a
 *   schema change the daemon's reader has not read yet).
 * The mapping file is validated against the source's information_schema
 * (mysql types filled in) as `searchsync mapping import` does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "jsonw.h"
#include "sbuf.h"
#include "sync/pipeline/docbuild.h"
#include "sync/mapping/mapping.h"

struct out {
    bool quiet;
    sbuf line;
};

static int on_doc(void *ctx, const char *id, const char *routing, const char *body, size_t len) {
    struct out *o = ctx;
    if (o->quiet) return 0;
    sbuf_reset(&o->line);
    sbuf_adds(&o->line, "{\"id\":");
    json_escape(&o->line, id, strlen(id));
    sbuf_adds(&o->line, ",\"routing\":");
    if (routing) json_escape(&o->line, routing, strlen(routing)); else sbuf_adds(&o->line, "null");
    sbuf_adds(&o->line, ",\"doc\":");
    sbuf_add(&o->line, body, len);
    sbuf_adds(&o->line, "}\n");
    fwrite(o->line.data, 1, o->line.len, stdout);
    return 0;
}

static int on_absent(void *ctx, const char *id) {
    struct out *o = ctx;
    if (o->quiet) return 0;
    sbuf_reset(&o->line);
    sbuf_adds(&o->line, "{\"id\":");
    json_escape(&o->line, id, strlen(id));
    sbuf_adds(&o->line, ",\"absent\":true}\n");
    fwrite(o->line.data, 1, o->line.len, stdout);
    return 0;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    sbuf b;
    sbuf_init(&b);
    sbuf_read_fp(&b, f);
    fclose(f);
    *len = b.len;
    if (!b.data) sbuf_grow(&b, 1);
    return sbuf_detach(&b);
}

static int usage(void) {
    fprintf(stderr, "usage: docbuild_dump --config FILE --mapping FILE --index ALIAS "
                    "[--table DB.TABLE] [--chunk N] [--quiet] [--sql-before SQL] [KEY...|-]\n");
    return 2;
}

int main(int argc, char **argv) {
    const char *cfgpath = NULL, *mappath = NULL, *alias = NULL, *table = NULL, *sql_before = NULL;
    size_t chunk = DOCBUILD_CHUNK;
    struct out o = {false, {0}};
    sbuf_init(&o.line);
    char **keys = NULL;
    size_t nkeys = 0, capk = 0;
    bool from_stdin = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--config") && i + 1 < argc) cfgpath = argv[++i];
        else if (!strcmp(a, "--mapping") && i + 1 < argc) mappath = argv[++i];
        else if (!strcmp(a, "--index") && i + 1 < argc) alias = argv[++i];
        else if (!strcmp(a, "--table") && i + 1 < argc) table = argv[++i];
        else if (!strcmp(a, "--chunk") && i + 1 < argc) chunk = (size_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--sql-before") && i + 1 < argc) sql_before = argv[++i];
        else if (!strcmp(a, "--quiet")) o.quiet = true;
        else if (!strcmp(a, "-")) from_stdin = true;
        else if (a[0] == '-' && a[1] == '-') return usage();
        else {
            if (nkeys == capk) keys = xrealloc(keys, (capk = capk ? capk * 2 : 16) * sizeof *keys);
            keys[nkeys++] = xstrdup(a);
        }
    }
    if (!cfgpath || !mappath || !alias) return usage();
    if (!nkeys) from_stdin = true;
    if (from_stdin) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, stdin)) > 0) {
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
            if (!n) continue;
            if (nkeys == capk) keys = xrealloc(keys, (capk = capk ? capk * 2 : 16) * sizeof *keys);
            keys[nkeys++] = xstrdup(line);
        }
        free(line);
    }
    char err[1024];
    struct ss_config cfg;
    memset(&cfg, 0, sizeof cfg); /* config_load fills the defaults */
    int rc = 1;
    struct mapping m = {0};
    struct mp_schema schema = {0};
    MYSQL *db = NULL;
    sbuf errs;
    sbuf_init(&errs);
    if (config_load(&cfg, cfgpath, err, sizeof err) < 0) {
        fprintf(stderr, "docbuild_dump: %s\n", err);
        rc = 2;
        goto out;
    }
    size_t len;
    char *text = slurp(mappath, &len);
    if (!text) {
        fprintf(stderr, "docbuild_dump: cannot read %s\n", mappath);
        rc = 2;
        goto out;
    }
    int pr = mapping_parse(mappath, text, len, &m, err, sizeof err);
    free(text);
    if (pr < 0) {
        fprintf(stderr, "docbuild_dump: %s\n", err);
        rc = 2;
        goto out;
    }
    db_params p = db_params_source(&cfg);
    db = db_connect(&p, err, sizeof err);
    if (!db || mapping_schema_load(db, &m, &schema, err, sizeof err) < 0) {
        fprintf(stderr, "docbuild_dump: %s\n", err);
        goto out;
    }
    if (mapping_validate(&m, &schema, &errs) > 0) {
        fprintf(stderr, "docbuild_dump: mapping invalid:\n%s", errs.data);
        rc = 2;
        goto out;
    }
    if (sql_before && mysql_query(db, sql_before)) {
        fprintf(stderr, "docbuild_dump: --sql-before: %s\n", mysql_error(db));
        goto out;
    }
    const struct mp_index *ix = NULL;
    for (size_t i = 0; i < m.nindices; i++)
        if (!strcmp(m.indices[i].alias, alias)) ix = &m.indices[i];
    if (!ix) {
        fprintf(stderr, "docbuild_dump: no index %s in %s\n", alias, mappath);
        rc = 2;
        goto out;
    }
    size_t ti = 0;
    if (table) {
        bool found = false;
        for (size_t i = 0; i < ix->ntables; i++) {
            char name[512];
            snprintf(name, sizeof name, "%s.%s", ix->tables[i].db, ix->tables[i].table);
            if (!strcmp(name, table)) { ti = i; found = true; }
        }
        if (!found) {
            fprintf(stderr, "docbuild_dump: no table %s in index %s\n", table, alias);
            rc = 2;
            goto out;
        }
    }
    struct docbuild b;
    docbuild_init(&b, db, ix);
    b.chunk = chunk ? chunk : DOCBUILD_CHUNK;
    struct docbuild_sink sink = {on_doc, on_absent, &o};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int br = ti == 0 ? docbuild_roots(&b, (const char *const *)keys, nkeys, &sink, err, sizeof err)
                     : docbuild_children(&b, ti, (const char *const *)keys, nkeys, &sink, err,
                                         sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fflush(stdout);
    if (br) {
        fprintf(stderr, "docbuild_dump: %s\n", err);
        goto out;
    }
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(stderr, "docs %llu absent %llu queries %llu rows %llu keyed %llu spread %llu "
            "seconds %.3f docs/s %.0f\n", b.stats.docs, b.stats.absent, b.stats.queries,
            b.stats.rows, b.stats.keyed, b.stats.spread, s, s > 0 ? (double)b.stats.docs / s : 0.0);
    rc = 0;
out:
    db_close(db);
    mp_schema_free(&schema);
    mapping_free(&m);
    config_free(&cfg);
    sbuf_free(&errs);
    sbuf_free(&o.line);
    for (size_t i = 0; i < nkeys; i++) free(keys[i]);
    free(keys);
    return rc;
}
