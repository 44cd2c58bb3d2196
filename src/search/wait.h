/* wait.h: waiting for the search engine at start-up (wait.c). */
#ifndef SS_SEARCH_WAIT_H
#define SS_SEARCH_WAIT_H
#include <signal.h>
#include <stddef.h>

struct search_client;
struct search_conn;

/* GET / until the engine answers: no answer (engine down or starting), 5xx
 * and 429 are waited out, retrying with backoff (said at WARN when the wait
 * starts, at INFO when it answers); then search_detect and ready(ud), which
 * may fill err. When ready() fails and the engine no longer answers, it is
 * waited for again. 0 ready; -1 an error in err, or *stop was set. */
int search_wait_ready(struct search_client *c, struct search_conn *k, int (*ready)(void *ud),
                      void *ud, const volatile sig_atomic_t *stop, char *err, size_t errlen);

#endif
