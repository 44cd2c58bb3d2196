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

#endif
