/* debezium_value: the DECIMAL and binary values of Debezium's MySQL/MariaDB
 * connectors, whose JSON depends on the connector's settings:
 *
 *   decimal.handling.mode  precise  the base64 of the unscaled two's
 *                                   complement bytes, big endian ("/31E8hUA")
 *                          string   the number as text ("-0.561484")
 *                          double   a JSON number, which a double holds
 *                                   exactly up to 15 significant digits
 *   binary.handling.mode   bytes, base64, base64-url-safe   base64 text
 *                          hex      hex digits
 *
 * A message with schemas says which (a Decimal schema, "string", "double";
 * "bytes" or "string"); one without does not, and then the [kafka]
 * debezium_* settings do (mq_opts.dbz_*). When neither does, a value is
 * decoded only when it can be one thing: a DECIMAL whose base64 is all
 * digits ("9260" is -561484's unscaled bytes F7 6E B4, and also the number
 * 9260) or binary whose base64 is also hex is unsure (1), never a guess.
 * Returns 0 with the value's binlog bytes appended, -1 when it is not a
 * value of the column at all, 1 when it cannot be decoded with certainty;
 * err says which and, where a setting decides it, which setting. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mq/mq.h"

#define DEC_SETTING "[kafka] debezium_decimal_handling_mode"
#define BIN_SETTING "[kafka] debezium_binary_handling_mode"

/* errf's "cannot be decoded with certainty": 1 */
static int unsure(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int unsure(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 1;
}

/* big-endian two's complement bytes → decimal text with scale digits */
int mq_unscaled_text(const uint8_t *p, size_t n, int scale, char *out, size_t outsz) {
    if (n == 0 || n > 40 || scale < 0 || scale > 100) return -1;
    uint8_t b[40];
    memcpy(b, p, n);
    bool neg = b[0] & 0x80;
    if (neg) { /* magnitude = ~x + 1 */
        for (size_t i = 0; i < n; i++) b[i] = (uint8_t)~b[i];
        for (size_t i = n; i-- > 0;)
            if (++b[i] != 0) break;
    }
    char dig[120];
    int nd = 0;
    for (;;) {
        bool zero = true;
        unsigned rem = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned cur = rem << 8 | b[i];
            b[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
            if (b[i]) zero = false;
        }
        dig[nd++] = (char)('0' + rem);
        if (zero || nd == 110) break;
    }
    while (nd <= scale) dig[nd++] = '0';
    size_t o = 0;
    if (neg) out[o++] = '-';
    for (int i = nd - 1; i >= 0; i--) {
        if (o + 3 >= outsz) return -1;
        out[o++] = dig[i];
        if (i == scale && scale > 0) out[o++] = '.';
    }
    out[o] = '\0';
    return (int)o;
}

/* base64 as the JSON converter writes bytes (the standard alphabet) or as
 * binary.handling.mode=base64-url-safe does (url: - and _ for + and /),
 * padded to a multiple of 4 characters */
static bool base64_padded(const char *s, size_t n, bool url) {
    if (n == 0 || n % 4) return false;
    size_t pad = 0;
    while (pad < 2 && s[n - 1 - pad] == '=') pad++;
    for (size_t i = 0; i < n - pad; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(url ? "+/-_" : "+/", s[i])) return false;
    return true;
}

/* -?digits[.digits]: what decimal.handling.mode=string writes */
static bool decimal_text(const char *s, size_t n) {
    size_t i = s[0] == '-' ? 1 : 0, d = 0;
    while (i < n && isdigit((unsigned char)s[i])) i++, d++;
    if (!d) return false;
    if (i < n && s[i] == '.') {
        size_t f = 0;
        for (i++; i < n && isdigit((unsigned char)s[i]); i++) f++;
        if (!f) return false;
    }
    return i == n;
}

static int precise(sbuf *out, const bl_column *c, const char *s, int scale, char *err,
                   size_t errlen) {
    sbuf b = SBUF_INIT;
    char t[160];
    int r;
    if (mq_base64_decode(&b, s, strlen(s)) < 0 ||
        mq_unscaled_text((const uint8_t *)b.data, b.len, scale, t, sizeof t) < 0)
        r = errf(err, errlen, "\"%.60s\" is not the base64 of a DECIMAL's unscaled bytes "
                 "(decimal.handling.mode=precise)", s);
    else
        r = mq_enc_text(out, c, t, strlen(t), 0, err, errlen);
    sbuf_free(&b);
    return r;
}

/* decimal.handling.mode=double: exact when the column has at most 15
 * digits (a double keeps 15 significant digits through a round trip, so
 * the double printed with the column's scale is the DECIMAL it came from);
 * a wider column's value may have been rounded by the connector */
static int from_double(sbuf *out, const bl_column *c, const char *s, char *err, size_t errlen) {
    if (c->type != BT_NEWDECIMAL) return mq_enc_text(out, c, s, strlen(s), 0, err, errlen);
    if (c->precision > 15)
        return unsure(err, errlen, "%.40s came as a double (decimal.handling.mode=double), "
                      "which holds 15 significant digits: DECIMAL(%u,%u)'s value may have been "
                      "rounded by the connector; set its decimal.handling.mode to precise or "
                      "string", s, c->precision, c->scale);
    char *end;
    double d = strtod(s, &end);
    if (*end || !isfinite(d)) return errf(err, errlen, "%.40s is not a number", s);
    char t[400];
    snprintf(t, sizeof t, "%.*f", (int)c->scale, d);
    return mq_enc_text(out, c, t, strlen(t), 0, err, errlen);
}

int mq_dbz_decimal(sbuf *out, const bl_column *c, const cJSON *v, int mode, int scale,
                   bool by_schema, char *err, size_t errlen) {
    const char *how = by_schema ? "the message's schema"
                                : "the connector's decimal.handling.mode (" DEC_SETTING ")";
    if (scale < 0) scale = c->type == BT_NEWDECIMAL ? c->scale : 0;
    if (cJSON_IsRaw(v)) { /* a JSON number: double */
        if (mode && mode != MQ_DBZ_DEC_DOUBLE)
            return errf(err, errlen, "%.40s is a number, but %s says DECIMALs come as %s",
                        v->valuestring, how,
                        mode == MQ_DBZ_DEC_PRECISE ? "base64 (precise)" : "text (string)");
        return from_double(out, c, v->valuestring, err, errlen);
    }
    if (!cJSON_IsString(v))
        return errf(err, errlen, "a DECIMAL that is neither a string nor a number");
    const char *s = v->valuestring;
    size_t n = strlen(s);
    /* (a DECIMAL's bytes are the converter's: the standard alphabet, so
     * "-2929356" is text only) */
    bool b64 = mode != MQ_DBZ_DEC_STRING && base64_padded(s, n, false);
    bool txt = mode != MQ_DBZ_DEC_PRECISE && decimal_text(s, n);
    if (mode == MQ_DBZ_DEC_DOUBLE)
        return errf(err, errlen, "\"%.40s\" is a string, but %s says DECIMALs come as numbers "
                    "(double)", s, how);
    if (b64 && txt)
        return unsure(err, errlen, "\"%.40s\" is a decimal number (decimal.handling.mode=string) "
                      "and also the base64 of one (precise), and the message has no schema "
                      "saying which: set " DEC_SETTING " to the connector's "
                      "decimal.handling.mode, or turn the JSON converter's schemas on", s);
    if (b64) return precise(out, c, s, scale, err, errlen);
    if (txt) return mq_enc_text(out, c, s, n, 0, err, errlen);
    if (mode == MQ_DBZ_DEC_PRECISE)
        return errf(err, errlen, "\"%.40s\" is not the base64 of a DECIMAL's unscaled bytes, "
                    "which %s says it is (precise)", s, how);
    if (mode == MQ_DBZ_DEC_STRING)
        return errf(err, errlen, "\"%.40s\" is not a decimal number, which %s says it is "
                    "(string)", s, how);
    return errf(err, errlen, "\"%.40s\" is neither a decimal number nor the base64 of one", s);
}

static int hex_decode(sbuf *out, const char *s, size_t n) {
    if (n % 2) return -1;
    for (size_t i = 0; i < n; i += 2) {
        if (!isxdigit((unsigned char)s[i]) || !isxdigit((unsigned char)s[i + 1])) return -1;
        char h[3] = {s[i], s[i + 1], 0};
        sbuf_addc(out, (char)strtoul(h, NULL, 16));
    }
    return 0;
}

int mq_dbz_binary(sbuf *out, const bl_column *c, const char *s, int mode, char *err,
                  size_t errlen) {
    size_t n = strlen(s);
    sbuf a = SBUF_INIT, h = SBUF_INIT;
    int r;
    /* stated: base64 of any shape; not stated: as the JSON converter pads it */
    bool b64 = mode != MQ_DBZ_BIN_HEX && (mode || base64_padded(s, n, true)) &&
               mq_base64_decode(&a, s, n) == 0;
    bool hex = mode != MQ_DBZ_BIN_BASE64 && hex_decode(&h, s, n) == 0;
    if (b64 && hex && (a.len != h.len || memcmp(a.data ? a.data : "", h.data ? h.data : "", a.len)))
        r = unsure(err, errlen, "\"%.40s\" is hex digits (binary.handling.mode=hex) and also "
                   "base64 (bytes, base64, base64-url-safe), and nothing says which: set "
                   BIN_SETTING " to the connector's binary.handling.mode", s);
    else if (b64)
        r = mq_enc_bytes(out, c, (const uint8_t *)(a.data ? a.data : ""), a.len, err, errlen);
    else if (hex)
        r = mq_enc_bytes(out, c, (const uint8_t *)(h.data ? h.data : ""), h.len, err, errlen);
    else
        r = errf(err, errlen, "\"%.40s\" is not %s", s,
                 mode == MQ_DBZ_BIN_HEX ? "hex digits (binary.handling.mode=hex)"
                 : mode ? "base64 (binary.handling.mode=bytes, base64 or base64-url-safe)"
                        : "base64 or hex digits");
    sbuf_free(&a);
    sbuf_free(&h);
    return r;
}
