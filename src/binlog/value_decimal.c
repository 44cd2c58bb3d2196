/* value_decimal: a DECIMAL's packed binary form (nine digits per four
 * bytes, sign in the top bit, negatives bit-inverted) → its exact text with
 * exactly `scale` decimals, for the JSON form (value.c, as a string), the
 * text form (value_text.c) and JSON documents' opaque DECIMALs
 * (json_binary.c). Never through a double. */
#include "binlog/value_int.h"

static const uint8_t dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

/* n decimal digits of v, zero padded */
static inline char *put_digits(char *o, uint32_t v, int n) {
    for (int i = n - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return o + n;
}

int bl_decimal_text(const uint8_t *src, size_t avail, int precision, int scale, char *out, size_t outsz) {
    if (precision < 1 || precision > 65 || scale < 0 || scale > 30 || scale > precision) return -1;
    int size = bl_decimal_size(precision, scale);
    if (size < 0 || (size_t)size > avail || size > 40 || outsz < 70) return -1;
    uint8_t b[40];
    memcpy(b, src, (size_t)size);
    bool neg = !(b[0] & 0x80);
    b[0] ^= 0x80;
    if (neg)
        for (int i = 0; i < size; i++) b[i] ^= 0xff;
    int intg = precision - scale, intg0 = intg / 9, intg0x = intg % 9;
    int frac0 = scale / 9, frac0x = scale % 9;
    char digits[80], fr[40];
    char *dp = digits, *fp = fr;
    int off = 0;
    if (intg0x) {
        int nb = dig2bytes[intg0x];
        dp = put_digits(dp, be_n(b + off, nb) % 1000000000u, intg0x);
        off += nb;
    }
    for (int i = 0; i < intg0; i++, off += 4) dp = put_digits(dp, be_n(b + off, 4) % 1000000000u, 9);
    for (int i = 0; i < frac0; i++, off += 4) fp = put_digits(fp, be_n(b + off, 4) % 1000000000u, 9);
    if (frac0x) fp = put_digits(fp, be_n(b + off, dig2bytes[frac0x]) % 1000000000u, frac0x);
    const char *ip = digits;
    while (ip < dp && *ip == '0') ip++;
    bool nonzero = ip < dp;
    for (const char *q = fr; q < fp; q++)
        if (*q != '0') nonzero = true;
    char *o = out;
    if (neg && nonzero) *o++ = '-';
    if (ip < dp) {
        memcpy(o, ip, (size_t)(dp - ip));
        o += dp - ip;
    } else {
        *o++ = '0';
    }
    if (scale > 0) {
        *o++ = '.';
        memcpy(o, fr, (size_t)scale);
        o += scale;
    }
    *o = '\0';
    return (int)(o - out);
}
