/* http_bind: the listening socket of an [admin] listen address, parsed
 * ("host:port", "[v6]:port", ":port") and bound (http_int.h). */
#include "http_int.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "admission.h"
#include "api.h"
#include "guard.h"
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "login_page.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/node/node.h"
#include "ratelimit.h"
#include "route.h"
#include "sbuf.h"
#include "session.h"
#include "ui_assets.h"

/* "host:port", "[v6]:port", ":port" (all addresses) -> a bound, listening
 * socket; key names the setting in messages */
int http_bind_listen(const char *key, const char *listen_at, int *family, int *port,
                     bool *loopback, char *err, size_t errlen) {
    char hint[200];
    snprintf(hint, sizeof hint, "set %s to host:port (e.g. 127.0.0.1:8089), or to \"\" to turn "
                                "it off", key);
    char host[256] = "";
    const char *colon = strrchr(listen_at, ':');
    if (!colon || !colon[1])
        return errf(err, errlen, "%s = \"%s\" is not host:port: %s", key, listen_at, hint);
    const char *h = listen_at;
    size_t hn = (size_t)(colon - listen_at);
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') h++, hn -= 2;
    if (hn >= sizeof host)
        return errf(err, errlen, "%s = \"%s\": the host is too long", key, listen_at);
    memcpy(host, h, hn);
    host[hn] = '\0';
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return errf(err, errlen, "%s = \"%s\": the port is not a number: %s", key,
                        listen_at, hint);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int g = getaddrinfo(hn ? host : NULL, colon + 1, &hints, &res);
    if (g != 0)
        return errf(err, errlen, "%s = \"%s\": cannot resolve \"%s\": %s; %s", key, listen_at,
                    host, gai_strerror(g), hint);
    int fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 511) != 0) {
            e = errno;
            close(fd);
            fd = -1;
            continue;
        }
        *family = ai->ai_family;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return errf(err, errlen, "%s = \"%s\": cannot listen there: %s%s%s", key, listen_at,
                    strerror(e),
                    e == EADDRINUSE  ? " (another process, perhaps another searchsync run, uses "
                                       "it): pick a free port in " : "",
                    e == EADDRINUSE  ? key
                    : e == EACCES    ? ": ports below 1024 need privileges; pick another port"
                    : e == EADDRNOTAVAIL ? ": that address is not on this machine; use one of its "
                                           "addresses (127.0.0.1 for local access)"
                                     : "");
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    *port = 0;
    *loopback = false;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0) {
        *port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                               : ((struct sockaddr_in *)&sa)->sin_port);
        char num[80];
        if (getnameinfo((struct sockaddr *)&sa, sl, num, sizeof num, NULL, 0, NI_NUMERICHOST) == 0)
            *loopback = guard_is_loopback(num);
    }
    return fd;
}
