/* reader: the replica connection (see reader.c). */
#ifndef SS_BINLOG_READER_H
#define SS_BINLOG_READER_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "binlog/binlog.h"
#include "binlog/schema.h"
#include "db_tls.h"

enum bl_start { BL_START_NOW = 0, BL_START_BEGINNING, BL_START_FILEPOS, BL_START_GTID };

typedef struct bl_reader_opts {
    const char *host;     /* NULL/"" = localhost */
    int port;
    const char *socket;
    const char *user;
    const char *password;
    struct db_tls tls;    /* [source] ssl_*; zeroed = preferred, no CA */
    uint32_t server_id;   /* our replica id; must be unique among the server's replicas */
    int heartbeat_ms;     /* idle heartbeat period asked from the server (default 5000) */
    int connect_timeout_ms;
    int read_timeout_ms;  /* 0 = 3 heartbeats + 5 s */
    int start;            /* enum bl_start */
    const char *file;     /* BL_START_FILEPOS */
    uint64_t pos;
    const char *gtid;     /* BL_START_GTID: MySQL set or MariaDB list */
    bool stop_at_end;     /* stop at the end position the server reports at start */
    int max_reconnects;   /* consecutive failed attempts before giving up; -1 = forever */
    int backoff_initial_ms; /* default 100 */
    int backoff_max_ms;     /* default 2000: a server back is read again within 2 s */
    /* told when the stream is lost (up false, with why) and when a reconnect
     * resumes it (up true): the reader's thread, inside bl_reader_run */
    void (*link)(void *ud, bool up, const char *why);
    void *link_ud;
} bl_reader_opts;

typedef struct bl_reader {
    bl_reader_opts o;
    MYSQL *mysql;
    bl_decoder dec;
    bl_schema schema;
    bl_sink wrap;           /* records commits, then calls the user's sink */
    const bl_sink *user;
    int flavor;
    bool full_metadata;
    char checksum[16];
    bl_pos start;           /* resolved start position */
    bl_pos stop;            /* --stop-at-end target */
    bool have_stop;
    bool have_commit;
    bl_pos committed;       /* end of the last complete transaction */
    sbuf committed_gtids;
    volatile sig_atomic_t *stop_flag; /* set by a signal handler: stop at the next boundary */
    uint64_t reconnects;
    unsigned err_code;      /* the server's error code behind err (0: none or not the
                             * server's): 1236, the position is not on the server (purged) */
    char err[BL_ERR_LEN];
} bl_reader;

/* Connect, check the server (binlog on, ROW format, privileges), resolve the
 * start position. BL_OK or BL_ERR with r->err set. */
int bl_reader_open(bl_reader *r, const bl_reader_opts *o, const bl_sink *sink);
/* Stream until the sink stops, stop_at_end is reached, *stop_flag is set or a
 * permanent error. Reconnects on transient errors. BL_OK / BL_STOP / BL_ERR. */
int bl_reader_run(bl_reader *r);
/* Is more of the stream already waiting on the connection (readable now,
 * without blocking)? A hint only: bytes the client library has buffered
 * already are not seen, so false may still be followed by an event at once. */
bool bl_reader_more_pending(const bl_reader *r);
/* The same, waiting up to timeout_ms for the stream's next bytes. */
bool bl_reader_wait_pending(const bl_reader *r, int timeout_ms);
void bl_reader_close(bl_reader *r);
/* The sink's want_table answers changed: ask them again for every table
 * (bl_decoder_refilter). From the reader's thread, e.g. in a sink callback.
 * NULL-safe. */
void bl_reader_refilter(bl_reader *r);

/* The statement giving a MariaDB server the GTID list to start after
 * (SET @slave_connect_state='...'), the list escaped; any length (one entry
 * per replication domain). */
void bl_connect_state_sql(sbuf *out, const char *gtid);

/* "mysql://user:pass@host:port" → fields (strings point into a copy kept in *buf) */
int bl_parse_uri(const char *uri, char **buf, const char **user, const char **pass, const char **host,
                 int *port, char *err, size_t errlen);

#endif
