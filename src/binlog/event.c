/* event: the event header, the checksum, the one dispatch switch, the
 * control events (FORMAT_DESCRIPTION, ROTATE, QUERY, XID, GTID, heartbeats)
 * and the transaction state machine drawn in binlog.h. Row, table-map,
 * payload and GTID-set details live in their own files. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <zlib.h>

#include "binlog/binlog.h"
#include "binlog/internal.h"

const char *const bl_change_name[3] = {"insert", "update", "delete"};

const char *bl_event_name(int type) {
    switch (type) {
    case BL_START_V3: return "START_V3";
    case BL_QUERY: return "QUERY";
    case BL_STOP_EVENT: return "STOP";
    case BL_ROTATE: return "ROTATE";
    case BL_INTVAR: return "INTVAR";
    case BL_RAND: return "RAND";
    case BL_USER_VAR: return "USER_VAR";
    case BL_FORMAT_DESCRIPTION: return "FORMAT_DESCRIPTION";
    case BL_XID: return "XID";
    case BL_TABLE_MAP: return "TABLE_MAP";
    case BL_WRITE_ROWS_V1: return "WRITE_ROWS_V1";
    case BL_UPDATE_ROWS_V1: return "UPDATE_ROWS_V1";
    case BL_DELETE_ROWS_V1: return "DELETE_ROWS_V1";
    case BL_INCIDENT: return "INCIDENT";
    case BL_HEARTBEAT: return "HEARTBEAT";
    case BL_IGNORABLE: return "IGNORABLE";
    case BL_ROWS_QUERY: return "ROWS_QUERY";
    case BL_WRITE_ROWS_V2: return "WRITE_ROWS";
    case BL_UPDATE_ROWS_V2: return "UPDATE_ROWS";
    case BL_DELETE_ROWS_V2: return "DELETE_ROWS";
    case BL_GTID: return "GTID";
    case BL_ANONYMOUS_GTID: return "ANONYMOUS_GTID";
    case BL_PREVIOUS_GTIDS: return "PREVIOUS_GTIDS";
    case BL_TRANSACTION_CONTEXT: return "TRANSACTION_CONTEXT";
    case BL_VIEW_CHANGE: return "VIEW_CHANGE";
    case BL_XA_PREPARE: return "XA_PREPARE";
    case BL_PARTIAL_UPDATE_ROWS: return "PARTIAL_UPDATE_ROWS";
    case BL_TRANSACTION_PAYLOAD: return "TRANSACTION_PAYLOAD";
    case BL_HEARTBEAT_V2: return "HEARTBEAT_V2";
    case BL_GTID_TAGGED: return "GTID_TAGGED";
    case BL_ANNOTATE_ROWS: return "ANNOTATE_ROWS";
    case BL_BINLOG_CHECKPOINT: return "BINLOG_CHECKPOINT";
    case BL_MARIA_GTID: return "GTID(MariaDB)";
    case BL_MARIA_GTID_LIST: return "GTID_LIST";
    case BL_START_ENCRYPTION: return "START_ENCRYPTION";
    case BL_QUERY_COMPRESSED: return "QUERY_COMPRESSED";
    case BL_WRITE_ROWS_COMPRESSED_V1: return "WRITE_ROWS_COMPRESSED_V1";
    case BL_UPDATE_ROWS_COMPRESSED_V1: return "UPDATE_ROWS_COMPRESSED_V1";
    case BL_DELETE_ROWS_COMPRESSED_V1: return "DELETE_ROWS_COMPRESSED_V1";
    case BL_WRITE_ROWS_COMPRESSED: return "WRITE_ROWS_COMPRESSED";
    case BL_UPDATE_ROWS_COMPRESSED: return "UPDATE_ROWS_COMPRESSED";
    case BL_DELETE_ROWS_COMPRESSED: return "DELETE_ROWS_COMPRESSED";
    default: return "UNKNOWN";
    }
}

int bl_error(bl_decoder *d, const char *fmt, ...) {
    char msg[BL_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int n = snprintf(d->err, sizeof d->err, "%s event at %.200s:%llu%s: ", bl_event_name(d->cur_type),
                     d->cur.file[0] ? d->cur.file : "?", (unsigned long long)d->ev_start,
                     d->in_payload ? " (inside TRANSACTION_PAYLOAD)" : "");
    if (n < 0) n = 0;
    size_t used = (size_t)n < sizeof d->err ? (size_t)n : sizeof d->err - 1;
    size_t ml = strlen(msg);
    if (ml > sizeof d->err - 1 - used) ml = sizeof d->err - 1 - used;
    memcpy(d->err + used, msg, ml);
    d->err[used + ml] = '\0';
    return BL_ERR;
}

void bl_decoder_init(bl_decoder *d, const bl_sink *sink) {
    memset(d, 0, sizeof *d);
    d->sink = sink;
    d->checksum_alg = -1;
    d->gtids = bl_gtid_new();
    sbuf_init(&d->scratch);
    sbuf_init(&d->scratch2);
    sbuf_init(&d->payload);
    sbuf_init(&d->gtid_text);
}

void bl_decoder_free(bl_decoder *d) {
    if (!d) return;
    bl_tables_free(d);
    bl_collations_free(d);
    free(d->cells);
    d->cells = NULL;
    sbuf_free(&d->scratch);
    sbuf_free(&d->scratch2);
    sbuf_free(&d->payload);
    sbuf_free(&d->gtid_text);
    bl_gtid_free(d->gtids);
    d->gtids = NULL;
}

void bl_decoder_refilter(bl_decoder *d) { d->filter_gen++; }

void bl_decoder_set_pos(bl_decoder *d, const char *file, uint64_t pos) {
    snprintf(d->cur.file, sizeof d->cur.file, "%s", file);
    d->cur.pos = pos;
}

int bl_decoder_set_gtids(bl_decoder *d, const char *text) {
    int rc = bl_gtid_parse(d->gtids, text, d->err, sizeof d->err);
    d->cur.ordinal = bl_gtid_ordinal(d->gtids); /* heartbeats before the first commit */
    return rc;
}

uint32_t bl_file_seq(const char *file) {
    const char *dot = file ? strrchr(file, '.') : NULL;
    uint64_t v = 0;
    if (!dot) return 0;
    for (const char *p = dot + 1; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX) return UINT32_MAX;
    }
    return (uint32_t)v;
}

/* binlog order of (file, pos): file names compare by length, then bytes */
static int pos_cmp(const char *fa, uint64_t pa, const char *fb, uint64_t pb) {
    size_t la = strlen(fa), lb = strlen(fb);
    if (la != lb) return la < lb ? -1 : 1;
    int c = strcmp(fa, fb);
    if (c) return c < 0 ? -1 : 1;
    return pa < pb ? -1 : pa > pb ? 1 : 0;
}

void bl_decoder_reconnected(bl_decoder *d, const bl_pos *resume_from) {
    if (d->last_delivered && pos_cmp(d->last_delivered_file, d->last_delivered, resume_from->file,
                                     resume_from->pos) > 0) {
        d->suppress = true;
        snprintf(d->suppress_file, sizeof d->suppress_file, "%s", d->last_delivered_file);
        d->suppress_upto = d->last_delivered;
    }
    d->txn_state = TXN_NONE;
    d->began = false;
    d->standalone = false;
    d->pending.kind = 0;
    d->commit_xa = BL_XA_NONE;
    d->in_payload = false;
    d->cur = *resume_from;
    d->cur.gtid[0] = '\0';
    d->have_fde = false;
}

/* ---------------------------------------------------------------- txns */

static void txn_start(bl_decoder *d, uint32_t ts) {
    d->txn.pos = d->ev_start;
    memcpy(d->txn.file, d->cur.file, sizeof d->txn.file);
    d->txn_ts = ts;
    d->began = false;
}

int bl_sink_begin(bl_decoder *d) {
    if (d->began) return BL_OK;
    d->began = true;
    if (d->quiet || !d->sink || !d->sink->begin) return BL_OK;
    int rc = d->sink->begin(d->sink->ctx, &d->txn, d->txn_ts);
    if (rc < 0) return bl_error(d, "sink refused the transaction");
    return rc > 0 ? BL_STOP : BL_OK;
}

static void apply_pending_gtid(bl_decoder *d) {
    struct bl_pending_gtid *g = &d->pending;
    if (g->kind == 1)
        bl_gtid_add_mariadb(d->gtids, g->domain, g->server, g->seq);
    else if (g->kind == 2)
        bl_gtid_add_mysql(d->gtids, g->uuid, g->tag[0] ? g->tag : NULL, g->seq);
    g->kind = 0;
}

/* end of a transaction (XID, COMMIT, a DDL statement): the only place a
 * checkpointable position is produced */
static int txn_commit(bl_decoder *d, uint32_t ts, const char *db, const char *sql, size_t sqllen) {
    apply_pending_gtid(d);
    sbuf_reset(&d->gtid_text);
    bl_gtid_format(d->gtids, &d->gtid_text);
    bl_commit c;
    d->cur.ordinal = bl_gtid_ordinal(d->gtids); /* heartbeats after it carry it too */
    c.end = d->cur; /* cur.pos is already the end of this event */
    memcpy(c.end.gtid, d->txn.gtid, sizeof c.end.gtid);
    c.ts = ts;
    c.gtid_executed = d->gtid_text.data ? d->gtid_text.data : "";
    c.xa = d->commit_xa;
    c.xid = d->commit_xa ? d->xid : "";
    d->commit_xa = BL_XA_NONE;
    d->txn_state = TXN_NONE;
    d->standalone = false;
    d->began = false;
    d->n_txns++;
    d->last_commit = c.end;
    d->have_commit = true;
    int rc = 0;
    if (!d->quiet && d->sink) {
        if (sql && d->sink->ddl) rc = d->sink->ddl(d->sink->ctx, db, sql, sqllen, &c);
        if (rc == 0 && d->sink->commit) rc = d->sink->commit(d->sink->ctx, &c);
    }
    d->txn.gtid[0] = '\0';
    if (rc < 0) return bl_error(d, "sink failed at commit");
    return rc > 0 ? BL_STOP : BL_OK;
}

/* -------------------------------------------------------------- events */

static int ev_format_description(bl_decoder *d, const uint8_t *ev, size_t len) {
    if (len < BL_HEADER_LEN + 57 + 5) return bl_error(d, "too short (%zu bytes)", len);
    const uint8_t *b = ev + BL_HEADER_LEN;
    memcpy(d->server_version, b + 2, 50);
    d->server_version[50] = '\0';
    if (strstr(d->server_version, "MariaDB"))
        d->flavor = BL_FLAVOR_MARIADB;
    else if (d->flavor == BL_FLAVOR_UNKNOWN)
        d->flavor = BL_FLAVOR_MYSQL;
    if (b[56] != BL_HEADER_LEN) return bl_error(d, "header length %u, expected 19", b[56]);
    size_t n = len - BL_HEADER_LEN - 57 - 5;
    if (n > 255) n = 255;
    memset(d->post_header_len, 0, sizeof d->post_header_len);
    memcpy(d->post_header_len, b + 57, n);
    d->n_post_header = (int)n;
    d->have_fde = true;
    return BL_OK;
}

static int ev_rotate(bl_decoder *d, const uint8_t *b, size_t n) {
    if (n < 8) return bl_error(d, "too short");
    size_t namelen = n - 8;
    if (namelen >= BL_FILE_MAX) return bl_error(d, "file name too long");
    memcpy(d->cur.file, b + 8, namelen);
    d->cur.file[namelen] = '\0';
    d->cur.pos = bl_u64(b);
    return BL_OK;
}

static bool word_is(const char *q, size_t n, const char *w) {
    size_t wl = strlen(w);
    while (n && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++, n--;
    if (n < wl || strncasecmp(q, w, wl) != 0) return false;
    return n == wl || q[wl] == ' ' || q[wl] == ';' || q[wl] == '\n' || q[wl] == '\t' || q[wl] == '\r';
}

static int ev_query(bl_decoder *d, const uint8_t *b, size_t n, uint32_t ts, bool compressed) {
    size_t ph = d->post_header_len[BL_QUERY - 1];
    if (ph < 13) ph = 13;
    if (n < ph) return bl_error(d, "too short");
    uint8_t dblen = b[8];
    size_t svlen = bl_u16(b + 11);
    size_t off = ph + svlen;
    if (off + dblen + 1 > n) return bl_error(d, "truncated (status vars %zu, db %u)", svlen, dblen);
    char db[256];
    memcpy(db, b + off, dblen);
    db[dblen] = '\0';
    off += dblen + 1;
    const char *q = (const char *)b + off;
    size_t qlen = n - off;
    if (compressed) {
        size_t used;
        sbuf_reset(&d->scratch2);
        if (bl_mariadb_uncompress(&d->scratch2, b + off, n - off, &used) != BL_OK)
            return bl_error(d, "cannot uncompress the statement");
        q = d->scratch2.data;
        qlen = d->scratch2.len;
    }
    if (word_is(q, qlen, "BEGIN") || word_is(q, qlen, "XA START")) {
        if (d->txn_state == TXN_NONE) txn_start(d, ts);
        d->txn_state = TXN_IN;
        return BL_OK;
    }
    if (word_is(q, qlen, "COMMIT") || word_is(q, qlen, "ROLLBACK") || word_is(q, qlen, "XA END") ||
        word_is(q, qlen, "XA COMMIT") || word_is(q, qlen, "XA ROLLBACK")) {
        if (word_is(q, qlen, "XA END")) return BL_OK;
        if (word_is(q, qlen, "XA COMMIT")) bl_xa_statement(d, q, qlen, BL_XA_COMMITTED);
        if (word_is(q, qlen, "XA ROLLBACK")) bl_xa_statement(d, q, qlen, BL_XA_ROLLED_BACK);
        return txn_commit(d, ts, NULL, NULL, 0);
    }
    if (d->txn_state == TXN_IN && !d->standalone) return BL_OK; /* SAVEPOINT etc. */
    /* a statement on its own: DDL (or statement-format DML, which we ignore) */
    if (d->txn_state == TXN_NONE) txn_start(d, ts);
    bl_schema_invalidate(d, db, q, qlen);
    return txn_commit(d, ts, db, q, qlen);
}

static int ev_maria_gtid(bl_decoder *d, const uint8_t *b, size_t n, uint32_t server_id, uint32_t ts) {
    if (n < 13) return bl_error(d, "too short");
    uint64_t seq = bl_u64(b);
    uint32_t domain = bl_u32(b + 8);
    uint8_t flags = b[12];
    txn_start(d, ts);
    d->pending.kind = 1;
    d->pending.domain = domain;
    d->pending.server = server_id;
    d->pending.seq = seq;
    snprintf(d->txn.gtid, sizeof d->txn.gtid, "%u-%u-%llu", domain, server_id,
             (unsigned long long)seq);
    d->standalone = (flags & 1) != 0;
    d->txn_state = d->standalone ? TXN_GTID_SEEN : TXN_IN;
    return BL_OK;
}

static int ev_maria_gtid_list(bl_decoder *d, const uint8_t *b, size_t n) {
    if (n < 4) return bl_error(d, "too short");
    uint32_t count = bl_u32(b) & 0x0fffffff;
    if ((uint64_t)count * 16 + 4 > n) return bl_error(d, "truncated list of %u", count);
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = b + 4 + 16 * i;
        bl_gtid_seed_mariadb(d->gtids, bl_u32(e), bl_u32(e + 4), bl_u64(e + 8));
    }
    return BL_OK;
}

static int ev_mysql_gtid(bl_decoder *d, int type, const uint8_t *b, size_t n, uint32_t ts) {
    txn_start(d, ts);
    d->txn_state = TXN_GTID_SEEN;
    d->standalone = false;
    d->txn.gtid[0] = '\0';
    if (type == BL_ANONYMOUS_GTID) return BL_OK;
    uint8_t uuid[16];
    uint64_t gno;
    char tag[33] = "";
    if (type == BL_GTID_TAGGED) {
        if (bl_gtid_tagged_event(b, n, uuid, &gno, tag) != BL_OK)
            return bl_error(d, "malformed tagged GTID");
    } else {
        if (n < 25) return bl_error(d, "too short");
        memcpy(uuid, b + 1, 16);
        gno = bl_u64(b + 17);
    }
    char u[37];
    bl_uuid_format(uuid, u);
    if (tag[0])
        snprintf(d->txn.gtid, sizeof d->txn.gtid, "%s:%s:%llu", u, tag, (unsigned long long)gno);
    else
        snprintf(d->txn.gtid, sizeof d->txn.gtid, "%s:%llu", u, (unsigned long long)gno);
    d->pending.kind = 2;
    memcpy(d->pending.uuid, uuid, 16);
    memcpy(d->pending.tag, tag, sizeof tag);
    d->pending.seq = gno;
    return BL_OK;
}

static int heartbeat(bl_decoder *d) {
    if (d->quiet || !d->sink || !d->sink->heartbeat) return BL_OK;
    bl_pos at = d->cur;
    at.gtid[0] = '\0';
    int rc = d->sink->heartbeat(d->sink->ctx, &at);
    if (rc < 0) return bl_error(d, "sink failed at heartbeat");
    return rc > 0 ? BL_STOP : BL_OK;
}

/* HEARTBEAT_V2 (MySQL 8.0.26+): serialized fields 0 = file name, 1 = position */
static int ev_heartbeat_v2(bl_decoder *d, const uint8_t *b, size_t n) {
    size_t off = 0;
    while (off < n) {
        uint8_t field = b[off++];
        if (field == 0) break; /* end mark */
        uint64_t flen;
        size_t used = bl_lenenc(b + off, n - off, &flen);
        if (!used || flen > n - off - used) return bl_error(d, "malformed field %u", field);
        off += used;
        if (field == 1 && flen < sizeof d->hb_file) {
            memcpy(d->hb_file, b + off, flen);
            d->hb_file[flen] = '\0';
        } else if (field == 2) {
            uint64_t v = 0;
            if (bl_lenenc(b + off, flen, &v)) d->hb_pos = v;
        }
        off += flen;
    }
    return heartbeat(d);
}

static bool checksum_ok(const uint8_t *ev, size_t len) {
    if (len < BL_HEADER_LEN + 4) return false;
    uint32_t want = bl_u32(ev + len - 4);
    uint32_t got = (uint32_t)crc32(0L, ev, (uInt)(len - 4));
    return want == got;
}

/* The event's checksum verified (CRC32 when the format event says so, or
 * when an event carries one before the format event was seen); *blen loses
 * the checksum's 4 bytes when there is one. BL_OK or the error. */
static int check_checksum(bl_decoder *d, const uint8_t *ev, size_t len, int type, uint16_t flags,
                          size_t *blen) {
    if (type == BL_FORMAT_DESCRIPTION) {
        if (len < BL_HEADER_LEN + 57 + 5) return bl_error(d, "too short (%zu bytes)", len);
        int alg = ev[len - 5];
        if (alg == 1 && !checksum_ok(ev, len)) {
            /* in a binlog file still open, the format event carries the
             * IN_USE flag (0x1) that its checksum was computed without */
            bool ok = false;
            if (flags & 1) {
                uint8_t *copy = xmalloc(len);
                memcpy(copy, ev, len);
                copy[17] &= (uint8_t)~1u;
                ok = checksum_ok(copy, len);
                free(copy);
            }
            if (!ok) return bl_error(d, "checksum mismatch");
        }
        d->checksum_alg = alg == 1 ? 1 : 0;
        *blen -= 4;
    } else if (d->checksum_alg == 1) {
        if (checksum_ok(ev, len))
            *blen -= 4;
        else if (!(type == BL_ROTATE && (flags & BL_FLAG_ARTIFICIAL)))
            return bl_error(d, "checksum mismatch");
    } else if (d->checksum_alg < 0 && checksum_ok(ev, len)) {
        *blen -= 4;
    }
    return BL_OK;
}

/* Where this event ends: the decoder's position moved to it (not for an
 * event inside a payload, nor an artificial one: a fake rotate, a
 * heartbeat), and whether it was already handed to the sink before a
 * reconnect (d->quiet). true when the event is artificial. */
static bool advance(bl_decoder *d, int type, uint32_t ts, uint32_t log_pos, uint16_t flags,
                    size_t len) {
    bool artificial = (flags & BL_FLAG_ARTIFICIAL) || (type == BL_ROTATE && ts == 0 && log_pos == 0) ||
                      type == BL_HEARTBEAT || type == BL_HEARTBEAT_V2;
    uint64_t end = d->cur.pos;
    if (d->in_payload || artificial) {
        /* no move */
    } else if (log_pos != 0) {
        end = log_pos;
    } else if (type == BL_FORMAT_DESCRIPTION || type == BL_MARIA_GTID_LIST ||
               type == BL_PREVIOUS_GTIDS) {
        /* the format event re-sent when a dump starts mid-file */
    } else {
        end = d->cur.pos + len;
    }
    if (!d->in_payload && !artificial) {
        d->ev_start = end >= len ? end - len : 0;
        d->cur.pos = end;
    }
    /* events already handed to the sink before a reconnect */
    if (!d->in_payload) { /* events inside a payload share the payload's verdict */
        d->quiet = false;
        if (d->suppress && !artificial && type != BL_FORMAT_DESCRIPTION) {
            if (pos_cmp(d->cur.file, end, d->suppress_file, d->suppress_upto) <= 0)
                d->quiet = true;
            else
                d->suppress = false;
        }
    }
    return artificial;
}

int bl_decode(bl_decoder *d, const uint8_t *ev, size_t len) {
    d->cur_type = len > 4 ? ev[4] : 0;
    if (!d->in_payload) d->ev_start = d->cur.pos;
    if (len < BL_HEADER_LEN) return bl_error(d, "event of %zu bytes is shorter than a header", len);
    uint32_t ts = bl_u32(ev);
    int type = ev[4];
    uint32_t server_id = bl_u32(ev + 5);
    uint32_t size = bl_u32(ev + 9);
    uint32_t log_pos = bl_u32(ev + 13);
    uint16_t flags = bl_u16(ev + 17);
    if (size != len) return bl_error(d, "header says %u bytes, got %zu", size, len);

    /* checksum first */
    size_t blen = len - BL_HEADER_LEN;
    if (!d->in_payload) {
        int crc = check_checksum(d, ev, len, type, flags, &blen);
        if (crc != BL_OK) return crc;
    }
    const uint8_t *b = ev + BL_HEADER_LEN;

    bool artificial = advance(d, type, ts, log_pos, flags, len);
    d->n_events++;

    int rc = BL_OK;
    switch (type) {
    case BL_FORMAT_DESCRIPTION: rc = ev_format_description(d, ev, len); break;
    case BL_ROTATE: rc = ev_rotate(d, b, blen); break;
    case BL_QUERY: rc = ev_query(d, b, blen, ts, false); break;
    case BL_QUERY_COMPRESSED: rc = ev_query(d, b, blen, ts, true); break;
    case BL_XID: rc = txn_commit(d, ts, NULL, NULL, 0); break;
    case BL_XA_PREPARE:
        rc = bl_xa_prepare_event(d, b, blen);
        if (rc == BL_OK) rc = txn_commit(d, ts, NULL, NULL, 0);
        break;
    case BL_TABLE_MAP: rc = bl_table_map(d, b, blen); break;
    case BL_WRITE_ROWS_V1: case BL_UPDATE_ROWS_V1: case BL_DELETE_ROWS_V1:
    case BL_WRITE_ROWS_V2: case BL_UPDATE_ROWS_V2: case BL_DELETE_ROWS_V2:
    case BL_PARTIAL_UPDATE_ROWS:
    case BL_WRITE_ROWS_COMPRESSED_V1: case BL_UPDATE_ROWS_COMPRESSED_V1:
    case BL_DELETE_ROWS_COMPRESSED_V1: case BL_WRITE_ROWS_COMPRESSED:
    case BL_UPDATE_ROWS_COMPRESSED: case BL_DELETE_ROWS_COMPRESSED:
        rc = bl_rows_event(d, type, b, blen, ts);
        break;
    case BL_MARIA_GTID: rc = ev_maria_gtid(d, b, blen, server_id, ts); break;
    case BL_MARIA_GTID_LIST: rc = ev_maria_gtid_list(d, b, blen); break;
    case BL_GTID: case BL_ANONYMOUS_GTID: case BL_GTID_TAGGED:
        rc = ev_mysql_gtid(d, type, b, blen, ts);
        break;
    case BL_PREVIOUS_GTIDS:
        if (bl_gtid_empty(d->gtids) && bl_gtid_decode_mysql(d->gtids, b, blen) != BL_OK)
            rc = bl_error(d, "malformed GTID set");
        break;
    case BL_TRANSACTION_PAYLOAD:
        if (d->in_payload) return bl_error(d, "nested payload");
        rc = bl_transaction_payload(d, b, blen);
        break;
    case BL_HEARTBEAT:
        /* idle: the server has sent everything up to log_pos in this file */
        if (!d->in_payload && d->txn_state == TXN_NONE && log_pos > d->cur.pos && blen < BL_FILE_MAX &&
            blen == strlen(d->cur.file) && memcmp(b, d->cur.file, blen) == 0)
            d->cur.pos = log_pos;
        rc = heartbeat(d);
        break;
    case BL_HEARTBEAT_V2: rc = ev_heartbeat_v2(d, b, blen); break;
    case BL_INCIDENT:
        rc = bl_error(d, "the server recorded an incident (events may be missing from the binlog); "
                         "resynchronise the affected tables");
        break;
    case BL_START_ENCRYPTION:
        rc = bl_error(d, "encrypted binlogs are not supported by a replica reading raw events");
        break;
    default: break; /* ANNOTATE_ROWS, ROWS_QUERY, INTVAR, ... skipped by length */
    }
    if (d->n_tables > 4096 && d->txn_state == TXN_NONE) bl_tables_free(d);
    if (rc == BL_OK || rc == BL_STOP) {
        if (!d->quiet && !artificial && !d->in_payload && type != BL_FORMAT_DESCRIPTION) {
            d->last_delivered = d->cur.pos;
            if (strcmp(d->last_delivered_file, d->cur.file) != 0)
                memcpy(d->last_delivered_file, d->cur.file, sizeof d->last_delivered_file);
        }
    }
    return rc;
}
