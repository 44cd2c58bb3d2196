/* mapping_gen: reference-counted mapping generations (see mapping_gen.h). */
#include "sync/mapping/mapping_gen.h"

#include <stdlib.h>
#include <string.h>

struct mapping_gen *mapping_gen_new(struct mapping *m) {
    struct mapping_gen *g = xcalloc(1, sizeof *g);
    atomic_init(&g->refs, 1);
    if (m) {
        g->m = *m;
        memset(m, 0, sizeof *m);
    }
    return g;
}

struct mapping_gen *mapping_gen_ref(struct mapping_gen *g) {
    if (g) atomic_fetch_add(&g->refs, 1);
    return g;
}

void mapping_gen_unref(struct mapping_gen *g) {
    if (!g || atomic_fetch_sub(&g->refs, 1) != 1) return;
    mapping_free(&g->m);
    sbuf_free(&g->sig);
    free(g);
}

const struct mp_index *mapping_gen_index(const struct mapping_gen *g, const char *alias) {
    for (size_t i = 0; g && i < g->m.nindices; i++)
        if (!strcmp(g->m.indices[i].alias, alias)) return &g->m.indices[i];
    return NULL;
}

void mapping_gen_index_write(const struct mapping_gen *g, const char *alias, sbuf *out) {
    for (size_t i = 0; g && i < g->m.nindices; i++) {
        const struct mp_index *ix = &g->m.indices[i];
        if (strcmp(ix->alias, alias)) continue;
        sbuf_printf(out, "%s\n", ix->unit ? ix->unit : "");
        mapping_write_index(ix, out);
    }
}
