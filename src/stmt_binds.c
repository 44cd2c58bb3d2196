/* stmt_binds: the result buffers of a prepared statement (see stmt_binds.h). */
#include "stmt_binds.h"

#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

void stmt_binds_init(struct stmt_binds *b, unsigned n) {
    b->n = n;
    b->bind = xcalloc(n ? n : 1, sizeof *b->bind);
    b->lens = xcalloc(n ? n : 1, sizeof *b->lens);
    b->nulls = xcalloc(n ? n : 1, sizeof *b->nulls);
    b->errs = xcalloc(n ? n : 1, sizeof *b->errs);
    b->bufs = xcalloc(n ? n : 1, sizeof *b->bufs);
}

void stmt_binds_set(struct stmt_binds *b, unsigned i, enum enum_field_types type, size_t size,
                    bool is_unsigned) {
    b->bufs[i] = xcalloc(1, size);
    b->bind[i].buffer_type = type;
    b->bind[i].buffer = b->bufs[i];
    b->bind[i].buffer_length = (unsigned long)size;
    b->bind[i].length = &b->lens[i];
    b->bind[i].is_null = &b->nulls[i];
    b->bind[i].error = &b->errs[i];
    b->bind[i].is_unsigned = is_unsigned;
}

void stmt_binds_free(struct stmt_binds *b) {
    if (!b) return;
    for (unsigned i = 0; b->bufs && i < b->n; i++) free(b->bufs[i]);
    free(b->bufs);
    free(b->bind);
    free(b->lens);
    free(b->nulls);
    free(b->errs);
    memset(b, 0, sizeof *b);
}
