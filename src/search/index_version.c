/* index_version: "<alias>_v<version>" (see index_version.h). */
#include "search/index_version.h"

#include <stdio.h>

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
