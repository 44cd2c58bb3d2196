/* xa_prepared: two-phase XA transactions between their XA PREPARE and their
 * XA COMMIT or XA ROLLBACK, as the binlog reader follows them.
 *
 * A prepared transaction's rows are in the binlog (src/binlog/xa.c) but not
 * visible to other sessions until its XA COMMIT, itself a later binlog
 * transaction with no rows. Its documents are built at the PREPARE as any
 * transaction's are (read in a snapshot that does not hold its rows: the
 * content from before it, which stays right if it is rolled back), and the
 * documents that build reached are kept here by xid (index alias, document
 * table, key) to be rebuilt at the XA COMMIT, in a snapshot after it, with
 * its version. What cannot be read back is held, not delivered: documents
 * made from row images and change snapshots of delay-effect tables go at the
 * XA COMMIT (and are dropped at an XA ROLLBACK).
 *
 * While a prepared transaction is open, the checkpoint stays at the end of
 * the transaction before its PREPARE (xa_hold; pipeline_end uses it): a
 * restart reads the PREPARE again and keeps its documents again, so its
 * XA COMMIT still finds them. A transaction left prepared longer than
 * [source] xa_hold_max_s stops holding the checkpoint (xa_expire warns,
 * naming it); while the daemon runs its commit is still followed. */
#ifndef SS_XA_PREPARED_H
#define SS_XA_PREPARED_H
#include <stdbool.h>
#include <stddef.h>

#include "binlog/binlog.h"
#include "sync/pipeline/changeset.h"
#include "sync/mapping/mapping.h"
#include "sbuf.h"

struct xa_doc {
    char *alias, *table, *key; /* table: the document table's db.name */
    size_t table_no;           /* its position in the index config then */
};

struct xa_rowdoc {
    char *alias, *id, *body; /* body NULL: a delete */
    size_t len;
    bool requery; /* rebuilt from MySQL (cs_rowdoc.requery) */
};

struct xa_txn {
    char *xid;
    char *hold;           /* checkpoint position before its PREPARE */
    bl_pos prepared;      /* the end of its PREPARE, for messages */
    long long since_ms;   /* monotonic, when it was prepared */
    bool expired;         /* no longer holds the checkpoint */
    bool copies_may_move;
    struct xa_doc *docs;
    size_t ndocs, capdocs;
    struct xa_rowdoc *rdocs;
    size_t nrdocs, caprdocs;
    sbuf snaps;           /* change snapshots' VALUES rows (changeset.snaps) */
    unsigned long long nsnaps;
};

struct xa_set {
    struct xa_txn *t; /* in the order they were prepared */
    size_t n, cap;
};

/* The open one with this xid, or NULL. */
struct xa_txn *xa_find(struct xa_set *s, const char *xid);
/* At a PREPARE, before its build: the transaction kept under xid (a new one,
 * or the one already kept), hold its checkpoint position (ignored when it
 * is kept already; NULL: it holds nothing back, no mapped row was in it);
 * its row-image documents and change snapshots move out of cs into it. */
struct xa_txn *xa_prepare(struct xa_set *s, const char *xid, const char *hold,
                          const bl_pos *prepared, long long now_ms, struct changeset *cs,
                          const struct mapping *m);
/* After the PREPARE's build: the documents it reached (cs's documents, and
 * the documents of its element edits, rebuilt whole at the commit). */
void xa_note_docs(struct xa_txn *t, const struct changeset *cs, const struct mapping *m);
/* At the XA COMMIT: its documents, row-image documents and change snapshots
 * into cs, by the mapping in force now. Returns how many documents had no
 * index config any more (dropped). The transaction stays kept until
 * xa_forget (a failed build reads the commit again). */
size_t xa_restore(const struct xa_txn *t, struct changeset *cs, const struct mapping *m);
/* Forget it (its commit was built, or it was rolled back). */
void xa_forget(struct xa_set *s, struct xa_txn *t);
/* The checkpoint position to hold (the oldest unexpired one's), or NULL. */
const char *xa_hold(const struct xa_set *s);
/* Stop holding for those prepared max_ms or longer before now_ms (max_ms 0:
 * never); each is said once (log_warn). true when any expired now. */
bool xa_expire(struct xa_set *s, long long now_ms, long long max_ms);
void xa_set_free(struct xa_set *s);

#endif
