/* route_dump: feed row changes to the change router (sync/pipeline/router.c) and print
 * the documents they reach — for tests/integration/t_router.sh.
 *
 *   route_dump MAPPING.json < changes
 * Each input line: db.table<TAB>before<TAB>after, an image being "-" (none) or
 * "col=value;col=value" (value \N = NULL). All lines are added, then one
 * flush runs against MYSQL_HOST/MYSQL_PORT as root; output: one line
 * "alias<TAB>db.table<TAB>key" per document, then "queries<TAB>N" on stderr.
 * ROUTE_SLICE=N in the environment: the router slices large fan-outs
 * (router_set_slice) and each slice handed over prints
 * "slice<TAB>alias<TAB>db.table<TAB>keys emitted so far" on stderr, after
 * which no key emitted before it may be held (the test counts them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "sbuf.h"
#include "sync/mapping/mapping.h"
#include "sync/pipeline/router.h"

/* the change set's routing state (struct changeset.seeds) */
static struct route_seeds sd;

static struct mapping M;

static const char *get(void *image, const char *column, size_t *len, bool *absent) {
    const char *p = image;
    size_t cl = strlen(column);
    while (p && *p) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > cl && !strncmp(p, column, cl) && p[cl] == '=') {
            *absent = false;
            if (n - cl - 1 == 2 && !strncmp(p + cl + 1, "\\N", 2)) return NULL;
            *len = n - cl - 1;
            return p + cl + 1;
        }
        p = end ? end + 1 : NULL;
    }
    *absent = true;
    return NULL;
}

static unsigned long emitted;

static int emit(void *ctx, size_t index, size_t table, const char *key, size_t len) {
    (void)ctx;
    emitted++;
    const struct mp_table *t = &M.indices[index].tables[table];
    printf("%s\t%s.%s\t%.*s\n", M.indices[index].alias, t->db, t->table, (int)len, key);
    return 0;
}

static int slice(void *ctx, size_t index, size_t table) {
    (void)ctx;
    const struct mp_table *t = &M.indices[index].tables[table];
    fflush(stdout);
    fprintf(stderr, "slice\t%s\t%s.%s\t%lu\n", M.indices[index].alias, t->db, t->table, emitted);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: route_dump MAPPING.json < changes\n");
        return 2;
    }
    char err[1024];
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    sbuf t = SBUF_INIT;
    sbuf_read_fp(&t, f);
    fclose(f);
    if (mapping_parse(argv[1], t.data, t.len, &M, err, sizeof err) != 0) {
        fprintf(stderr, "route_dump: %s\n", err);
        return 1;
    }
    sbuf_free(&t);
    db_params p = {.role = "source", .host = getenv("MYSQL_HOST"),
                   .port = atoi(getenv("MYSQL_PORT") ? getenv("MYSQL_PORT") : "3306"),
                   .user = "root", .password = "", .connect_timeout_ms = 5000,
                   .read_timeout_ms = 30000};
    MYSQL *m = db_connect(&p, err, sizeof err);
    if (!m) {
        fprintf(stderr, "route_dump: %s\n", err);
        return 1;
    }
    struct router *r = router_new(&M);
    if (getenv("ROUTE_SLICE")) router_set_slice(r, slice, (size_t)atol(getenv("ROUTE_SLICE")));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, stdin)) > 0) {
        if (line[len - 1] == '\n') line[--len] = '\0';
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        char *dot = strchr(line, '.');
        if (!tab2 || !dot || dot > tab1) {
            fprintf(stderr, "route_dump: bad input line: %s\n", line);
            rc = 2;
            break;
        }
        *dot = *tab1 = *tab2 = '\0';
        char *before = strcmp(tab1 + 1, "-") ? tab1 + 1 : NULL;
        char *after = strcmp(tab2 + 1, "-") ? tab2 + 1 : NULL;
        if (router_add(r, &sd, line, dot + 1, get, before, after, err, sizeof err) != 0) {
            fprintf(stderr, "route_dump: %s\n", err);
            rc = 1;
        }
    }
    free(line);
    if (rc == 0 && router_flush(r, &sd, m, emit, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "route_dump: %s\n", err);
        rc = 1;
    }
    fprintf(stderr, "queries\t%lu\n", router_queries(r));
    route_seeds_free(&sd);
    router_free(r);
    mapping_free(&M);
    db_close(m);
    mysql_library_end();
    return rc;
}
