/* zlock: the ZooKeeper lock recipe — one holder at a time per directory,
 * used for the binlog reader's leadership of a source
 * (/searchsync/<cluster>/leaders/<source>) and for anything that must run
 * once per cluster (/searchsync/<cluster>/locks/<name>).
 *
 * A candidate creates an ephemeral sequential child whose name carries its
 * node id; the lowest sequence holds the lock; every other candidate
 * watches only the child just below its own (no herd when the holder goes).
 * A create that fails with a connection loss may still have succeeded: the
 * children are searched for the node id before trying again.
 *
 * The fencing token of a holder is its child's czxid (the zxid of the
 * create): it grows with every new holder, so a stale holder's writes —
 * made conditional on the token where they are recorded — lose. */
#ifndef SS_ZLOCK_H
#define SS_ZLOCK_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "zk.h"

struct zlock;

/* Enter the queue of directory dir (created if missing) as node_id. NULL
 * with err. */
struct zlock *zlock_enter(struct zk *z, const char *dir, const char *node_id, char *err,
                          size_t errlen);
/* Wait until this candidate holds the lock: 1 it does (*fence = its token,
 * *holder_before = the node id that held it when the wait began, "" if
 * none), 0 *stop was set, -1 the session is lost (err). Says once who holds
 * it while waiting. */
int zlock_wait(struct zlock *l, volatile sig_atomic_t *stop, int64_t *fence, char *err,
               size_t errlen);
/* Still the holder? ZLOCK_HELD: its child exists, asked now. ZLOCK_CUT_OFF:
 * ZooKeeper cannot be asked (disconnected, or no answer), and the session
 * is not known to have expired: the child may well still be there, or be
 * gone with a session the server expired meanwhile — only a reconnection
 * tells. ZLOCK_LOST: the session expired, or the child is gone. */
enum zlock_state { ZLOCK_HELD, ZLOCK_CUT_OFF, ZLOCK_LOST };
enum zlock_state zlock_state(struct zlock *l);
/* Leave the queue (deletes its child) and free. NULL-safe. */
void zlock_leave(struct zlock *l);

#endif
