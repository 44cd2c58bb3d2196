/* internal: declarations shared by the binlog module's files only. */
#ifndef SS_BINLOG_INTERNAL_H
#define SS_BINLOG_INTERNAL_H
#include "binlog/binlog.h"

/* call sink->begin once per transaction, before its first row */
int bl_sink_begin(bl_decoder *d);
/* a DDL statement was seen: tables must be checked again */
void bl_schema_invalidate(bl_decoder *d, const char *db, const char *sql, size_t len);
/* MariaDB GTID_LIST: add a domain only if the set does not have it yet */
void bl_gtid_seed_mariadb(bl_gtid_set *s, uint32_t domain, uint32_t server, uint64_t seq);

/* xa.c: an XA_PREPARE_LOG_EVENT's body, and the XA COMMIT / XA ROLLBACK
 * statement of a prepared transaction (kind: BL_XA_COMMITTED or
 * BL_XA_ROLLED_BACK), set what the next commit ends (d->commit_xa, d->xid) */
int bl_xa_prepare_event(bl_decoder *d, const uint8_t *b, size_t n);
void bl_xa_statement(bl_decoder *d, const char *q, size_t n, int kind);

#endif
