/* xa: two-phase XA transactions in the binlog.
 *
 * MariaDB (10.5+) and MySQL (5.7.7+) log an XA transaction that is prepared
 * and later committed as two binlog transactions, with others between them:
 *
 *   [GTID] XA START xid          (MySQL: a statement; MariaDB: a GTID flag)
 *          rows ...  XA END xid  XA_PREPARE_LOG_EVENT (one_phase 0, the xid)
 *   ... other transactions ...
 *   [GTID] XA COMMIT xid  |  XA ROLLBACK xid      (a statement, no rows)
 *
 * The first one's rows are not visible to other sessions until the second
 * commits. The decoder ends each as a transaction and says which in
 * bl_commit.xa, with the xid in one canonical text, X'gtrid',X'bqual',formatID
 * (lowercase hex, as both servers write it), so the sink can pair the two
 * (sync/pipeline/xa_prepared.c). A one-phase XA commit is an ordinary commit: MySQL
 * logs it as XA_PREPARE_LOG_EVENT with one_phase 1, MariaDB as an ordinary
 * transaction ending in an XID event. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog/binlog.h"
#include "binlog/internal.h"

static void hex_into(char **o, const char *end, const uint8_t *b, size_t n) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n && *o + 2 < end; i++) {
        *(*o)++ = digits[b[i] >> 4];
        *(*o)++ = digits[b[i] & 15];
    }
}

void bl_xid_format(char *out, size_t outlen, uint32_t format_id, const uint8_t *gtrid,
                   size_t gtrid_len, const uint8_t *bqual, size_t bqual_len) {
    if (!outlen) return;
    if (outlen < 2 * (gtrid_len + bqual_len) + 32) { /* never with BL_XID_MAX */
        out[0] = '\0';
        return;
    }
    char *o = out, *end = out + outlen;
    memcpy(o, "X'", 2), o += 2;
    hex_into(&o, end, gtrid, gtrid_len);
    memcpy(o, "',X'", 4), o += 4;
    hex_into(&o, end, bqual, bqual_len);
    snprintf(o, (size_t)(end - o), "',%lu", (unsigned long)format_id);
}

/* hex digit pairs from s into buf; where they stop, or NULL past cap */
static const char *hex_bytes(const char *s, const char *end, uint8_t *buf, size_t cap, size_t *n) {
    while (s + 1 < end && isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1])) {
        if (*n == cap) return NULL;
        char pair[3] = {s[0], s[1], '\0'};
        buf[(*n)++] = (uint8_t)strtoul(pair, NULL, 16);
        s += 2;
    }
    return s;
}

/* One string of an xid as a statement writes it: X'hex', 0xhex or 'text'
 * ('' for a quote). Its bytes into buf; false when it is none of those. */
static bool xid_string(const char **p, const char *end, uint8_t *buf, size_t cap, size_t *n) {
    const char *s = *p;
    *n = 0;
    if (s + 1 < end && (*s == 'X' || *s == 'x') && s[1] == '\'') {
        s = hex_bytes(s + 2, end, buf, cap, n);
        if (!s || s >= end || *s != '\'') return false;
        *p = s + 1;
        return true;
    }
    if (s + 1 < end && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s = hex_bytes(s + 2, end, buf, cap, n);
        if (!s) return false;
        *p = s;
        return true;
    }
    if (s < end && *s == '\'') {
        for (s++; s < end; s++) {
            if (*s == '\'') {
                if (s + 1 < end && s[1] == '\'') {
                    s++;
                } else {
                    *p = s + 1;
                    return true;
                }
            } else if (*s == '\\' && s + 1 < end) {
                s++;
            }
            if (*n == cap) return false;
            buf[(*n)++] = (uint8_t)*s;
        }
    }
    return false;
}

static const char *skip_space(const char *s, const char *end) {
    while (s < end && isspace((unsigned char)*s)) s++;
    return s;
}

bool bl_xid_parse(const char *text, size_t len, char *out, size_t outlen) {
    const char *s = text, *end = text + len;
    uint8_t gtrid[64], bqual[64];
    size_t gl = 0, bq = 0;
    unsigned long format_id = 1;
    s = skip_space(s, end);
    if (!xid_string(&s, end, gtrid, sizeof gtrid, &gl)) return false;
    s = skip_space(s, end);
    if (s < end && *s == ',') {
        s = skip_space(s + 1, end);
        if (!xid_string(&s, end, bqual, sizeof bqual, &bq)) return false;
        s = skip_space(s, end);
        if (s < end && *s == ',') {
            s = skip_space(s + 1, end);
            if (s >= end || !isdigit((unsigned char)*s)) return false;
            format_id = 0;
            while (s < end && isdigit((unsigned char)*s)) {
                format_id = format_id * 10 + (unsigned long)(*s - '0');
                if (format_id > 0xffffffffUL) return false;
                s++;
            }
        }
    }
    s = skip_space(s, end);
    while (s < end && (*s == ';' || isspace((unsigned char)*s))) s++;
    if (s != end) return false; /* ONE PHASE, SUSPEND ...: not a second phase */
    bl_xid_format(out, outlen, (uint32_t)format_id, gtrid, gl, bqual, bq);
    return out[0] != '\0';
}

int bl_xa_prepare_event(bl_decoder *d, const uint8_t *b, size_t n) {
    if (n < 13) return bl_error(d, "too short (%zu bytes)", n);
    bool one_phase = b[0] != 0;
    uint32_t format_id = bl_u32(b + 1);
    uint32_t gl = bl_u32(b + 5), bq = bl_u32(b + 9);
    if (gl > 64 || bq > 64 || 13 + (size_t)gl + bq > n)
        return bl_error(d, "xid lengths %u and %u do not fit (%zu bytes)", gl, bq, n);
    if (one_phase) {
        d->commit_xa = BL_XA_NONE; /* XA COMMIT ... ONE PHASE: an ordinary commit */
        return BL_OK;
    }
    bl_xid_format(d->xid, sizeof d->xid, format_id, b + 13, gl, b + 13 + gl, bq);
    d->commit_xa = BL_XA_PREPARED;
    return BL_OK;
}

void bl_xa_statement(bl_decoder *d, const char *q, size_t n, int kind) {
    /* past "XA COMMIT" / "XA ROLLBACK" and the blanks around the words */
    const char *s = q, *end = q + n;
    for (int words = 0; words < 2; words++) {
        s = skip_space(s, end);
        while (s < end && !isspace((unsigned char)*s)) s++;
    }
    d->commit_xa = kind;
    if (!bl_xid_parse(s, (size_t)(end - s), d->xid, sizeof d->xid)) d->xid[0] = '\0';
}
