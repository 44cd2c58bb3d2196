/* gtid_version: the GTID side of [source] versions = gtid (see the top of
 * gtid_version.c). */
#ifndef SS_GTID_VERSION_H
#define SS_GTID_VERSION_H
#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "sbuf.h"

/* The checkpoint's resume token in gtid mode: "file:pos;gtid=SET". */
#define GTID_TOKEN_MARK ";gtid="

/* The server's executed GTID set at binlog position file:pos (MariaDB:
 * BINLOG_GTID_POS) or now (file NULL; MariaDB @@gtid_binlog_pos). MySQL
 * reports no set at a position: it is always the set now
 * (@@global.gtid_executed), so read it before the snapshot it stands for
 * (an under-estimate is safe: later changes still outrank it). 0, or -1
 * with err. */
int gtid_server_set(MYSQL *src, const char *file, unsigned long long pos, sbuf *out, char *err,
                    size_t errlen);
/* Where a reader starting at the binlog's end file:pos (just read from the
 * server) starts in gtid mode: the executed set there, in out. MariaDB:
 * BINLOG_GTID_POS. MySQL: gtid_executed read until the binlog's end is the
 * same before and after it, file:pos moved to that end (at most 20 tries).
 * 0, or -1 with err. */
int gtid_server_start(MYSQL *src, char *file, size_t filelen, unsigned long long *pos,
                      sbuf *out, char *err, size_t errlen);
/* The same set's ordinal (bl_gtid_ordinal). 0, or -1 with err. */
int gtid_server_ordinal(MYSQL *src, const char *file, unsigned long long pos, uint64_t *ord,
                        char *err, size_t errlen);
/* Can versions be GTID ordinals on this server? 0 yes, 1 no (MySQL with
 * gtid_mode not ON: err names [source] versions and what to do), -1 the
 * question failed (err). */
int gtid_server_check(MYSQL *src, char *err, size_t errlen);
/* Can the reader resume on this server after GTID set `set` (a checkpoint's,
 * maybe of another server)? 0 yes; 1 no, the server lacks transactions of
 * the set (another topology, or behind: err names `epoch bump
 * --reset-checkpoint`); 2 no, it purged what follows them (err says so too);
 * -1 the question failed (err). */
int gtid_resume_check(MYSQL *src, const char *source, const char *set, char *err, size_t errlen);

#endif
