/* bulk: bulk request bodies written straight into an sbuf, and the scan of a
 * bulk response down to each item's status and error (search.h).
 *
 * Versions (a write lands only if it is fresher):
 *   index   {"index":{..,"version":V,"version_type":"external"}} — the engine
 *           keeps the document only if V is greater than the stored version
 *   delete  the same with "delete"; the tombstone keeps V for index.gc_deletes
 *   (version_gte: "external_gte", which lands on an equal stored version too:
 *   a check's repair over a version someone raised in the engine)
 *   update  partial documents and scripts cannot carry an external version, so
 *           the document stores its version in a field (version_field) and the
 *           painless script compares it first: an older update becomes a noop.
 *           Full index writes splice the same field into the source so later
 *           updates can compare against it.
 * Full index writes also carry the consistency check's ss_hash and
 * ss_key_hash (search/content_hash.h), hashed over the body as built. */
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "jsonw.h"
#include "search/content_hash.h"
#include "search/jscan.h"
#include "search/search.h"

/* the guarded merge of a partial document; params: v version, f field, d doc */
static const char MERGE_SCRIPT[] =
    "def c=ctx._source[params.f]; if (c != null && c >= params.v) { ctx.op='none' } "
    "else { ctx._source.putAll(params.d); ctx._source[params.f]=params.v }";
/* the same, for a document that carries the check's content hash: the merge
 * changes its content, so the hash goes (the check compares it by content) */
static const char MERGE_SCRIPT_UNHASH[] =
    "def c=ctx._source[params.f]; if (c != null && c >= params.v) { ctx.op='none' } "
    "else { ctx._source.putAll(params.d); ctx._source[params.f]=params.v; "
    "ctx._source.remove('" CONTENT_HASH_FIELD "') }";

/* append n bytes with raw CR/LF turned into spaces: one line of NDJSON */
static void add_oneline(sbuf *out, const char *p, size_t n) {
    sbuf_grow(out, n);
    char *dst = out->data + out->len;
    memcpy(dst, p, n);
    /* the document builder never writes raw newlines; other sources may */
    for (char *q = memchr(dst, '\n', n); q; q = memchr(q, '\n', (size_t)(dst + n - q)))
        *q = ' ';
    for (char *q = memchr(dst, '\r', n); q; q = memchr(q, '\r', (size_t)(dst + n - q)))
        *q = ' ';
    out->len += n;
    out->data[out->len] = '\0';
}

static void add_u64(sbuf *out, uint64_t v) {
    char b[24];
    int n = fmt_u64(b, v);
    sbuf_add(out, b, (size_t)n);
}

/* body is a JSON object: write it with `members` (text like "\"a\":1") added
 * first. Anything else is written as it is (the engine will reject it and the
 * item becomes a dead letter with the engine's error). */
static void add_obj_with(sbuf *out, const char *body, size_t len, const char *members,
                         size_t mlen) {
    const char *p = body, *e = body + len;
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    if (p >= e || *p != '{' || mlen == 0) {
        add_oneline(out, body, len);
        return;
    }
    p++;
    const char *q = p;
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
    sbuf_addc(out, '{');
    sbuf_add(out, members, mlen);
    if (q < e && *q != '}') sbuf_addc(out, ',');
    add_oneline(out, p, (size_t)(e - p));
}

static void action_line(sbuf *out, const struct search_dialect *d, const char *action,
                        const struct bulk_item *it, bool external) {
    sbuf_adds(out, "{\"");
    sbuf_adds(out, action);
    sbuf_adds(out, "\":{\"_index\":");
    json_escape(out, it->index, strlen(it->index));
    if (d && d->doc_type) sbuf_adds(out, ",\"_type\":\"_doc\"");
    sbuf_adds(out, ",\"_id\":");
    json_escape(out, it->id, strlen(it->id));
    if (it->routing && *it->routing) {
        sbuf_adds(out, ",\"");
        sbuf_adds(out, d && d->routing_key ? d->routing_key : "routing");
        sbuf_adds(out, "\":");
        json_escape(out, it->routing, strlen(it->routing));
    }
    if (it->require_alias) sbuf_adds(out, ",\"require_alias\":true");
    if (external && it->version) {
        sbuf_adds(out, ",\"version\":");
        add_u64(out, it->version);
        sbuf_adds(out, it->version_gte ? ",\"version_type\":\"external_gte\""
                                       : ",\"version_type\":\"external\"");
    } else {
        sbuf_adds(out, ",\"retry_on_conflict\":3");
    }
    sbuf_adds(out, "}}\n");
}

void bulk_append(sbuf *out, const struct search_dialect *d, const struct bulk_item *it) {
    bool vf = it->version_field && *it->version_field;
    sbuf m = SBUF_INIT;
    switch (it->op) {
    case BULK_INDEX:
        action_line(out, d, "index", it, true);
        if (vf) {
            json_escape(&m, it->version_field, strlen(it->version_field));
            sbuf_addc(&m, ':');
            add_u64(&m, it->version);
        }
        if (it->content_hash && it->body) { /* over the body as built, before these fields */
            sbuf_adds(&m, m.len ? ",\"" CONTENT_HASH_FIELD "\":" : "\"" CONTENT_HASH_FIELD "\":");
            add_u64(&m, content_hash(it->body, it->body_len));
            sbuf_adds(&m, ",\"" KEY_HASH_FIELD "\":");
            add_u64(&m, key_hash(it->id, strlen(it->id)));
        }
        add_obj_with(out, it->body ? it->body : "{}", it->body ? it->body_len : 2, m.data,
                     m.len);
        sbuf_addc(out, '\n');
        break;
    case BULK_DELETE:
        action_line(out, d, "delete", it, true);
        break;
    case BULK_UPDATE:
        action_line(out, d, "update", it, false);
        if (!vf) {
            sbuf_adds(out, "{\"doc\":"); /* (no version field: no content hash either) */
            add_oneline(out, it->body ? it->body : "{}", it->body ? it->body_len : 2);
            sbuf_adds(out, "}\n");
            break;
        }
        sbuf_adds(out, "{\"script\":{\"lang\":\"painless\",\"source\":");
        if (it->content_hash) json_escape(out, MERGE_SCRIPT_UNHASH, sizeof MERGE_SCRIPT_UNHASH - 1);
        else json_escape(out, MERGE_SCRIPT, sizeof MERGE_SCRIPT - 1);
        sbuf_adds(out, ",\"params\":{\"v\":");
        add_u64(out, it->version);
        sbuf_adds(out, ",\"f\":");
        json_escape(out, it->version_field, strlen(it->version_field));
        sbuf_adds(out, ",\"d\":");
        add_oneline(out, it->body ? it->body : "{}", it->body ? it->body_len : 2);
        sbuf_adds(out, "}}}\n");
        break;
    case BULK_SCRIPT: {
        action_line(out, d, "update", it, false);
        sbuf src = SBUF_INIT;
        if (vf) {
            sbuf_adds(&src, "def c=ctx._source[params._ss_f]; if (c != null && c >= params._ss_v) "
                            "{ ctx.op='none' } else { ");
            const char *sc = it->script ? it->script : "";
            size_t sl = strlen(sc);
            while (sl && (sc[sl - 1] == ' ' || sc[sl - 1] == '\n' || sc[sl - 1] == '\t' ||
                          sc[sl - 1] == '\r'))
                sl--;
            sbuf_add(&src, sc, sl);
            /* painless wants ';' after a plain statement and refuses one
             * after a block ("extraneous semicolon") */
            if (sl && sc[sl - 1] != '}' && sc[sl - 1] != ';') sbuf_addc(&src, ';');
            sbuf_adds(&src, "\n ctx._source[params._ss_f]=params._ss_v");
            if (it->content_hash) sbuf_adds(&src, "; ctx._source.remove('" CONTENT_HASH_FIELD "')");
            sbuf_adds(&src, " }");
            sbuf_adds(&m, "\"_ss_v\":");
            add_u64(&m, it->version);
            sbuf_adds(&m, ",\"_ss_f\":");
            json_escape(&m, it->version_field, strlen(it->version_field));
        } else {
            sbuf_adds(&src, it->script ? it->script : "");
        }
        sbuf_adds(out, "{\"script\":{\"lang\":\"painless\",\"source\":");
        json_escape(out, src.data ? src.data : "", src.len);
        sbuf_adds(out, ",\"params\":");
        add_obj_with(out, it->body ? it->body : "{}", it->body ? it->body_len : 2, m.data,
                     m.len);
        sbuf_adds(out, "}}\n");
        sbuf_free(&src);
        break;
    }
    }
    sbuf_free(&m);
}

/* ---------- response ---------- */

/* an error's "type", copied into r->err_type_buf */
static void scan_error_type(const char *p, const char *e, struct bulk_result *r) {
    struct js_walk o;
    const char *k;
    size_t kn;
    p = js_members(&o, p, e);
    while (js_member(&o, &p, &k, &kn)) {
        if (*p != '"' || !js_key_is(k, kn, "type")) {
            p = js_skip(p, e);
            continue;
        }
        const char *s;
        size_t n;
        p = js_str(p, e, &s, &n);
        if (!p) break;
        if (n >= sizeof r->err_type_buf) n = sizeof r->err_type_buf - 1;
        memcpy(r->err_type_buf, s, n);
        r->err_type_buf[n] = '\0';
        r->err_type = r->err_type_buf;
    }
}

static const char *scan_item(const char *p, const char *e, struct bulk_result *r) {
    /* {"index":{"_index":..,"status":201,"error":{..}}} */
    struct js_walk o, o2;
    const char *k;
    size_t kn;
    p = js_members(&o, p, e);
    while (js_member(&o, &p, &k, &kn)) {
        if (*p != '{') {
            p = js_skip(p, e);
            continue;
        }
        p = js_members(&o2, p, e);
        while (js_member(&o2, &p, &k, &kn)) {
            if (js_key_is(k, kn, "status")) {
                int64_t v = 0;
                p = js_int(p, e, &v);
                if (r) r->status = (int)v;
            } else if (js_key_is(k, kn, "error")) {
                const char *b = p;
                if (*p == '{' && r) scan_error_type(p, e, r);
                p = js_skip(p, e);
                if (p && r) r->error = b, r->error_len = (size_t)(p - b);
            } else {
                p = js_skip(p, e);
            }
        }
    }
    return p;
}

int bulk_response_parse(const char *json, size_t len, struct bulk_result *res, int expected) {
    const char *p = json, *e = json + len;
    struct js_walk o, a;
    const char *k;
    size_t kn;
    int n = -1;
    p = js_members(&o, p, e);
    while (js_member(&o, &p, &k, &kn)) {
        if (!js_key_is(k, kn, "items") || *p != '[') {
            p = js_skip(p, e);
            continue;
        }
        n = 0;
        p = js_elements(&a, p, e);
        while (js_element(&a, &p)) {
            struct bulk_result *r = n < expected ? &res[n] : NULL;
            if (r) memset(r, 0, sizeof *r);
            p = scan_item(p, e, r);
            n++;
        }
    }
    if (!p) return -1;
    return n;
}

enum bulk_class http_classify(long status) {
    if (status >= 200 && status < 300) return BULK_OK;
    if (status == 400 || status == 413) return BULK_PERMANENT;
    return BULK_TRANSIENT; /* 401/403 (fix credentials), 404, 429, 5xx, 0 */
}

enum bulk_class bulk_classify(enum bulk_op op, const struct bulk_result *r) {
    int s = r->status;
    const char *t = r->err_type ? r->err_type : "";
    if (s >= 200 && s < 300) return BULK_OK;
    if (s == 404 && op == BULK_DELETE) return BULK_OK; /* tombstone written */
    if (s == 409 && (op == BULK_INDEX || op == BULK_DELETE)) return BULK_STALE;
    if (s == 404 && !strcmp(t, "document_missing_exception")) return BULK_MISSING;
    if (s == 429 || s >= 500 || s == 409) return BULK_TRANSIENT;
    if (!strcmp(t, "es_rejected_execution_exception") ||
        !strcmp(t, "unavailable_shards_exception") ||
        !strcmp(t, "cluster_block_exception") || !strcmp(t, "circuit_breaking_exception"))
        return BULK_TRANSIENT;
    return BULK_PERMANENT;
}

uint64_t bulk_conflict_version(const struct bulk_result *r) {
    static const char key[] = "current version [";
    const char *e = r->error, *p = e ? memmem(e, r->error_len, key, sizeof key - 1) : NULL;
    if (!p) return 0;
    uint64_t v = 0;
    for (p += sizeof key - 1; p < e + r->error_len && *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return v;
}

int search_gzip(const char *in, size_t len, sbuf *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    size_t bound = deflateBound(&z, (uLong)len);
    sbuf_grow(out, bound);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)(out->data + out->len);
    z.avail_out = (uInt)(out->cap - out->len - 1);
    int rc = deflate(&z, Z_FINISH);
    if (rc != Z_STREAM_END) {
        deflateEnd(&z);
        return -1;
    }
    out->len += z.total_out;
    out->data[out->len] = '\0';
    deflateEnd(&z);
    return 0;
}
