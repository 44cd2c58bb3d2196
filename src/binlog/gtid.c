/* gtid: GTID sets of both flavors.
 *
 * MySQL: `uuid:1-5:7,uuid2:tag:1-3` — per (uuid, tag) a sorted list of
 * closed intervals; binary form for COM_BINLOG_DUMP_GTID and PREVIOUS_GTIDS
 * (n_sids, uuid, [tag], n_intervals, [start, end) pairs; the tagged format
 * of 8.3+ marks n_sids with format byte 1). MariaDB: `domain-server-seq`
 * lists, one entry per domain (the last transaction seen in it).
 * Also the GTID_TAGGED event (MySQL serialization library format). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "binlog/binlog.h"
#include "binlog/internal.h"

struct ival {
    uint64_t lo, hi; /* closed */
};
struct sid {
    uint8_t uuid[16];
    char tag[33];
    struct ival *iv;
    size_t n, cap;
};
struct dom {
    uint32_t domain, server;
    uint64_t seq;
};
struct bl_gtid_set {
    int flavor;
    struct sid *sids;
    size_t nsids, capsids;
    struct dom *doms;
    size_t ndoms, capdoms;
};

bl_gtid_set *bl_gtid_new(void) { return xcalloc(1, sizeof(bl_gtid_set)); }

void bl_gtid_clear(bl_gtid_set *s) {
    for (size_t i = 0; i < s->nsids; i++) free(s->sids[i].iv);
    free(s->sids);
    free(s->doms);
    memset(s, 0, sizeof *s);
}

void bl_gtid_free(bl_gtid_set *s) {
    if (!s) return;
    bl_gtid_clear(s);
    free(s);
}

int bl_gtid_flavor(const bl_gtid_set *s) { return s->flavor; }
bool bl_gtid_empty(const bl_gtid_set *s) { return s->nsids == 0 && s->ndoms == 0; }

static void set_dom(bl_gtid_set *s, uint32_t d, uint32_t srv, uint64_t seq, bool only_new) {
    s->flavor = BL_FLAVOR_MARIADB;
    for (size_t i = 0; i < s->ndoms; i++)
        if (s->doms[i].domain == d) {
            if (!only_new) s->doms[i].server = srv, s->doms[i].seq = seq;
            return;
        }
    if (s->ndoms == s->capdoms) {
        s->capdoms = s->capdoms ? 2 * s->capdoms : 4;
        s->doms = xrealloc(s->doms, s->capdoms * sizeof *s->doms);
    }
    /* keep sorted by domain */
    size_t i = s->ndoms;
    while (i > 0 && s->doms[i - 1].domain > d) {
        s->doms[i] = s->doms[i - 1];
        i--;
    }
    s->doms[i].domain = d;
    s->doms[i].server = srv;
    s->doms[i].seq = seq;
    s->ndoms++;
}

void bl_gtid_add_mariadb(bl_gtid_set *s, uint32_t d, uint32_t srv, uint64_t seq) {
    set_dom(s, d, srv, seq, false);
}
void bl_gtid_seed_mariadb(bl_gtid_set *s, uint32_t d, uint32_t srv, uint64_t seq) {
    set_dom(s, d, srv, seq, true);
}

static struct sid *get_sid(bl_gtid_set *s, const uint8_t uuid[16], const char *tag) {
    if (!tag) tag = "";
    size_t i;
    for (i = 0; i < s->nsids; i++) {
        int c = memcmp(s->sids[i].uuid, uuid, 16);
        if (c == 0) c = strcmp(s->sids[i].tag, tag);
        if (c == 0) return &s->sids[i];
        if (c > 0) break;
    }
    if (s->nsids == s->capsids) {
        s->capsids = s->capsids ? 2 * s->capsids : 4;
        s->sids = xrealloc(s->sids, s->capsids * sizeof *s->sids);
    }
    memmove(&s->sids[i + 1], &s->sids[i], (s->nsids - i) * sizeof *s->sids);
    s->nsids++;
    struct sid *x = &s->sids[i];
    memset(x, 0, sizeof *x);
    memcpy(x->uuid, uuid, 16);
    snprintf(x->tag, sizeof x->tag, "%s", tag);
    return x;
}

static void add_interval(struct sid *x, uint64_t lo, uint64_t hi) {
    /* insert then merge overlapping/adjacent */
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 4;
        x->iv = xrealloc(x->iv, x->cap * sizeof *x->iv);
    }
    size_t i = x->n;
    while (i > 0 && x->iv[i - 1].lo > lo) {
        x->iv[i] = x->iv[i - 1];
        i--;
    }
    x->iv[i].lo = lo;
    x->iv[i].hi = hi;
    x->n++;
    size_t o = 0;
    for (size_t k = 1; k < x->n; k++) {
        if (x->iv[k].lo <= x->iv[o].hi + 1) {
            if (x->iv[k].hi > x->iv[o].hi) x->iv[o].hi = x->iv[k].hi;
        } else {
            x->iv[++o] = x->iv[k];
        }
    }
    x->n = o + 1;
}

int bl_gtid_add_mysql(bl_gtid_set *s, const uint8_t uuid[16], const char *tag, uint64_t gno) {
    s->flavor = BL_FLAVOR_MYSQL;
    add_interval(get_sid(s, uuid, tag), gno, gno);
    return BL_OK;
}

/* The transaction ordinal of a set (the versions of [source] versions =
 * gtid, sync/pipeline/gtid_version.c): MariaDB, the sum over domains of the last
 * seq_no (every transaction raises its domain's, and a promoted replica goes
 * on with the same numbers); MySQL, the number of transactions in the set.
 * The same transaction gives the same number on every server of one
 * replication topology. */
uint64_t bl_gtid_ordinal(const bl_gtid_set *s) {
    uint64_t n = 0;
    for (size_t i = 0; i < s->ndoms; i++) n += s->doms[i].seq;
    for (size_t i = 0; i < s->nsids; i++)
        for (size_t k = 0; k < s->sids[i].n; k++) n += s->sids[i].iv[k].hi - s->sids[i].iv[k].lo + 1;
    return n;
}

/* Does `big` hold every transaction of `small`? MariaDB: each domain of small
 * is in big with a seq_no at least as high; MySQL: each interval of small is
 * inside one of big's. */
bool bl_gtid_contains(const bl_gtid_set *big, const bl_gtid_set *small) {
    for (size_t i = 0; i < small->ndoms; i++) {
        size_t j = 0;
        while (j < big->ndoms && big->doms[j].domain != small->doms[i].domain) j++;
        if (j == big->ndoms || big->doms[j].seq < small->doms[i].seq) return false;
    }
    for (size_t i = 0; i < small->nsids; i++) {
        const struct sid *x = &small->sids[i], *y = NULL;
        for (size_t j = 0; j < big->nsids && !y; j++)
            if (!memcmp(big->sids[j].uuid, x->uuid, 16) && !strcmp(big->sids[j].tag, x->tag))
                y = &big->sids[j];
        for (size_t k = 0; k < x->n; k++) {
            bool in = false;
            for (size_t m = 0; y && m < y->n && !in; m++)
                in = y->iv[m].lo <= x->iv[k].lo && x->iv[k].hi <= y->iv[m].hi;
            if (!in) return false;
        }
    }
    return true;
}

void bl_uuid_format(const uint8_t u[16], char out[37]) {
    static const char hx[] = "0123456789abcdef";
    int o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hx[u[i] >> 4];
        out[o++] = hx[u[i] & 15];
    }
    out[o] = '\0';
}

static int parse_uuid(const char *p, size_t n, uint8_t out[16]) {
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '-') continue;
        if (!isxdigit((unsigned char)p[i]) || k >= 32) return -1;
        int v = isdigit((unsigned char)p[i]) ? p[i] - '0' : (tolower((unsigned char)p[i]) - 'a' + 10);
        if (k % 2 == 0) out[k / 2] = (uint8_t)(v << 4); else out[k / 2] |= (uint8_t)v;
        k++;
    }
    return k == 32 ? 0 : -1;
}

static bool parse_u64(const char **p, const char *end, uint64_t *v) {
    const char *s = *p;
    uint64_t x = 0;
    if (s >= end || !isdigit((unsigned char)*s)) return false;
    while (s < end && isdigit((unsigned char)*s)) {
        if (x > (UINT64_MAX - 9) / 10) return false;
        x = x * 10 + (uint64_t)(*s++ - '0');
    }
    *p = s;
    *v = x;
    return true;
}

/* "uuid:1-5:7:tag:3-4" (one uuid block) */
static int parse_mysql_block(bl_gtid_set *s, const char *b, const char *e) {
    const char *colon = memchr(b, ':', (size_t)(e - b));
    if (!colon) return -1;
    uint8_t uuid[16];
    const char *ub = b, *ue = colon;
    while (ub < ue && isspace((unsigned char)*ub)) ub++;
    while (ue > ub && isspace((unsigned char)ue[-1])) ue--;
    if (parse_uuid(ub, (size_t)(ue - ub), uuid)) return -1;
    char tag[33] = "";
    const char *p = colon + 1;
    bool any = false;
    while (p < e) {
        const char *q = p;
        while (q < e && *q != ':') q++;
        const char *t = p;
        while (t < q && isspace((unsigned char)*t)) t++;
        if (t < q && (isalpha((unsigned char)*t) || *t == '_')) {
            size_t tl = (size_t)(q - t);
            while (tl && isspace((unsigned char)t[tl - 1])) tl--;
            if (tl > 32) return -1;
            for (size_t i = 0; i < tl; i++) tag[i] = (char)tolower((unsigned char)t[i]);
            tag[tl] = '\0';
        } else {
            uint64_t lo, hi;
            const char *r = t;
            if (!parse_u64(&r, q, &lo)) return -1;
            hi = lo;
            if (r < q && *r == '-') {
                r++;
                if (!parse_u64(&r, q, &hi)) return -1;
            }
            while (r < q && isspace((unsigned char)*r)) r++;
            if (r != q || lo == 0 || hi < lo) return -1;
            add_interval(get_sid(s, uuid, tag), lo, hi);
            any = true;
        }
        p = q < e ? q + 1 : q;
    }
    (void)any;
    s->flavor = BL_FLAVOR_MYSQL;
    return 0;
}

int bl_gtid_parse(bl_gtid_set *s, const char *text, char *err, size_t errlen) {
    bl_gtid_clear(s);
    const char *p = text, *end = text + strlen(text);
    while (p < end && isspace((unsigned char)*p)) p++;
    if (p == end) return BL_OK;
    bool mysql = strchr(text, ':') != NULL;
    while (p < end) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        if (!q) q = end;
        if (mysql) {
            if (parse_mysql_block(s, p, q)) goto bad;
        } else {
            uint64_t d, srv, seq;
            const char *r = p;
            while (r < q && isspace((unsigned char)*r)) r++;
            if (!parse_u64(&r, q, &d) || r >= q || *r++ != '-' || !parse_u64(&r, q, &srv) ||
                r >= q || *r++ != '-' || !parse_u64(&r, q, &seq))
                goto bad;
            while (r < q && isspace((unsigned char)*r)) r++;
            if (r != q || d > UINT32_MAX || srv > UINT32_MAX) goto bad;
            set_dom(s, (uint32_t)d, (uint32_t)srv, seq, false);
        }
        p = q < end ? q + 1 : q;
        while (p < end && isspace((unsigned char)*p)) p++;
    }
    return BL_OK;
bad:
    snprintf(err, errlen, "malformed GTID set '%s' (MySQL: uuid:1-5[:tag:1-3],...; MariaDB: domain-server-seq,...)",
             text);
    bl_gtid_clear(s);
    return BL_ERR;
}

void bl_gtid_format(const bl_gtid_set *s, sbuf *out) {
    char b[64];
    if (s->ndoms) {
        for (size_t i = 0; i < s->ndoms; i++)
            sbuf_printf(out, "%s%u-%u-%llu", i ? "," : "", s->doms[i].domain, s->doms[i].server,
                        (unsigned long long)s->doms[i].seq);
        return;
    }
    for (size_t i = 0; i < s->nsids; i++) {
        const struct sid *x = &s->sids[i];
        bool same_uuid = i > 0 && memcmp(s->sids[i - 1].uuid, x->uuid, 16) == 0;
        if (!same_uuid) {
            if (i) sbuf_addc(out, ',');
            bl_uuid_format(x->uuid, b);
            sbuf_adds(out, b);
        }
        if (x->tag[0]) {
            sbuf_addc(out, ':');
            sbuf_adds(out, x->tag);
        }
        for (size_t k = 0; k < x->n; k++) {
            if (x->iv[k].lo == x->iv[k].hi)
                sbuf_printf(out, ":%llu", (unsigned long long)x->iv[k].lo);
            else
                sbuf_printf(out, ":%llu-%llu", (unsigned long long)x->iv[k].lo,
                            (unsigned long long)x->iv[k].hi);
        }
    }
}

/* ------------------------------------------- serialization library ints */
static size_t ser_varlen(const uint8_t *p, size_t n, uint64_t *v) {
    if (n < 1) return 0;
    uint8_t b0 = p[0];
    if (b0 == 0xff) {
        if (n < 9) return 0;
        *v = bl_u64(p + 1);
        return 9;
    }
    size_t cnt = 1;
    while (b0 & 1) cnt++, b0 >>= 1;
    if (n < cnt) return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < cnt; i++) x |= (uint64_t)p[i] << (8 * i);
    *v = x >> cnt;
    return cnt;
}

static void put_ser_varlen(sbuf *o, uint64_t v) {
    uint8_t b[9];
    size_t cnt = 1;
    while (cnt < 9 && (v >> (7 * cnt)) != 0) cnt++;
    if (cnt >= 9) {
        b[0] = 0xff;
        for (int i = 0; i < 8; i++) b[1 + i] = (uint8_t)(v >> (8 * i));
        sbuf_add(o, b, 9);
        return;
    }
    uint64_t x = (v << cnt) | ((1ULL << (cnt - 1)) - 1);
    for (size_t i = 0; i < cnt; i++) b[i] = (uint8_t)(x >> (8 * i));
    sbuf_add(o, b, cnt);
}

int bl_gtid_tagged_event(const uint8_t *p, size_t n, uint8_t uuid[16], uint64_t *gno, char tag[33]) {
    if (n < 1 || p[0] != 2) return BL_ERR; /* serialization format version */
    size_t off = 1, u;
    uint64_t psize, lnif, fid, v;
    if (!(u = ser_varlen(p + off, n - off, &psize))) return BL_ERR;
    off += u;
    if (!(u = ser_varlen(p + off, n - off, &lnif))) return BL_ERR;
    off += u;
    if (psize < off || psize > n) return BL_ERR;
    size_t end = (size_t)psize;
    bool have_tag = false, have_gno = false;
    memset(uuid, 0, 16);
    tag[0] = '\0';
    while (off < end) {
        if (!(u = ser_varlen(p + off, end - off, &fid))) return BL_ERR;
        off += u;
        switch (fid) {
        case 1:
            for (int i = 0; i < 16; i++) {
                if (!(u = ser_varlen(p + off, end - off, &v)) || v > 255) return BL_ERR;
                off += u;
                uuid[i] = (uint8_t)v;
            }
            break;
        case 2:
            if (!(u = ser_varlen(p + off, end - off, &v)) || (v & 1)) return BL_ERR;
            off += u;
            *gno = v >> 1;
            have_gno = true;
            break;
        case 3:
            if (!(u = ser_varlen(p + off, end - off, &v)) || v > 32 || v > end - off - u) return BL_ERR;
            off += u;
            memcpy(tag, p + off, v);
            tag[v] = '\0';
            off += v;
            have_tag = true;
            break;
        case 0: case 4: case 5: case 6: case 7: case 8: case 9: case 10: case 11:
            if (!(u = ser_varlen(p + off, end - off, &v))) return BL_ERR;
            off += u;
            break;
        default:
            off = end; /* unknown trailing fields */
            break;
        }
    }
    return have_gno && have_tag ? BL_OK : BL_ERR;
}

/* ------------------------------------------------------ binary set form */
void bl_gtid_encode_mysql(const bl_gtid_set *s, sbuf *out) {
    bool tagged = false;
    for (size_t i = 0; i < s->nsids; i++) tagged |= s->sids[i].tag[0] != 0;
    uint8_t b[8];
    uint64_t hdr = tagged ? (1ULL << 56) | ((uint64_t)s->nsids << 8) | 1 : (uint64_t)s->nsids;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(hdr >> (8 * i));
    sbuf_add(out, b, 8);
    for (size_t i = 0; i < s->nsids; i++) {
        const struct sid *x = &s->sids[i];
        sbuf_add(out, x->uuid, 16);
        if (tagged) {
            size_t tl = strlen(x->tag);
            put_ser_varlen(out, tl);
            sbuf_add(out, x->tag, tl);
        }
        uint64_t n = x->n;
        for (int k = 0; k < 8; k++) b[k] = (uint8_t)(n >> (8 * k));
        sbuf_add(out, b, 8);
        for (size_t k = 0; k < x->n; k++) {
            uint64_t lo = x->iv[k].lo, hi = x->iv[k].hi + 1;
            for (int j = 0; j < 8; j++) b[j] = (uint8_t)(lo >> (8 * j));
            sbuf_add(out, b, 8);
            for (int j = 0; j < 8; j++) b[j] = (uint8_t)(hi >> (8 * j));
            sbuf_add(out, b, 8);
        }
    }
}

int bl_gtid_decode_mysql(bl_gtid_set *s, const uint8_t *p, size_t n) {
    if (n < 8) return BL_ERR;
    uint64_t hdr = bl_u64(p);
    bool tagged = (hdr >> 56) != 0;
    uint64_t nsids = tagged ? (hdr >> 8) & ((1ULL << 48) - 1) : hdr & ((1ULL << 56) - 1);
    size_t off = 8;
    if (nsids > n / 24) return BL_ERR;
    for (uint64_t i = 0; i < nsids; i++) {
        if (off + 16 > n) return BL_ERR;
        const uint8_t *uuid = p + off;
        off += 16;
        char tag[33] = "";
        if (tagged) {
            uint64_t tl;
            size_t u = ser_varlen(p + off, n - off, &tl);
            if (!u || tl > 32 || tl > n - off - u) return BL_ERR;
            off += u;
            memcpy(tag, p + off, tl);
            tag[tl] = '\0';
            off += tl;
        }
        if (off + 8 > n) return BL_ERR;
        uint64_t niv = bl_u64(p + off);
        off += 8;
        if (niv > (n - off) / 16) return BL_ERR;
        struct sid *x = get_sid(s, uuid, tag);
        for (uint64_t k = 0; k < niv; k++) {
            uint64_t lo = bl_u64(p + off), hi = bl_u64(p + off + 8);
            off += 16;
            if (hi <= lo) return BL_ERR;
            add_interval(x, lo, hi - 1);
        }
    }
    s->flavor = BL_FLAVOR_MYSQL;
    return BL_OK;
}
