/* check_int: what the files of the consistency check share (check_run.c:
 * the MySQL side and the run; check_engine.c: the engine side;
 * check_verify.c: the candidates verified; check_repair.c: repaired; check.c: the
 * candidates and records they all use) — the run's context and its
 * candidates. Nobody outside sync/check/ includes it. Calls run one way:
 * check_run -> check_repair -> check_verify -> check_engine -> check. */
#ifndef SS_CHECK_INT_H
#define SS_CHECK_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sync/check/check.h"
#include "strset.h"

#define VERIFY_CHUNK 500 /* candidates rebuilt and fetched per request */
#define MAX_ROUNDS 3

/* one document of MySQL's side */
struct rec {
    uint32_t kh, ch;
    size_t id; /* offset into ids */
};

/* one document that may differ, until the settle rounds say */
struct cand {
    char *id;
    enum check_kind kind;
    char *path;
    uint32_t sig;   /* verify: the hashes of both sides' content as seen */
    bool confirmed; /* seen the same way in the round before */
    bool content;   /* compared by content though the hashes agree: written last
                     * by someone else, ss_hash copied along (written_elsewhere) */
    char *routing;  /* the engine copy's _routing as last fetched, NULL: none */
};

/* one document as MySQL gives it (check_build) */
struct check_built {
    char *id, *routing, *body; /* routing NULL: none */
    size_t len;
};
struct check_built_list {
    struct check_built *v;
    size_t n, cap;
};

struct ctx {
    struct producer *pr;
    const struct mp_index *ix; /* the index config; over shard tables, the unit of the
                                * shard at hand (mapping_shard.h): at .. at + nunits */
    size_t at, at0, nunits;
    const struct check_opts *o;
    struct check_result *res;
    bool window;           /* a window check (--since), not one of the whole index */
    struct rec *r;
    size_t n, cap;
    sbuf ids;              /* NUL-separated ids of r */
    struct strset legacy;  /* engine documents without ss_key_hash */
    struct strset mysql_ids; /* filled only when there are legacy documents */
    struct strset *related;  /* window: per document table, keys reached from related
                              * tables changed in the window */
    char *only;            /* several sources: the filter to this source's documents
                            * ({"term":{"ss_source":...}}), NULL: every document */
    struct cand *c;
    size_t nc, capc;
    char *err;
    size_t errlen;
};

double check_now_s(void);
const char *check_rec_id(const struct ctx *c, const struct rec *r);
void check_add_cand(struct ctx *c, const char *id, enum check_kind kind);
void check_free_cands(struct cand *v, size_t n);
/* the first record of MySQL's side with kh >= v */
size_t check_lower(const struct ctx *c, uint64_t v);

/* table t of ix holds documents (the root, or a parent/child child) */
bool check_doc_table(const struct mp_index *ix, size_t t);
/* POST a search on the index; the parsed answer (numbers exact) or NULL
 * with c->err */
cJSON *check_engine_search(struct ctx *c, const char *query_string, const sbuf *body);
/* j.a.b.d (b, d may be NULL), NULL when absent */
cJSON *check_json_path(cJSON *j, const char *a, const char *b, const char *d);
/* a JSON number's value as a double (counts and sums), -1 when j is no number */
double check_json_num(const cJSON *j);
/* The index refreshed, so that the engine's side sees every write so far.
 * 0 or -1. */
int check_refresh(struct ctx *c);
/* The engine side: the index's documents bucketed by key hash against
 * MySQL's, the buckets that differ drilled into; candidates added. 0 or -1. */
int check_engine_side(struct ctx *c);
/* The candidates rebuilt and fetched again until two rounds agree (or the
 * rounds run out); those left are c->res's items. 0 or -1. */
int check_verify(struct ctx *c);
/* The documents of ids v[0..n) rebuilt from MySQL on the producer's
 * connection (so in its read snapshot, when one is open), each in its
 * shard's unit, appended to out; a row that gives no document gives
 * nothing. 0 or -1 with c->err. */
int check_build(struct ctx *c, const struct cand *v, size_t n, struct check_built_list *out);
const struct check_built *check_built_find(const struct check_built_list *l, const char *id);
void check_built_free(struct check_built_list *l);
/* The differences left rewritten, and compared again (check_repair.c):
 * c->res's repair fields. 0 or -1. */
int check_repair(struct ctx *c);
/* Its second half: c->c compared again with MySQL, what differs written
 * over the engine's version, what still differs then in c->res->repair_left
 * (c->c is kept). 0 or -1. */
int check_repair_again(struct ctx *c);

#endif
