/* guard: request checks of the admin HTTP server (see guard.h). */
#include "guard.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

bool guard_token_equal(const char *given, size_t glen, const char *want, size_t wlen) {
    /* every byte of want is looked at whatever given holds; the lengths are
     * compared at the end, outside the loop */
    volatile unsigned char acc = 0;
    for (size_t i = 0; i < wlen; i++) {
        unsigned char g = i < glen ? (unsigned char)given[i] : 0;
        acc |= (unsigned char)(g ^ (unsigned char)want[i]);
    }
    return wlen > 0 && acc == 0 && glen == wlen;
}

const char *guard_bearer(const char *h, size_t *len) {
    *len = 0;
    if (!h) return NULL;
    while (*h == ' ' || *h == '\t') h++;
    if (strncasecmp(h, "Bearer", 6) != 0 || (h[6] != ' ' && h[6] != '\t')) return NULL;
    h += 6;
    while (*h == ' ' || *h == '\t') h++;
    size_t n = strlen(h);
    while (n && (h[n - 1] == ' ' || h[n - 1] == '\t')) n--;
    if (!n) return NULL;
    *len = n;
    return h;
}

/* split "name", "name:port", "[v6]", "[v6]:port" into name and port (port
 * empty when absent). false if malformed. */
static bool split_host(const char *s, size_t n, const char **name, size_t *nlen,
                       const char **port, size_t *plen) {
    *port = s + n, *plen = 0;
    if (!n) return false;
    if (s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close) return false;
        *name = s, *nlen = (size_t)(close - s) + 1;
        size_t rest = n - *nlen;
        if (rest == 0) return true;
        if (close[1] != ':' || rest == 1) return false;
        *port = close + 2, *plen = rest - 1;
    } else {
        const char *colon = memchr(s, ':', n);
        *name = s, *nlen = colon ? (size_t)(colon - s) : n;
        if (colon) {
            if (memchr(colon + 1, ':', n - *nlen - 1)) return false; /* bare IPv6 */
            *port = colon + 1, *plen = n - *nlen - 1;
            if (!*plen) return false;
        }
    }
    if (!*nlen) return false;
    for (size_t i = 0; i < *plen; i++)
        if (!isdigit((unsigned char)(*port)[i])) return false;
    for (size_t i = 0; i < *nlen; i++) {
        unsigned char c = (unsigned char)(*name)[i];
        if (c <= ' ' || c == '/' || c == '@' || c == '?' || c == '#' || c == ',' || c >= 0x7f)
            return false;
    }
    return true;
}

static bool host_in_list(const char *list, const char *h, size_t hn) {
    const char *name, *port;
    size_t nlen, plen;
    if (!list || !split_host(h, hn, &name, &nlen, &port, &plen)) return false;
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        const char *e = p;
        size_t en = n;
        while (en && isspace((unsigned char)*e)) e++, en--;
        while (en && isspace((unsigned char)e[en - 1])) en--;
        const char *an, *ap;
        size_t anl, apl;
        if (en && split_host(e, en, &an, &anl, &ap, &apl) && anl == nlen &&
            !strncasecmp(an, name, nlen) && (!apl || (apl == plen && !memcmp(ap, port, plen))))
            return true;
        p += n + (c ? 1 : 0);
    }
    return false;
}

bool guard_host_allowed(const char *allowed_hosts, const char *host) {
    if (!host) return false;
    return host_in_list(allowed_hosts, host, strlen(host));
}

bool guard_origin_allowed(const char *allowed_hosts, const char *origin) {
    if (!origin) return false;
    const char *s = strstr(origin, "://");
    if (!s || s == origin) return false;
    for (const char *p = origin; p < s; p++)
        if (!isalpha((unsigned char)*p)) return false;
    s += 3;
    size_t n = strlen(s);
    if (n && s[n - 1] == '/') n--; /* "http://host/" from some clients */
    if (!n || memchr(s, '/', n)) return false;
    return host_in_list(allowed_hosts, s, n);
}

bool guard_is_json_type(const char *ct) {
    if (!ct) return false;
    while (*ct == ' ') ct++;
    if (strncasecmp(ct, "application/json", 16) != 0) return false;
    ct += 16;
    while (*ct == ' ') ct++;
    return *ct == '\0' || *ct == ';';
}

char *guard_log_escape(const char *s, size_t n, char *out, size_t outlen) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!outlen) return out;
    if (!s) n = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool esc = c < 0x20 || c == 0x7f || c == '\\';
        size_t need = esc ? 4 : 1;
        if (o + need + 4 > outlen) { /* room for "..." and the NUL */
            if (o + 4 <= outlen) memcpy(out + o, "...", 3), o += 3;
            break;
        }
        if (esc) {
            out[o++] = '\\', out[o++] = 'x';
            out[o++] = hex[c >> 4], out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return out;
}

const char *guard_cookie(const char *h, const char *name, size_t *len) {
    *len = 0;
    if (!h || !name) return NULL;
    size_t nl = strlen(name);
    const char *p = h;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ';') p++;
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > nl && !memcmp(p, name, nl) && p[nl] == '=') {
            const char *v = p + nl + 1;
            size_t vn = n - nl - 1;
            while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;
            if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"') v++, vn -= 2;
            *len = vn;
            return v;
        }
        p += n;
    }
    return NULL;
}

bool guard_is_loopback(const char *a) {
    if (!a) return false;
    if (!strncasecmp(a, "::ffff:", 7)) a += 7;
    if (!strcmp(a, "::1")) return true;
    return !strncmp(a, "127.", 4);
}

bool guard_etag_matches(const char *inm, const char *etag) {
    if (!inm || !etag) return false;
    size_t el = strlen(etag);
    for (const char *p = inm; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        if (*p == '*') return true;
        if (p[0] == 'W' && p[1] == '/') p += 2;
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
        if (n == el && !memcmp(p, etag, el)) return true;
        p += n;
        if (end) p = end;
    }
    return false;
}

/* addr[0..n) is one of the comma list (spaces around entries ignored) */
static bool listed(const char *list, const char *addr, size_t n) {
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && t[-1] == ' ') t--;
        if ((size_t)(t - p) == n && !strncasecmp(p, addr, n)) return true;
        p = e;
    }
    return false;
}

const char *guard_client_addr(const char *peer, const char *forwarded_for,
                              const char *trusted_proxies, char *out, size_t outlen) {
    snprintf(out, outlen, "%s", peer ? peer : "?");
    if (!peer || !forwarded_for || !trusted_proxies || !*trusted_proxies ||
        !listed(trusted_proxies, peer, strlen(peer)))
        return out;
    /* from the right: each hop appends the address it got the request from */
    const char *end = forwarded_for + strlen(forwarded_for);
    while (end > forwarded_for) {
        const char *start = end;
        while (start > forwarded_for && start[-1] != ',') start--;
        const char *a = start, *b = end;
        while (a < b && (*a == ' ' || *a == '\t')) a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
        char ip[INET6_ADDRSTRLEN + 1];
        size_t n = (size_t)(b - a);
        unsigned char bin[sizeof(struct in6_addr)];
        if (!n || n >= sizeof ip) break;
        memcpy(ip, a, n);
        ip[n] = '\0';
        if (inet_pton(AF_INET, ip, bin) != 1 && inet_pton(AF_INET6, ip, bin) != 1) break;
        if (!listed(trusted_proxies, ip, n)) {
            snprintf(out, outlen, "%s", ip);
            break;
        }
        end = start > forwarded_for ? start - 1 : start;
    }
    return out;
}
