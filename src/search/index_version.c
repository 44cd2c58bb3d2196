/* index_version: "<alias>_v<version>" (see index_version.h). */
#include "search/index_version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

static int format(char *buf, size_t size, const char *alias, unsigned version) {
    return snprintf(buf, size, "%s_v%u", alias, version);
}

const char *index_version_name(char *buf, size_t size, const char *alias, unsigned version) {
    format(buf, size, alias, version);
    return buf;
}

char *index_version_dup(const char *alias, unsigned version) {
    size_t n = (size_t)format(NULL, 0, alias, version) + 1;
    char *s = xmalloc(n);
    format(s, n, alias, version);
    return s;
}

unsigned index_version_of(const char *alias, const char *name) {
    size_t n = strlen(alias);
    if (strncmp(name, alias, n) || name[n] != '_' || name[n + 1] != 'v') return 0;
    const char *d = name + n + 2;
    if (*d < '1' || *d > '9' || strspn(d, "0123456789") != strlen(d) || strlen(d) > 9) return 0;
    return (unsigned)strtoul(d, NULL, 10);
}
