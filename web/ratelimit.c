/* ratelimit: failed logins per client address (see ratelimit.h). */
#include "ratelimit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

struct entry {
    char addr[64];
    time_t start; /* window start; 0: free */
    unsigned failures;
};

struct ratelimit {
    pthread_mutex_t mu;
    unsigned max;
    int window_s;
    struct entry e[RATELIMIT_ADDRS];
};

struct ratelimit *ratelimit_new(unsigned max_failures, int window_s) {
    struct ratelimit *rl = xcalloc(1, sizeof *rl);
    pthread_mutex_init(&rl->mu, NULL);
    rl->max = max_failures;
    rl->window_s = window_s;
    return rl;
}

void ratelimit_free(struct ratelimit *rl) {
    if (!rl) return;
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}

static struct entry *lookup(struct ratelimit *rl, const char *addr) {
    for (size_t i = 0; i < RATELIMIT_ADDRS; i++)
        if (rl->e[i].start && !strcmp(rl->e[i].addr, addr)) return &rl->e[i];
    return NULL;
}

bool ratelimit_blocked(struct ratelimit *rl, const char *addr, time_t now, int *retry_after) {
    *retry_after = 0;
    pthread_mutex_lock(&rl->mu);
    struct entry *e = lookup(rl, addr);
    bool blocked = false;
    if (e && now - e->start >= rl->window_s) memset(e, 0, sizeof *e);
    else if (e && e->failures >= rl->max) {
        blocked = true;
        *retry_after = (int)(e->start + rl->window_s - now);
        if (*retry_after < 1) *retry_after = 1;
    }
    pthread_mutex_unlock(&rl->mu);
    return blocked;
}

void ratelimit_failure(struct ratelimit *rl, const char *addr, time_t now) {
    pthread_mutex_lock(&rl->mu);
    struct entry *e = lookup(rl, addr);
    if (e && now - e->start >= rl->window_s) memset(e, 0, sizeof *e), e = NULL;
    if (!e) {
        e = &rl->e[0];
        for (size_t i = 0; i < RATELIMIT_ADDRS; i++) {
            if (!rl->e[i].start) {
                e = &rl->e[i];
                break;
            }
            if (rl->e[i].start < e->start) e = &rl->e[i];
        }
        memset(e, 0, sizeof *e);
        snprintf(e->addr, sizeof e->addr, "%s", addr);
        e->start = now;
    }
    e->failures++;
    pthread_mutex_unlock(&rl->mu);
}
