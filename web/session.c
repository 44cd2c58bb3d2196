/* session: login sessions of the admin UI (see session.h). */
#include "session.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "guard.h"
#include "sbuf.h"

struct sess {
    char id[SESSION_HEX + 1], csrf[SESSION_HEX + 1];
    time_t expires; /* 0: free */
};

struct sessions {
    pthread_mutex_t mu;
    int ttl_s;
    struct sess s[SESSION_MAX];
};

struct sessions *sessions_new(int ttl_s) {
    struct sessions *ss = xcalloc(1, sizeof *ss);
    pthread_mutex_init(&ss->mu, NULL);
    ss->ttl_s = ttl_s;
    return ss;
}

void sessions_free(struct sessions *ss) {
    if (!ss) return;
    pthread_mutex_destroy(&ss->mu);
    free(ss);
}

static int random_hex(char *out) {
    unsigned char b[SESSION_HEX / 2];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof b; i++) out[2 * i] = hex[b[i] >> 4], out[2 * i + 1] = hex[b[i] & 15];
    out[SESSION_HEX] = '\0';
    return 0;
}

int sessions_create(struct sessions *ss, time_t now, char *id, char *csrf, time_t *expires) {
    if (random_hex(id) < 0 || random_hex(csrf) < 0) return -1;
    pthread_mutex_lock(&ss->mu);
    struct sess *slot = &ss->s[0];
    for (size_t i = 0; i < SESSION_MAX; i++) {
        struct sess *x = &ss->s[i];
        if (x->expires <= now) { /* free or expired */
            slot = x;
            break;
        }
        if (x->expires < slot->expires) slot = x;
    }
    memcpy(slot->id, id, SESSION_HEX + 1);
    memcpy(slot->csrf, csrf, SESSION_HEX + 1);
    slot->expires = now + ss->ttl_s;
    *expires = slot->expires;
    pthread_mutex_unlock(&ss->mu);
    return 0;
}

/* the index of id's session (live or not), or -1; every slot is compared */
static int find(struct sessions *ss, const char *id, size_t n) {
    int at = -1;
    for (size_t i = 0; i < SESSION_MAX; i++)
        if (ss->s[i].expires &&
            guard_token_equal(id, n, ss->s[i].id, SESSION_HEX))
            at = (int)i;
    return at;
}

bool sessions_check(struct sessions *ss, const char *id, size_t n, time_t now, char *csrf,
                    time_t *expires) {
    if (!id || n != SESSION_HEX) return false;
    pthread_mutex_lock(&ss->mu);
    int i = find(ss, id, n);
    bool ok = i >= 0 && ss->s[i].expires > now;
    if (ok) {
        if (csrf) memcpy(csrf, ss->s[i].csrf, SESSION_HEX + 1);
        if (expires) *expires = ss->s[i].expires;
    } else if (i >= 0) {
        memset(&ss->s[i], 0, sizeof ss->s[i]); /* expired: forget it */
    }
    pthread_mutex_unlock(&ss->mu);
    return ok;
}

bool sessions_delete(struct sessions *ss, const char *id, size_t n) {
    if (!id || n != SESSION_HEX) return false;
    pthread_mutex_lock(&ss->mu);
    int i = find(ss, id, n);
    if (i >= 0) memset(&ss->s[i], 0, sizeof ss->s[i]);
    pthread_mutex_unlock(&ss->mu);
    return i >= 0;
}
