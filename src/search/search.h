/* search: the search-engine client (Elasticsearch 7/8/9, OpenSearch 1/2/3).
 *
 * Owns: engine addresses and failover, authentication (basic, API key, bearer
 * token, AWS SigV4 signing), TLS (CA file or the system's CAs, client
 * certificate), credentials kept out of every message (a URL's user:password@
 * included), timeouts, gzip request bodies, engine and
 * version detection from `GET /` (the dialect), writing bulk items into a
 * reused sbuf without any JSON tree, and scanning a bulk response only as far
 * as each item's status and error.
 *
 * Threading: one struct search_client is shared (immutable after
 * search_client_new, except the failover cursor, which is atomic). Each thread
 * that talks to the engine owns one struct search_conn: a libcurl easy handle
 * whose connection is kept alive between requests. N helper threads with one
 * conn each give N concurrent bulk requests over N kept-alive connections.
 *
 * Stands alone: depends only on sbuf, jsonw, log and cred_refused (style
 * note 1). */
#ifndef SS_SEARCH_H
#define SS_SEARCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

#define SEARCH_ERR_LEN 256

enum search_rc {
    SEARCH_OK = 0,        /* an HTTP response arrived (any status) */
    SEARCH_ETRANSPORT = -1, /* connect, TLS, timeout, reset: nothing usable came back */
    SEARCH_EPARSE = -2,   /* a response we could not understand */
    SEARCH_EUNSUPPORTED = -3,
};

enum search_engine { ENGINE_UNKNOWN = 0, ENGINE_ELASTICSEARCH, ENGINE_OPENSEARCH };

/* What differs between engines and versions, decided once by search_detect. */
struct search_dialect {
    enum search_engine engine;
    int major, minor, patch;
    char number[32];   /* "8.15.0" as the engine reports it */
    char name[32];     /* "elasticsearch-8", "opensearch-2" */
    bool doc_type;     /* bulk action lines need "_type":"_doc" (ES 6 only; refused) */
    bool compat_header; /* ES 8/9: accepts application/vnd.elasticsearch+json;compatible-with */
    const char *routing_key; /* "routing" (ES 7+, OpenSearch) */
};

/* Parse a root (`GET /`) response into a dialect. 0 or -1 with err. */
int search_dialect_from_root(const char *json, size_t len, struct search_dialect *d, char *err,
                             size_t errlen);
/* A dialect for a name like "opensearch-2", "opensearch-2.19" or "elasticsearch-7"
 * (tests, goldens, --dialect): the minor version 0 unless named. */
int search_dialect_named(const char *name, struct search_dialect *d);

struct search_opts {
    const char *urls; /* comma list of base URLs: failover in order */
    const char *user, *password;
    const char *api_key;      /* Authorization: ApiKey ... */
    const char *bearer_token; /* Authorization: Bearer ... */
    bool aws_sigv4;           /* sign with AWS SigV4 (libcurl's CURLOPT_AWS_SIGV4) */
    const char *aws_region, *aws_service; /* service: "es" or "aoss" */
    const char *aws_access_key_id, *aws_secret_access_key, *aws_session_token;
    const char *ca_file, *client_cert, *client_key; /* ca_file NULL: the system's CAs */
    bool tls_verify;
    int timeout_ms, connect_timeout_ms;
    bool compress; /* gzip request bodies above a small size */
};

struct search_client;
struct search_conn;

/* The credential, signing and TLS fields of so from the [search] keys
 * (src/search_auth.c; deliver_search_opts calls it). */
struct ss_config;
void search_opts_secured(struct search_opts *so, const struct ss_config *c);

struct search_client *search_client_new(const struct search_opts *o, char *err, size_t errlen);
void search_client_free(struct search_client *c); /* NULL-safe */
int search_client_nurls(const struct search_client *c);
/* Address i as messages show it: without a user:password@ part. */
const char *search_client_url(const struct search_client *c, int i);
/* The detected dialect (valid after search_detect succeeded). */
const struct search_dialect *search_client_dialect(const struct search_client *c);
/* Set the dialect without asking the engine (tests). */
void search_client_set_dialect(struct search_client *c, const struct search_dialect *d);

struct search_conn *search_conn_new(struct search_client *c);
void search_conn_free(struct search_conn *k); /* NULL-safe */

struct search_resp {
    long status;   /* HTTP status, 0 if none */
    sbuf body;     /* response body (decompressed), reused */
    char err[SEARCH_ERR_LEN]; /* transport error text */
    bool tls;       /* the transport error is the TLS set-up's: the engine's
                       certificate not trusted or expired, a CA or client
                       certificate file unusable (waiting does not help) */
    double seconds; /* total request time */
};

void search_resp_init(struct search_resp *r);
void search_resp_free(struct search_resp *r);

/* One request on this connection. path starts with '/'. body may be NULL.
 * Failover: on a transport error the client moves its cursor to the next URL
 * and the request is tried once on each address before giving up.
 * content_type NULL means application/json. */
int search_request(struct search_conn *k, const char *method, const char *path,
                   const char *content_type, const char *body, size_t len,
                   struct search_resp *r);

/* GET / on the current address, parse, remember the dialect. */
int search_detect(struct search_client *c, struct search_conn *k, char *err, size_t errlen);
/* Did the engine refuse the credentials: HTTP status 401 or 403 to request
 * req ("GET /", "GET /_alias/books")? Then err says so, naming the [search]
 * keys to check, the refusal is noted (src/cred_refused.h: the command exits
 * 2) and true is returned. */
bool search_refused(struct search_conn *k, const char *req, long status, char *err,
                    size_t errlen);

/* ---------- bulk bodies ---------- */

enum bulk_op { BULK_INDEX = 0, BULK_DELETE = 1, BULK_UPDATE = 2, BULK_SCRIPT = 3 };

struct bulk_item {
    enum bulk_op op;
    const char *index;
    const char *id;
    const char *routing;  /* NULL = none */
    uint64_t version;     /* external version (< 2^63); 0 = unversioned (plain loads) */
    bool version_gte;     /* INDEX, DELETE: external_gte (lands on an equal stored
                             version too), not external */
    const char *body;     /* INDEX: document object; UPDATE: partial object;
                             SCRIPT: params object; DELETE: unused */
    size_t body_len;
    const char *script;   /* SCRIPT: painless source, run only if fresher */
    const char *version_field; /* document field holding the version; NULL/"" = none */
    bool content_hash;    /* with a version_field: INDEX adds ss_hash and ss_key_hash
                             (search/content_hash.h); UPDATE and SCRIPT remove ss_hash */
    bool require_alias;   /* "require_alias": true (ES >= 7.10, OpenSearch) */
};

/* Append one bulk item (action line + source line) to out. Raw newlines in
 * body are replaced by spaces (NDJSON). */
void bulk_append(sbuf *out, const struct search_dialect *d, const struct bulk_item *it);

/* ---------- bulk responses ---------- */

struct bulk_result {
    int status;           /* item HTTP status */
    const char *err_type; /* points into err_buf or NULL */
    char err_type_buf[96];
    const char *error;    /* raw JSON text of the error object (not NUL-terminated) */
    size_t error_len;
};

/* Scan a bulk response: fills res[0..n-1] in request order. Returns the
 * number of items found (== expected on success) or -1 if the text is not a
 * bulk response. res[i].error points into json. */
int bulk_response_parse(const char *json, size_t len, struct bulk_result *res, int expected);

/* Item classification used by delivery. */
enum bulk_class {
    BULK_OK = 0,       /* 2xx */
    BULK_STALE,        /* 409 version conflict: an equal or newer version is stored */
    BULK_MISSING,      /* update of a document that is gone (404) */
    BULK_TRANSIENT,    /* 429, 5xx, shard unavailable: retry */
    BULK_PERMANENT,    /* mapping and other 4xx errors: dead letter */
};
enum bulk_class bulk_classify(enum bulk_op op, const struct bulk_result *r);
/* The version a version conflict (409) says the engine holds ("current
 * version [N] is higher ..."), exact; 0 when the error names none. */
uint64_t bulk_conflict_version(const struct bulk_result *r);
enum bulk_class http_classify(long status); /* whole-request status */

/* gzip (RFC 1952) in → out (appended). 0 or -1. */
int search_gzip(const char *in, size_t len, sbuf *out);

#endif
