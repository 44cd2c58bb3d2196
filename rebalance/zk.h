/* zk: one ZooKeeper session of a node (the C client, libzookeeper_mt).
 *
 * Session setup is asynchronous: zk_open waits for the connected state.
 * Disconnected is not expired: the library reconnects by itself, and the
 * session (with its ephemeral nodes: the node's registration, its lock and
 * election nodes) survives if it comes back within the negotiated timeout.
 * But a client cut off only ever sees "disconnected", never "expired", so
 * zk_usable counts a disconnection that lasted 2/3 of the session timeout
 * as lost: whatever the node does through it (a rebalance's jobs) must stop
 * then, because the server may have expired the session and handed what it
 * held to another node. The binlog reader's leadership is judged the same
 * way but waits for the reconnection, which tells whether the session lived
 * (zlock_state; sync/cluster/leadership.c). Expiry is final for the handle.
 * All calls are thread-safe; watchers run on the client's own thread. */
#ifndef SS_ZK_H
#define SS_ZK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef THREADED
#define THREADED /* the synchronous calls of libzookeeper_mt */
#endif
#include <zookeeper/zookeeper.h>

struct zk;

/* Connect to hosts ("h1:2181,h2:2181"), waiting up to timeout_ms for the
 * session. NULL with err naming the hosts and what to do. */
struct zk *zk_open(const char *hosts, int session_timeout_ms, int timeout_ms, char *err,
                   size_t errlen);
void zk_close(struct zk *z); /* NULL-safe; never from a watcher */
zhandle_t *zk_handle(struct zk *z);
/* connected now, or disconnected for less than 2/3 of the session timeout,
 * and not expired */
bool zk_usable(struct zk *z);
bool zk_expired(struct zk *z);
/* connected now (a session that is neither cut off nor expired) */
bool zk_connected(struct zk *z);
int zk_session_timeout_ms(struct zk *z); /* as negotiated */
/* Create path and its parents as persistent nodes where missing. */
int zk_ensure_path(struct zk *z, const char *path, char *err, size_t errlen);
const char *zk_strerror(int rc);

#endif
