/* payload: compressed events.
 *
 * MySQL 8 TRANSACTION_PAYLOAD: a header of (type, length, value) fields —
 * 1 payload size, 2 compression (0 zstd, 255 none), 3 uncompressed size,
 * 0 end — then the inner events of one transaction, without checksums and
 * with log_pos 0; they are decoded in place and do not move the position
 * (the payload event as a whole does).
 * MariaDB compressed QUERY / rows events: one header byte 0x80|n, n bytes of
 * big-endian uncompressed length, then a zlib stream. */
#include <stdio.h>
#include <zlib.h>
#include <zstd.h>

#include "binlog/binlog.h"
#include "binlog/internal.h"

#define BL_MAX_PAYLOAD (1024ULL * 1024 * 1024)

int bl_mariadb_uncompress(sbuf *out, const uint8_t *p, size_t n, size_t *consumed) {
    if (n < 1 || !(p[0] & 0x80)) return BL_ERR;
    unsigned lenlen = p[0] & 7;
    if (lenlen < 1 || lenlen > 4 || n < 1 + lenlen) return BL_ERR;
    uint64_t len = 0;
    for (unsigned i = 0; i < lenlen; i++) len = len << 8 | p[1 + i];
    if (len > BL_MAX_PAYLOAD) return BL_ERR;
    sbuf_reset(out);
    sbuf_grow(out, (size_t)len + 1);
    uLongf dl = (uLongf)len;
    int rc = uncompress((Bytef *)out->data, &dl, p + 1 + lenlen, (uLong)(n - 1 - lenlen));
    if (rc != Z_OK || dl != len) return BL_ERR;
    out->len = (size_t)len;
    out->data[out->len] = '\0';
    *consumed = n;
    return BL_OK;
}

int bl_transaction_payload(bl_decoder *d, const uint8_t *b, size_t n) {
    size_t off = 0;
    uint64_t comp = 0, usize = 0, psize = 0;
    bool have_psize = false;
    for (;;) {
        uint64_t type, len, v = 0;
        size_t u = bl_lenenc(b + off, n - off, &type);
        if (!u) return bl_error(d, "truncated payload header");
        off += u;
        if (type == 0) break;
        u = bl_lenenc(b + off, n - off, &len);
        if (!u || len > n - off - u) return bl_error(d, "truncated payload header field %llu",
                                                     (unsigned long long)type);
        off += u;
        if (len) bl_lenenc(b + off, (size_t)len, &v);
        off += len;
        if (type == 1) psize = v, have_psize = true;
        else if (type == 2) comp = v;
        else if (type == 3) usize = v;
    }
    const uint8_t *data = b + off;
    size_t dlen = n - off;
    if (have_psize && psize < dlen) dlen = (size_t)psize;
    const uint8_t *ev;
    size_t evlen;
    if (comp == 255) {
        ev = data;
        evlen = dlen;
    } else if (comp == 0) {
        unsigned long long fs = ZSTD_getFrameContentSize(data, dlen);
        if (fs == ZSTD_CONTENTSIZE_ERROR) return bl_error(d, "not a zstd frame");
        if (fs == ZSTD_CONTENTSIZE_UNKNOWN) fs = usize;
        if (fs > BL_MAX_PAYLOAD) return bl_error(d, "payload of %llu bytes is too large", fs);
        sbuf_reset(&d->payload);
        sbuf_grow(&d->payload, (size_t)fs + 1);
        size_t r = ZSTD_decompress(d->payload.data, (size_t)fs + 1, data, dlen);
        if (ZSTD_isError(r)) return bl_error(d, "zstd: %s", ZSTD_getErrorName(r));
        d->payload.len = r;
        ev = (const uint8_t *)d->payload.data;
        evlen = r;
    } else {
        return bl_error(d, "unknown payload compression %llu", (unsigned long long)comp);
    }
    /* the inner events */
    uint64_t outer_start = d->ev_start;
    d->in_payload = true;
    size_t eo = 0;
    int rc = BL_OK;
    while (eo < evlen) {
        if (evlen - eo < BL_HEADER_LEN) {
            rc = bl_error(d, "truncated inner event");
            break;
        }
        uint32_t sz = bl_u32(ev + eo + 9);
        if (sz < BL_HEADER_LEN || sz > evlen - eo) {
            rc = bl_error(d, "inner event size %u out of bounds", sz);
            break;
        }
        rc = bl_decode(d, ev + eo, sz);
        d->ev_start = outer_start;
        if (rc != BL_OK) break;
        eo += sz;
    }
    d->in_payload = false;
    d->cur_type = BL_TRANSACTION_PAYLOAD;
    return rc;
}
