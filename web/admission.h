/* admission: which connections the admin HTTP server keeps when it is
 * crowded, and how long a request may take in all (docs/http-api.md,
 * "Limits"). libmicrohttpd's own limits refuse the newest connection and
 * time out per idle period, so a few hundred idle sockets or a client
 * dripping one header byte every few seconds kept the API refusing
 * everyone. This owns the policy instead:
 *
 *   slots      at most max_total connections, max_per_addr from one client
 *              address. When a new connection goes over either, the oldest
 *              connection that has not authenticated is cut (one still
 *              waiting for its headers before one in a request, only from
 *              the same address for the per-address limit); when every
 *              other one has authenticated, the new one is cut.
 *   deadlines  a connection gets header_s seconds in all to deliver a
 *              request's headers (authenticated keep-alive connections
 *              idle_s), and a request request_s seconds from its headers
 *              to its response sent, however it trickles.
 *
 * "Cut" is shutdown(2) of the socket: libmicrohttpd, which owns the fd,
 * then sees the end of the stream and closes it (adm_close is called from
 * its close notification, before it closes the fd, so a cut never reaches a
 * reused descriptor). A reaper thread checks the deadlines every 250 ms.
 * Thread-safe. */
#ifndef SS_WEB_ADMISSION_H
#define SS_WEB_ADMISSION_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct admission;
struct adm_slot;

struct adm_limits {
    unsigned max_total, max_per_addr;
    int header_s, idle_s, request_s;
};

struct admission *adm_new(const struct adm_limits *lim);
/* Stops the reaper; the slots must all be closed. NULL-safe. */
void adm_free(struct admission *a);
/* A connection accepted from addr (numeric): may cut others, or this one
 * (then it is still returned, already cut). */
struct adm_slot *adm_open(struct admission *a, int fd, const char *addr);
void adm_close(struct admission *a, struct adm_slot *s);
void adm_request_start(struct admission *a, struct adm_slot *s); /* headers complete */
void adm_request_done(struct admission *a, struct adm_slot *s);  /* response sent */
void adm_authenticated(struct admission *a, struct adm_slot *s);
/* counters for the log and tests */
unsigned adm_open_count(struct admission *a);
unsigned long adm_cut_count(struct admission *a);
/* false with why when the reaper has not gone round for bound_ms, or a
 * connection cut at its deadline is still open bound_ms later (a thread
 * wedged in its handler). NULL-safe. */
bool adm_healthy(struct admission *a, int64_t bound_ms, char *why, size_t whylen);

#endif
