/* client: HTTP to the engine over libcurl easy handles, one per thread, each
 * keeping its connection alive (search.h). Failover walks the comma list of
 * URLs: a transport error moves the shared cursor to the next address and the
 * request is tried once on every address before the caller sees the error.
 *
 * Credentials (basic auth, API key, bearer token, AWS keys) go to libcurl and
 * into headers only: messages show addresses without their user:password@
 * part and never a header. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cred_refused.h"
#include "log.h"
#include "search/search.h"
#include "search/sha256.h"

#define GZIP_MIN_BYTES 1024

struct search_client {
    char **urls;
    char **shown; /* urls[i] for messages: no user:password@ */
    int nurls;
    atomic_int cur;
    char *user, *password, *auth_header, *ca_file, *client_cert, *client_key;
    char *sigv4;           /* "aws:amz:REGION:SERVICE", NULL = no signing */
    char *aws_key_id, *aws_secret, *aws_token_header;
    bool tls_verify, compress;
    long timeout_ms, connect_timeout_ms;
    /* The engine's dialect as last detected. Detection happens again when
     * the engine comes back after being unreachable (it may have been
     * upgraded in between), while other threads read the old one: each
     * detection is a new immutable struct published atomically, and the
     * ones before it stay allocated until the client is freed (a pointer
     * read once stays valid; there are only as many as detections). */
    _Atomic(struct search_dialect *) dialect;
    pthread_mutex_t dialects_mu;
    struct search_dialect **dialects; /* every one published, for free */
    size_t ndialects;
};

struct search_conn {
    struct search_client *c;
    CURL *h;
    sbuf gz;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static char *dup_or_null(const char *s) { return s && *s ? xstrdup(s) : NULL; }

/* "https://user:pw@host:9200/p" -> "https://host:9200/p" */
static char *url_without_userinfo(const char *u) {
    const char *host = strstr(u, "://");
    host = host ? host + 3 : u;
    size_t authlen = strcspn(host, "/?#");
    const char *at = NULL;
    for (const char *q = host; q < host + authlen; q++)
        if (*q == '@') at = q;
    if (!at) return xstrdup(u);
    sbuf b = SBUF_INIT;
    sbuf_add(&b, u, (size_t)(host - u));
    sbuf_adds(&b, at + 1);
    return sbuf_detach(&b);
}

struct search_client *search_client_new(const struct search_opts *o, char *err, size_t errlen) {
    pthread_once(&curl_once, curl_init_once);
    struct search_client *c = xcalloc(1, sizeof *c);
    const char *p = o->urls ? o->urls : "";
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        const char *b = p;
        while (*p && *p != ',') p++;
        const char *e = p;
        while (e > b && (e[-1] == ' ' || e[-1] == '/')) e--;
        if (e > b) {
            c->urls = xrealloc(c->urls, sizeof(char *) * (size_t)(c->nurls + 1));
            c->shown = xrealloc(c->shown, sizeof(char *) * (size_t)(c->nurls + 1));
            c->urls[c->nurls] = xstrndup(b, (size_t)(e - b));
            c->shown[c->nurls] = url_without_userinfo(c->urls[c->nurls]);
            c->nurls++;
        }
    }
    if (c->nurls == 0) {
        snprintf(err, errlen, "[search] urls is empty: give at least one engine address");
        search_client_free(c);
        return NULL;
    }
    for (int i = 0; i < c->nurls; i++) {
        if (strncmp(c->urls[i], "http://", 7) && strncmp(c->urls[i], "https://", 8)) {
            snprintf(err, errlen, "[search] urls: \"%s\" must start with http:// or https://",
                     c->shown[i]);
            search_client_free(c);
            return NULL;
        }
    }
    c->user = dup_or_null(o->user);
    c->password = dup_or_null(o->password);
    sbuf h = SBUF_INIT;
    if (o->api_key && *o->api_key) {
        sbuf_printf(&h, "Authorization: ApiKey %s", o->api_key);
        c->auth_header = sbuf_detach(&h);
    } else if (o->bearer_token && *o->bearer_token) {
        sbuf_printf(&h, "Authorization: Bearer %s", o->bearer_token);
        c->auth_header = sbuf_detach(&h);
    }
    if (o->aws_sigv4) {
        if (!o->aws_region || !*o->aws_region || !o->aws_access_key_id ||
            !*o->aws_access_key_id || !o->aws_secret_access_key || !*o->aws_secret_access_key) {
            snprintf(err, errlen, "[search] aws_sigv4 needs aws_region, aws_access_key_id and "
                     "aws_secret_access_key (or AWS_REGION, AWS_ACCESS_KEY_ID and "
                     "AWS_SECRET_ACCESS_KEY)");
            search_client_free(c);
            return NULL;
        }
        sbuf_printf(&h, "aws:amz:%s:%s", o->aws_region,
                    o->aws_service && *o->aws_service ? o->aws_service : "es");
        c->sigv4 = sbuf_detach(&h);
        c->aws_key_id = xstrdup(o->aws_access_key_id);
        c->aws_secret = xstrdup(o->aws_secret_access_key);
        if (o->aws_session_token && *o->aws_session_token) {
            sbuf_printf(&h, "x-amz-security-token: %s", o->aws_session_token);
            c->aws_token_header = sbuf_detach(&h);
        }
    }
    sbuf_free(&h);
    c->ca_file = dup_or_null(o->ca_file);
    c->client_cert = dup_or_null(o->client_cert);
    c->client_key = dup_or_null(o->client_key);
    c->tls_verify = o->tls_verify;
    c->compress = o->compress;
    c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 60000;
    c->connect_timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 5000;
    atomic_init(&c->cur, 0);
    atomic_init(&c->dialect, NULL);
    pthread_mutex_init(&c->dialects_mu, NULL);
    return c;
}

void search_client_free(struct search_client *c) {
    if (!c) return;
    for (int i = 0; i < c->nurls; i++) free(c->urls[i]), free(c->shown[i]);
    free(c->urls);
    free(c->shown);
    free(c->user);
    free(c->password);
    free(c->auth_header);
    free(c->sigv4);
    free(c->aws_key_id);
    free(c->aws_secret);
    free(c->aws_token_header);
    free(c->ca_file);
    free(c->client_cert);
    free(c->client_key);
    for (size_t i = 0; i < c->ndialects; i++) free(c->dialects[i]);
    free(c->dialects);
    pthread_mutex_destroy(&c->dialects_mu);
    free(c);
}

int search_client_nurls(const struct search_client *c) { return c->nurls; }
const char *search_client_url(const struct search_client *c, int i) {
    return i >= 0 && i < c->nurls ? c->shown[i] : NULL;
}
const struct search_dialect *search_client_dialect(const struct search_client *c) {
    return atomic_load(&((struct search_client *)c)->dialect);
}
void search_client_set_dialect(struct search_client *c, const struct search_dialect *d) {
    struct search_dialect *n = xmalloc(sizeof *n);
    *n = *d;
    pthread_mutex_lock(&c->dialects_mu);
    c->dialects = xrealloc(c->dialects, (c->ndialects + 1) * sizeof *c->dialects);
    c->dialects[c->ndialects++] = n;
    atomic_store(&c->dialect, n);
    pthread_mutex_unlock(&c->dialects_mu);
}

struct search_conn *search_conn_new(struct search_client *c) {
    pthread_once(&curl_once, curl_init_once);
    struct search_conn *k = xcalloc(1, sizeof *k);
    k->c = c;
    k->h = curl_easy_init();
    if (!k->h) {
        free(k);
        return NULL;
    }
    return k;
}

void search_conn_free(struct search_conn *k) {
    if (!k) return;
    curl_easy_cleanup(k->h);
    sbuf_free(&k->gz);
    free(k);
}

void search_resp_init(struct search_resp *r) {
    memset(r, 0, sizeof *r);
    sbuf_init(&r->body);
}
void search_resp_free(struct search_resp *r) {
    if (r) sbuf_free(&r->body);
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud) {
    sbuf_add((sbuf *)ud, ptr, size * nmemb);
    return size * nmemb;
}

/* curl's codes for a TLS set-up that waiting does not mend */
static bool tls_failure(CURLcode rc) {
    switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION: /* untrusted, expired, wrong host name */
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:           /* client certificate */
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        return true;
    default:
        return false;
    }
}

static int once(struct search_conn *k, int i, const char *method, const char *path,
                const char *ctype, const char *body, size_t len, bool gz,
                struct search_resp *r) {
    struct search_client *c = k->c;
    CURL *h = k->h;
    char url[2048];
    snprintf(url, sizeof url, "%s%s", c->urls[i], path);
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_reset(h); /* keeps the connection cache */
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    /* compressed responses only with compressed requests ([search] compress):
     * on a fast link gzip costs the engine CPU that indexing needs */
    if (c->compress) curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
    if (c->sigv4) {
        curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
        curl_easy_setopt(h, CURLOPT_USERNAME, c->aws_key_id);
        curl_easy_setopt(h, CURLOPT_PASSWORD, c->aws_secret);
    } else if (c->user) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(h, CURLOPT_USERNAME, c->user);
        curl_easy_setopt(h, CURLOPT_PASSWORD, c->password ? c->password : "");
    }
    if (c->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (c->client_cert) curl_easy_setopt(h, CURLOPT_SSLCERT, c->client_cert);
    if (c->client_key) curl_easy_setopt(h, CURLOPT_SSLKEY, c->client_key);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->tls_verify ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->tls_verify ? 2L : 0L);

    struct curl_slist *hd = NULL;
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s", ctype ? ctype : "application/json");
    /* no 100-continue round trip; a signed request keeps it (an empty
     * header in the list would be signed but not sent) */
    if (!c->sigv4) hd = curl_slist_append(hd, "Expect:");
    if (body) hd = curl_slist_append(hd, ct);
    if (gz) hd = curl_slist_append(hd, "Content-Encoding: gzip");
    if (c->auth_header) hd = curl_slist_append(hd, c->auth_header);
    if (c->sigv4) {
        /* the payload's hash, signed and sent: OpenSearch Serverless
         * requires the header, the service domain accepts it */
        char sha[65], line[96];
        sha256_hex(body ? body : "", body ? len : 0, sha);
        snprintf(line, sizeof line, "x-amz-content-sha256: %s", sha);
        hd = curl_slist_append(hd, line);
        if (c->aws_token_header) hd = curl_slist_append(hd, c->aws_token_header);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    if (!strcmp(method, "GET") && !body) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (!strcmp(method, "HEAD")) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
    }
    sbuf_reset(&r->body);
    r->status = 0;
    r->err[0] = '\0';
    r->tls = false;
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(hd);
    curl_off_t us = 0;
    curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &us);
    r->seconds = (double)us / 1e6;
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL); /* errbuf goes out of scope */
    if (rc != CURLE_OK) {
        r->tls = tls_failure(rc);
        snprintf(r->err, sizeof r->err, "%.7s %.60s%.40s: %.140s", method, c->shown[i], path,
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
        return SEARCH_ETRANSPORT;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    if (r->body.data == NULL) sbuf_grow(&r->body, 0);
    return SEARCH_OK;
}

int search_request(struct search_conn *k, const char *method, const char *path,
                   const char *content_type, const char *body, size_t len,
                   struct search_resp *r) {
    struct search_client *c = k->c;
    bool gz = false;
    if (body && c->compress && len >= GZIP_MIN_BYTES) {
        sbuf_reset(&k->gz);
        if (search_gzip(body, len, &k->gz) == 0) {
            body = k->gz.data;
            len = k->gz.len;
            gz = true;
        }
    }
    int rc = SEARCH_ETRANSPORT;
    for (int tries = 0; tries < c->nurls; tries++) {
        int i = atomic_load(&c->cur) % c->nurls;
        rc = once(k, i, method, path, content_type, body, len, gz, r);
        if (rc == SEARCH_OK) return rc;
        if (c->nurls > 1) {
            int next = (i + 1) % c->nurls;
            if (atomic_compare_exchange_strong(&c->cur, &i, next))
                log_warn("search", "%s; failing over to %s", r->err, c->shown[next]);
        }
    }
    return rc;
}

bool search_refused(struct search_conn *k, const char *req, long status, char *err,
                    size_t errlen) {
    if (status != 401 && status != 403) return false;
    struct search_client *c = k->c;
    int cur = atomic_load(&c->cur) % c->nurls;
    const char *who = strcmp(c->urls[cur], c->shown[cur]) ? "urls: the user:password@ "
                                                            "of the address"
                      : c->sigv4 ? "aws_access_key_id/aws_secret_access_key/aws_region (or "
                                   "the AWS_* environment variables)"
                      : strstr(c->auth_header ? c->auth_header : "", "ApiKey") ? "api_key"
                      : c->auth_header ? "bearer_token"
                      : c->user ? "user and password (or password_file)"
                                : "user and password: it asks for credentials and none "
                                  "are set";
    snprintf(err, errlen, "the search engine at %s refused the credentials: %s answered "
             "HTTP %ld%s; check [search] %s", c->shown[cur], req, status,
             status == 401 ? " (unauthorized)"
             : !strcmp(req, "GET /") ? " (forbidden: the account lacks the cluster monitor "
                                       "privilege)"
                                     : " (forbidden: the account lacks a privilege it needs)",
             who);
    cred_refused_note();
    return true;
}

int search_detect(struct search_client *c, struct search_conn *k, char *err, size_t errlen) {
    struct search_resp r;
    search_resp_init(&r);
    int rc = search_request(k, "GET", "/", NULL, NULL, 0, &r);
    if (rc != SEARCH_OK) {
        if (r.tls)
            snprintf(err, errlen, "the search engine's TLS connection failed: %s; check [search] "
                     "ca_file (the CA that signed the engine's certificate, which must be valid "
                     "now and name the host of [search] urls) and client_cert/client_key, or "
                     "tls_verify = false (never in production)", r.err);
        else
            snprintf(err, errlen, "cannot reach the search engine: %s; is it running? check "
                     "[search] urls", r.err);
        search_resp_free(&r);
        return -1;
    }
    if (search_refused(k, "GET /", r.status, err, errlen)) {
        search_resp_free(&r);
        return -1;
    }
    if (r.status != 200) {
        snprintf(err, errlen, "the search engine answered GET / with HTTP %ld: %.200s", r.status,
                 r.body.data ? r.body.data : "");
        search_resp_free(&r);
        return -1;
    }
    struct search_dialect d;
    if (search_dialect_from_root(r.body.data, r.body.len, &d, err, errlen) != 0) {
        search_resp_free(&r);
        return -1;
    }
    const struct search_dialect *was = search_client_dialect(c);
    const char *at = c->shown[atomic_load(&c->cur) % c->nurls];
    if (!was)
        log_info("search", "engine %s (%s) at %s", d.number, d.name, at);
    else if (strcmp(was->number, d.number) || was->engine != d.engine)
        log_warn("search", "the search engine at %s is now %s (%s), was %s (%s): requests and "
                 "new index versions follow the new version from here on", at, d.number, d.name,
                 was->number, was->name);
    if (!was || memcmp(was, &d, sizeof d)) search_client_set_dialect(c, &d);
    search_resp_free(&r);
    return 0;
}
