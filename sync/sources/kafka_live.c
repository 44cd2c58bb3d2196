/* kafka_live: the Kafka consumer's live state (see kafka_live.h). */
#include "sync/sources/kafka_live.h"

#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

static char **names_copy(char *const *v, size_t n) {
    char **c = xcalloc(n ? n : 1, sizeof *c);
    for (size_t i = 0; i < n; i++) c[i] = xstrdup(v[i]);
    return c;
}

void kafka_live_free(struct kafka_live *l) {
    if (!l) return;
    for (size_t i = 0; i < l->nsub; i++) free(l->subscribed[i]);
    for (size_t i = 0; i < l->nmissing; i++) free(l->missing[i]);
    for (size_t i = 0; i < l->nunassigned; i++) free(l->unassigned[i]);
    for (size_t i = 0; i < l->nparts; i++) free(l->parts[i].topic);
    free(l->subscribed);
    free(l->missing);
    free(l->unassigned);
    free(l->parts);
    free(l->regex);
    memset(l, 0, sizeof *l);
}

void kafka_live_copy(struct kafka_live *to, const struct kafka_live *from) {
    memset(to, 0, sizeof *to);
    to->subscribed = names_copy(from->subscribed, from->nsub);
    to->nsub = from->nsub;
    to->missing = names_copy(from->missing, from->nmissing);
    to->nmissing = from->nmissing;
    to->unassigned = names_copy(from->unassigned, from->nunassigned);
    to->nunassigned = from->nunassigned;
    to->regex = from->regex ? xstrdup(from->regex) : NULL;
    to->parts = xcalloc(from->nparts ? from->nparts : 1, sizeof *to->parts);
    for (size_t i = 0; i < from->nparts; i++) {
        to->parts[i] = from->parts[i];
        to->parts[i].topic = xstrdup(from->parts[i].topic);
    }
    to->nparts = from->nparts;
    to->at_ms = from->at_ms;
}

bool kafka_live_has(char *const *v, size_t n, const char *topic) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], topic)) return true;
    return false;
}
