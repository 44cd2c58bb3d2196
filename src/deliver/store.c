/* store: checkpoint file, offsets table and dead-letter table (store.h).
 *
 * The dead-letter store: a change the engine refuses for good (a mapping
 * error, a 400) is written as a row of the dead_letters table — index, id,
 * routing, version, operation, body or script, the engine's error — before
 * delivery acknowledges it (dl_store_put; -1 leaves it unacknowledged, so
 * the checkpoint stays behind it: I1 in txn.c). Rows are listed and replayed
 * through a delivery of their own (dl_list, dl_replay: deleted once the
 * engine acknowledged them; a row refused again comes back as a new one).
 * The store keeps in memory which documents have rows (an "index\0id" hash
 * set, loaded at dl_store_new and grown by dl_store_put), so the check below
 * costs a hash lookup per acknowledged write and a query only for the few
 * documents that have rows.
 *
 * Invariant upheld here:
 *   I3 no resurrection: a dead letter superseded by a newer write of the
 *      same document is cleared, so a replay never brings back a document
 *      deleted since (nor older content over newer). When the engine accepts
 *      a full-state write (INDEX or DELETE) of a document, delivery calls
 *      dl_store_written (its `written` callback), which deletes that
 *      document's rows with an older version. Without it a replay after the
 *      engine forgot the delete's tombstone (index.gc_deletes, a restart)
 *      would re-create the document: its external version is then compared
 *      with nothing. Partial updates (UPDATE, SCRIPT) supersede nothing —
 *      they do not carry the whole document. Tested by
 *      t_run_dead_letter_superseded (a refused write, the row's delete, a
 *      replay once the tombstone is forgotten: the document stays deleted)
 *      and t_deliver_deadletters. */
#include "deliver/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "jsonw.h"
#include "log.h"

#define CKPT_MAGIC "searchsync-checkpoint 1"

/* ---------- checkpoint file ---------- */

int checkpoint_file_save(const char *path, const char *position, uint64_t seq, char *err,
                         size_t errlen) {
    if (strchr(position, '\n')) {
        snprintf(err, errlen, "checkpoint position contains a newline");
        return -1;
    }
    sbuf b = SBUF_INIT;
    sbuf_printf(&b, "%s\n%" PRIu64 "\n%s\n", CKPT_MAGIC, seq, position);
    uLong crc = crc32(0L, (const Bytef *)b.data, (uInt)b.len);
    sbuf_printf(&b, "crc32 %08lx\n", (unsigned long)crc);
    sbuf tmp = SBUF_INIT;
    sbuf_printf(&tmp, "%s.tmp", path);
    int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp.data, strerror(errno));
        goto out;
    }
    size_t off = 0;
    while (off < b.len) {
        ssize_t n = write(fd, b.data + off, b.len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            snprintf(err, errlen, "%s: %s", tmp.data, strerror(errno));
            close(fd);
            goto out;
        }
        off += (size_t)n;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        snprintf(err, errlen, "%s: %s", tmp.data, strerror(errno));
        goto out;
    }
    if (rename(tmp.data, path) != 0) {
        snprintf(err, errlen, "rename %s: %s", path, strerror(errno));
        goto out;
    }
    {
        char *dcopy = xstrdup(path);
        int dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        free(dcopy);
    }
    rc = 0;
out:
    sbuf_free(&b);
    sbuf_free(&tmp);
    return rc;
}

int checkpoint_file_load(const char *path, char *pos, size_t poslen, uint64_t *seq, char *err,
                         size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 1;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    sbuf b = SBUF_INIT;
    sbuf_read_fp(&b, f);
    fclose(f);
    int rc = -1;
    char *crcline = b.data ? strstr(b.data, "crc32 ") : NULL;
    if (!b.data || strncmp(b.data, CKPT_MAGIC "\n", sizeof CKPT_MAGIC) || !crcline) {
        snprintf(err, errlen, "%s is not a searchsync checkpoint (torn or foreign file); "
                 "remove it only if you know where to resume", path);
        goto out;
    }
    uLong crc = crc32(0L, (const Bytef *)b.data, (uInt)(crcline - b.data));
    unsigned long want = strtoul(crcline + 6, NULL, 16);
    if (crc != want) {
        snprintf(err, errlen, "%s: checksum mismatch (corrupt checkpoint); refusing to guess "
                 "a resume position", path);
        goto out;
    }
    char *p = b.data + sizeof CKPT_MAGIC;
    char *nl = strchr(p, '\n');
    if (!nl) goto bad;
    if (seq) *seq = strtoull(p, NULL, 10);
    p = nl + 1;
    nl = strchr(p, '\n');
    if (!nl) goto bad;
    snprintf(pos, poslen, "%.*s", (int)(nl - p), p);
    rc = 0;
    goto out;
bad:
    snprintf(err, errlen, "%s: malformed checkpoint", path);
out:
    sbuf_free(&b);
    return rc;
}

int checkpoint_file_cb(void *ud, const char *position, uint64_t seq) {
    char err[512];
    if (checkpoint_file_save((const char *)ud, position, seq, err, sizeof err) != 0) {
        log_error("deliver", "checkpoint: %s", err);
        return -1;
    }
    return 0;
}

/* ---------- offsets table ---------- */

int offsets_save(MYSQL *m, const char *source, const char *position, uint64_t seq, char *err,
                 size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO offsets (source, position, txn_seq) VALUES (");
    db_quote(m, &q, source, strlen(source));
    sbuf_addc(&q, ',');
    db_quote(m, &q, position, strlen(position));
    sbuf_printf(&q, ",%" PRIu64 ") ON DUPLICATE KEY UPDATE position=VALUES(position), "
                    "txn_seq=VALUES(txn_seq)", seq);
    int rc = db_exec(m, q.data, err, errlen);
    sbuf_free(&q);
    return rc;
}

static int fence_of(MYSQL *m, const char *source, uint64_t *fence, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT fence FROM offsets WHERE source=");
    db_quote(m, &q, source, strlen(source));
    char *v = db_scalar(m, q.data, err, errlen);
    sbuf_free(&q);
    *fence = v ? strtoull(v, NULL, 10) : 0;
    int found = v != NULL;
    free(v);
    return found;
}

/* Runs the fenced statement q (freed), then reads the fence back: 0 when
 * ours still stands, 1 (*other = the larger one) when another holder's
 * does, -1 on an error. */
static int exec_then_check_fence(MYSQL *m, sbuf *q, const char *source, uint64_t fence,
                                 uint64_t *other, char *err, size_t errlen) {
    int rc = db_exec(m, q->data, err, errlen);
    sbuf_free(q);
    if (rc < 0) return -1;
    uint64_t have = 0;
    if (fence_of(m, source, &have, err, errlen) < 0) return -1;
    if (have > fence) {
        if (other) *other = have;
        return 1;
    }
    return 0;
}

int offsets_save_fenced(MYSQL *m, const char *source, const char *position, uint64_t seq,
                        uint64_t fence, uint64_t *other, char *err, size_t errlen) {
    if (!fence) return offsets_save(m, source, position, seq, err, errlen);
    sbuf q = SBUF_INIT;
    /* one statement: the row is written only while its token is not larger
     * (columns are assigned left to right: fence last) */
    sbuf_adds(&q, "INSERT INTO offsets (source, position, txn_seq, fence) VALUES (");
    db_quote(m, &q, source, strlen(source));
    sbuf_addc(&q, ',');
    db_quote(m, &q, position, strlen(position));
    sbuf_printf(&q, ",%" PRIu64 ",%" PRIu64 ") ON DUPLICATE KEY UPDATE "
                    "position = IF(fence <= VALUES(fence), VALUES(position), position), "
                    "txn_seq = IF(fence <= VALUES(fence), VALUES(txn_seq), txn_seq), "
                    "fence = GREATEST(fence, VALUES(fence))", seq, fence);
    return exec_then_check_fence(m, &q, source, fence, other, err, errlen);
}

int offsets_claim(MYSQL *m, const char *source, uint64_t fence, uint64_t *other, char *err,
                  size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "UPDATE offsets SET fence = %" PRIu64 " WHERE fence < %" PRIu64
                    " AND source=", fence, fence);
    db_quote(m, &q, source, strlen(source));
    return exec_then_check_fence(m, &q, source, fence, other, err, errlen);
}

int offsets_load(MYSQL *m, const char *source, char *pos, size_t poslen, char *err,
                 size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT position FROM offsets WHERE source=");
    db_quote(m, &q, source, strlen(source));
    char *row[1];
    int got = db_row1(m, q.data, q.len, row, 1, err, errlen);
    int rc = got < 0 ? -1 : 1;
    if (got < 0)
        snprintf(err, errlen, "reading the checkpoint: %s", mysql_error(m));
    else if (row[0]) {
        snprintf(pos, poslen, "%s", row[0]);
        rc = 0;
    }
    db_row_free(row, 1);
    sbuf_free(&q);
    return rc;
}

/* ---------- dead letters ---------- */

/* documents that have dead-letter rows: "index\0id" keys, chained hash */
struct dl_key {
    struct dl_key *next;
    uint64_t h;
    size_t n;
    char k[];
};

struct dl_store {
    pthread_mutex_t mu;
    MYSQL *m;
    db_params p;
    char *host, *socket, *user, *password, *database, *source;
    char *mapping; /* its index configs' name in the metadata (NULL: source) */
    struct dl_key **keys;
    size_t nkeys, cap;
    long superseded;
};

static uint64_t key_hash(const char *index, const char *id) {
    uint64_t h = 14695981039346656037ull;
    for (const char *p = index; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *p = id; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h;
}

static struct dl_key **key_slot(struct dl_store *s, const char *index, const char *id,
                                uint64_t h) {
    size_t il = strlen(index), dl = strlen(id);
    struct dl_key **pp = &s->keys[h & (s->cap - 1)];
    while (*pp && !((*pp)->h == h && (*pp)->n == il + 1 + dl && !memcmp((*pp)->k, index, il + 1) &&
                    !memcmp((*pp)->k + il + 1, id, dl)))
        pp = &(*pp)->next;
    return pp;
}

static void key_add(struct dl_store *s, const char *index, const char *id) {
    if (s->nkeys + 1 > s->cap / 2) {
        size_t ncap = s->cap ? s->cap * 2 : 256;
        struct dl_key **nk = xcalloc(ncap, sizeof *nk);
        for (size_t i = 0; i < s->cap; i++)
            for (struct dl_key *k = s->keys[i], *nx; k; k = nx) {
                nx = k->next;
                k->next = nk[k->h & (ncap - 1)];
                nk[k->h & (ncap - 1)] = k;
            }
        free(s->keys);
        s->keys = nk;
        s->cap = ncap;
    }
    uint64_t h = key_hash(index, id);
    struct dl_key **pp = key_slot(s, index, id, h);
    if (*pp) return;
    size_t il = strlen(index), dl = strlen(id);
    struct dl_key *k = xmalloc(sizeof *k + il + 1 + dl);
    k->next = NULL;
    k->h = h;
    k->n = il + 1 + dl;
    memcpy(k->k, index, il + 1);
    memcpy(k->k + il + 1, id, dl);
    *pp = k;
    s->nkeys++;
}

static char *dupn(const char *s) { return s ? xstrdup(s) : NULL; }

struct dl_store *dl_store_new(const db_params *p, const char *source, char *err,
                              size_t errlen) {
    struct dl_store *s = xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->p = *p;
    s->p.host = s->host = dupn(p->host);
    s->p.socket = s->socket = dupn(p->socket);
    s->p.user = s->user = dupn(p->user);
    s->p.password = s->password = dupn(p->password);
    s->p.database = s->database = dupn(p->database);
    s->source = xstrdup(source ? source : "");
    s->m = db_connect(&s->p, err, errlen);
    if (!s->m) {
        dl_store_free(s);
        return NULL;
    }
    /* which documents already have rows */
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT DISTINCT index_name, doc_id FROM dead_letters WHERE source=");
    db_quote(s->m, &q, s->source, strlen(s->source));
    MYSQL_RES *r = db_query(s->m, q.data, q.len, err, errlen);
    sbuf_free(&q);
    if (!r) {
        snprintf(err, errlen, "reading dead letters: %s", mysql_error(s->m));
        dl_store_free(s);
        return NULL;
    }
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r)))
        if (row[0] && row[1]) key_add(s, row[0], row[1]);
    mysql_free_result(r);
    return s;
}

void dl_store_written(void *ud, const char *index, const char *doc_id, uint64_t version) {
    struct dl_store *s = ud;
    pthread_mutex_lock(&s->mu);
    if (!s->nkeys) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    uint64_t h = key_hash(index, doc_id);
    struct dl_key **pp = key_slot(s, index, doc_id, h);
    if (*pp) {
        char err[512];
        sbuf q = SBUF_INIT;
        if (db_ensure(&s->m, &s->p, err, sizeof err) == 0) {
            sbuf_adds(&q, "DELETE FROM dead_letters WHERE source=");
            db_quote(s->m, &q, s->source, strlen(s->source));
            sbuf_adds(&q, " AND index_name=");
            db_quote(s->m, &q, index, strlen(index));
            sbuf_adds(&q, " AND doc_id=");
            db_quote(s->m, &q, doc_id, strlen(doc_id));
            sbuf_printf(&q, " AND version < %" PRIu64, version);
            if (db_exec(s->m, q.data, err, sizeof err) == 0) {
                s->superseded += (long)mysql_affected_rows(s->m);
                /* rows with a newer version may remain: keep the key then */
                sbuf_reset(&q);
                sbuf_adds(&q, "SELECT 1 FROM dead_letters WHERE source=");
                db_quote(s->m, &q, s->source, strlen(s->source));
                sbuf_adds(&q, " AND index_name=");
                db_quote(s->m, &q, index, strlen(index));
                sbuf_adds(&q, " AND doc_id=");
                db_quote(s->m, &q, doc_id, strlen(doc_id));
                sbuf_adds(&q, " LIMIT 1");
                char *one = db_scalar(s->m, q.data, err, sizeof err);
                if (!one) {
                    struct dl_key *k = *pp;
                    *pp = k->next;
                    free(k);
                    s->nkeys--;
                }
                free(one);
            } else {
                /* harmless: a replay of a superseded row loses to the newer write */
                log_warn("deliver", "superseding dead letters failed: %s", err);
            }
        }
        sbuf_free(&q);
    }
    pthread_mutex_unlock(&s->mu);
}

long dl_store_superseded(struct dl_store *s) {
    pthread_mutex_lock(&s->mu);
    long n = s->superseded;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void dl_store_set_mapping(struct dl_store *s, const char *mapping) {
    free(s->mapping);
    s->mapping = mapping ? xstrdup(mapping) : NULL;
}

void dl_store_free(struct dl_store *s) {
    if (!s) return;
    db_close(s->m);
    free(s->host);
    free(s->socket);
    free(s->user);
    free(s->password);
    free(s->database);
    free(s->source);
    free(s->mapping);
    for (size_t i = 0; i < s->cap; i++)
        for (struct dl_key *k = s->keys[i], *nx; k; k = nx) {
            nx = k->next;
            free(k);
        }
    free(s->keys);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* The dead letter's row; with only_version, kept only while dl->index is
 * still one of the source's versions. 1 inserted, 0 not (that version is
 * gone), -1 with err. */
static int put_row(struct dl_store *s, const struct dead_letter *dl, bool only_version, char *err,
                   size_t errlen) {
    if (db_ensure(&s->m, &s->p, err, errlen) != 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO dead_letters (source, index_name, doc_id, routing, version, "
                  "op, status, error, body, script, attempts) SELECT ");
    db_quote(s->m, &q, s->source, strlen(s->source));
    sbuf_addc(&q, ',');
    db_quote(s->m, &q, dl->index, strlen(dl->index));
    sbuf_addc(&q, ',');
    db_quote(s->m, &q, dl->doc_id, strlen(dl->doc_id));
    sbuf_addc(&q, ',');
    if (dl->routing)
        db_quote(s->m, &q, dl->routing, strlen(dl->routing));
    else
        sbuf_adds(&q, "NULL");
    sbuf_printf(&q, ",%" PRIu64 ",'%s',%d,", dl->version, change_op_name(dl->op), dl->status);
    db_quote(s->m, &q, dl->error ? dl->error : "", dl->error ? strlen(dl->error) : 0);
    sbuf_addc(&q, ',');
    if (dl->body)
        db_quote(s->m, &q, dl->body, dl->body_len);
    else
        sbuf_adds(&q, "NULL");
    sbuf_addc(&q, ',');
    if (dl->script)
        db_quote(s->m, &q, dl->script, strlen(dl->script));
    else
        sbuf_adds(&q, "NULL");
    sbuf_printf(&q, ",%d FROM DUAL", dl->attempts);
    if (only_version) {
        const char *mapping = s->mapping ? s->mapping : s->source;
        sbuf_adds(&q, " WHERE EXISTS (SELECT 1 FROM index_versions v JOIN index_configs c ON "
                      "c.id = v.index_id WHERE c.source = ");
        db_quote(s->m, &q, mapping, strlen(mapping));
        sbuf_adds(&q, " AND v.physical_name = ");
        db_quote(s->m, &q, dl->index, strlen(dl->index));
        sbuf_addc(&q, ')');
    }
    long long n = db_exec_rows(s->m, q.data, err, errlen);
    sbuf_free(&q);
    if (n > 0) key_add(s, dl->index, dl->doc_id);
    return n < 0 ? -1 : n > 0;
}

int dl_store_put(void *ud, const struct dead_letter *dl) {
    struct dl_store *s = ud;
    char err[512];
    pthread_mutex_lock(&s->mu);
    int rc = put_row(s, dl, false, err, sizeof err);
    pthread_mutex_unlock(&s->mu);
    if (rc < 0) log_error("deliver", "writing a dead letter failed (will retry): %s", err);
    return rc < 0 ? -1 : 0;
}

int dl_store_put_if_version(void *ud, const struct dead_letter *dl) {
    struct dl_store *s = ud;
    char err[512];
    pthread_mutex_lock(&s->mu);
    int rc = put_row(s, dl, true, err, sizeof err);
    pthread_mutex_unlock(&s->mu);
    if (rc < 0) log_error("deliver", "writing a dead letter failed (will retry): %s", err);
    return rc < 0 ? -1 : rc == 0;
}

int dl_list(MYSQL *m, const char *source, const char *index, int limit, sbuf *out, char *err,
            size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT id, source, index_name, doc_id, routing, version, op, status, error, "
                  "attempts, created_at FROM dead_letters WHERE source=");
    db_quote(m, &q, source, strlen(source));
    if (index) {
        sbuf_adds(&q, " AND index_name=");
        db_quote(m, &q, index, strlen(index));
    }
    sbuf_printf(&q, " ORDER BY id DESC LIMIT %d", limit > 0 ? limit : 100);
    int rc = -1;
    MYSQL_RES *r = db_query(m, q.data, q.len, err, errlen);
    if (!r) {
        snprintf(err, errlen, "listing dead letters: %s", mysql_error(m));
        goto out;
    }
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r))) {
        jsonw w;
        jw_init(&w, out);
        jw_obj_open(&w);
        static const char *const keys[] = {"id",     "source", "index",    "doc_id",
                                           "routing", "version", "op",      "status",
                                           "error",  "attempts", "created_at"};
        for (int i = 0; i < 11; i++) {
            jw_key(&w, keys[i]);
            if (!row[i])
                jw_null(&w);
            else if (i == 0 || i == 5 || i == 7 || i == 9)
                jw_raw(&w, row[i], strlen(row[i]));
            else
                jw_str(&w, row[i]);
        }
        jw_obj_close(&w);
        sbuf_addc(out, '\n');
    }
    mysql_free_result(r);
    rc = 0;
out:
    sbuf_free(&q);
    return rc;
}

/* well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF) */
static bool utf8_ok(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t k = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2
                 : (c & 0xf8) == 0xf0 ? 3 : 9;
        if (k == 9 || (k && i + k >= n)) return false;
        if (k == 1 && c < 0xc2) return false;
        unsigned cp = k == 0 ? c : c & (0x3f >> k);
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (p[i + j] & 0x3f);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += k + 1;
    }
    return true;
}

int dl_store_put_message(struct dl_store *s, const char *where, const char *at,
                         const char *why, const char *raw, size_t len, char *err,
                         size_t errlen) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    sbuf body = SBUF_INIT;
    if (utf8_ok((const unsigned char *)raw, len) && !memchr(raw, '\0', len)) {
        sbuf_add(&body, raw, len);
    } else {
        const unsigned char *u = (const unsigned char *)raw;
        sbuf_adds(&body, "base64:");
        for (size_t i = 0; i < len; i += 3) {
            unsigned v = (unsigned)u[i] << 16 | (i + 1 < len ? (unsigned)u[i + 1] << 8 : 0) |
                         (i + 2 < len ? u[i + 2] : 0);
            char q[4] = {b64[v >> 18 & 63], b64[v >> 12 & 63],
                         i + 1 < len ? b64[v >> 6 & 63] : '=', i + 2 < len ? b64[v & 63] : '='};
            sbuf_add(&body, q, 4);
        }
    }
    pthread_mutex_lock(&s->mu);
    int rc = db_ensure(&s->m, &s->p, err, errlen);
    if (rc == 0) {
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "INSERT INTO dead_letters (source, index_name, doc_id, version, op, status, "
                      "error, body) VALUES (");
        db_quote(s->m, &q, s->source, strlen(s->source));
        sbuf_adds(&q, ",CONCAT('kafka:', ");
        db_quote(s->m, &q, where, strlen(where));
        sbuf_adds(&q, "),");
        db_quote(s->m, &q, at, strlen(at));
        sbuf_adds(&q, ",0,'message',0,");
        db_quote(s->m, &q, why, strlen(why));
        sbuf_addc(&q, ',');
        db_quote(s->m, &q, body.data ? body.data : "", body.len);
        sbuf_addc(&q, ')');
        rc = db_exec(s->m, q.data, err, errlen);
        sbuf_free(&q);
    }
    pthread_mutex_unlock(&s->mu);
    sbuf_free(&body);
    return rc;
}

long dl_replay(MYSQL *m, const char *source, const char *index, uint64_t id,
               struct deliver *d, int timeout_ms, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT id, index_name, doc_id, routing, version, op, body, script "
                  "FROM dead_letters WHERE op <> 'message' AND source=");
    db_quote(m, &q, source, strlen(source));
    if (index) {
        sbuf_adds(&q, " AND index_name=");
        db_quote(m, &q, index, strlen(index));
    }
    if (id) sbuf_printf(&q, " AND id=%" PRIu64, id);
    sbuf_adds(&q, " ORDER BY id");
    long n = -1;
    sbuf ids = SBUF_INIT;
    if (mysql_query(m, q.data) != 0) {
        snprintf(err, errlen, "reading dead letters: %s", mysql_error(m));
        goto out;
    }
    /* streamed, not db_query: the rows carry whole document bodies, and
     * each goes on to delivery (whose queue bounds memory) as it is read */
    MYSQL_RES *r = mysql_use_result(m);
    MYSQL_ROW row;
    n = 0;
    while (r && (row = mysql_fetch_row(r))) {
        unsigned long *lens = mysql_fetch_lengths(r);
        int op = change_op_parse(row[5] ? row[5] : "");
        struct change c = {
            .index = row[1],
            .doc_id = row[2],
            .routing = row[3],
            .version = strtoull(row[4], NULL, 10),
            .op = op < 0 ? CHANGE_INDEX : (enum change_op)op,
            .body = row[6],
            .body_len = row[6] ? lens[6] : 0,
            .script = row[7],
        };
        if (deliver_submit(d, &c) != DELIVER_OK) {
            log_warn("deliver", "dead letter %s cannot be replayed (invalid change)", row[0]);
            continue;
        }
        sbuf_printf(&ids, "%s%s", ids.len ? "," : "", row[0]);
        n++;
    }
    if (r) mysql_free_result(r);
    uint64_t seq = deliver_txn_end(d, "dead-letter-replay");
    if (deliver_wait_txn(d, seq, timeout_ms) != DELIVER_OK) {
        snprintf(err, errlen, "replayed dead letters were not acknowledged within %d ms; "
                 "rows kept", timeout_ms);
        n = -1;
        goto out;
    }
    if (ids.len) {
        sbuf_reset(&q);
        sbuf_printf(&q, "DELETE FROM dead_letters WHERE id IN (%s)", ids.data);
        if (db_exec(m, q.data, err, errlen) != 0) n = -1;
    }
out:
    sbuf_free(&q);
    sbuf_free(&ids);
    return n;
}
