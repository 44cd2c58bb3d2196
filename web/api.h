/* api: the handlers of the admin JSON API and /metrics (docs/http-api.md).
 *
 * A handler gets a request that web/http_server.c has already checked (Host,
 * token, CSRF rules, body size) and routed (web/route.c), and fills a
 * response: status, content type, body. Errors are
 * {"error":"what went wrong","hint":"what to do"} with a fitting status.
 *
 * Each request opens its own connections (metadata schema, source, one engine
 * connection of the daemon's shared search client): the daemon's own MySQL
 * and engine connections belong to its threads and are never touched here.
 * Values from the request reach SQL only as bound parameters (src/stmt.c),
 * or through the node's operations (sync/ops/).
 *
 * A request that changes something is one of the node's operations
 * (sync/ops/ops.h): its handler turns the JSON into the operation's
 * arguments and its result into the answer, nothing more; the commands call
 * the same operations. POST .../reindex queues a build exactly as
 * `searchsync reindex --no-wait` does; the daemon notices it between
 * transactions (sync/node/daemon_builds.c) and runs its jobs. */
#ifndef SS_WEB_API_H
#define SS_WEB_API_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "config.h"
#include "jsonw.h"
#include "route.h"
#include "sbuf.h"
#include "stmt.h"
#include "sync/ops/ops.h"

struct search_client;
struct deliver;
struct reader_stats;
struct mapping_gen;

/* What the handlers use. client and d are NULL while the daemon starts
 * (the engine is not detected yet): handlers that need them answer 503. */
enum api_lookup { API_HEADER, API_ARG };

struct api_ctx {
    const struct ss_config *cfg;
    struct search_client *client;
    struct deliver *d;
    struct reader_stats *rs; /* the binlog reader's figures (NULL: none yet) */
    struct mapping_gen *gen; /* the mapping generation the daemon runs with (NULL: none) */
    /* a request header or query argument (NULL when absent); may be NULL */
    const char *(*lookup)(void *cls, enum api_lookup kind, const char *name);
    void *lookup_cls;
};

struct api_resp {
    int status;
    const char *content_type; /* static string */
    const char *allow;        /* 405: the Allow header */
    sbuf headers;             /* more headers, "Name: value\n" each */
    sbuf body;
};

void api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body, size_t len,
                struct api_resp *resp);
/* {"error":..,"hint":..} (hint may be NULL) */
void api_error(struct api_resp *r, int status, const char *error, const char *hint);
/* a 400 naming the field: {"error":..,"field":..,"hint":..} */
void api_error_field(struct api_resp *r, int status, const char *field, const char *error,
                     const char *hint);
void api_resp_free(struct api_resp *r);
/* ctx->lookup, NULL-safe */
const char *api_lookup(const struct api_ctx *ctx, enum api_lookup kind, const char *name);
/* Why a call that needs the search engine cannot run before the daemon has
 * detected it (ctx->client still NULL). */
#define API_ENGINE_NOT_DETECTED "the daemon is still starting: the engine is not detected yet"
/* true when the engine is detected; false with a 503 in r (retry later) */
bool api_engine_ready(const struct api_ctx *ctx, struct api_resp *r);
/* the metadata schema, or NULL with a 503 in r */
MYSQL *api_meta_connect(const struct api_ctx *ctx, struct api_resp *r);
/* ?limit=N: *limit (def when absent), or false with a 400 in r when it is
 * not an integer from 1 to 1000 */
bool api_limit_arg(const struct api_ctx *ctx, struct api_resp *r, long def, long *limit);

/* The node's operations (sync/ops/): what they run with, from ctx (by:
 * who asks, in the log and the sync log), and an outcome other than OPS_OK
 * as the error response: 400 invalid, 404 unknown, 409 refused, 503 the
 * engine not detected yet or a server down, failed_status when a server
 * failed part-way; hint says what to do. */
void api_ops_env(const struct api_ctx *ctx, struct ops_env *env, const char *by);
void api_ops_error(struct api_resp *r, const struct ops_err *e, int failed_status,
                   const char *hint);

/* The answer's JSON object opened on r's body, starting with "alias" (the
 * index config it is about) unless alias is NULL; the caller writes the
 * rest and closes it. */
void api_answer_open(jsonw *w, struct api_resp *r, const char *alias);
/* The JSON body written ends: a newline, the status and its content type. */
void api_ok_json(struct api_resp *r, int status);

/* The rows of one query answered as {["alias": alias,] key: rows}
 * (api_rows_reply): named by names, num[i] written as a number; a failed
 * query (n < 0) answered with fail_status, its error and fail_hint. */
struct api_rows {
    const char *alias; /* NULL: no "alias" key */
    const char *key;
    const char *const *names;
    const bool *num;
    size_t ncols;
    int fail_status;
    const char *fail_hint;
};
void api_rows_reply(struct api_resp *r, long n, const struct stmt_rows *rows, const char *err,
                    const struct api_rows *q);

#endif
