/* reader: the replica connection. libmariadb carries the bytes only: after
 * mysql_real_connect we send COM_BINLOG_DUMP (0x12) or COM_BINLOG_DUMP_GTID
 * (0x1e) with the low-level command call and read packets in a loop
 * (libmariadb joins >16 MB split packets); each event goes to the decoder.
 *
 * States (bl_reader_run):
 *
 *   CONNECTED --start_dump()--> STREAMING --packet--> bl_decode() --+
 *       ^                          |  ^_____________________________|
 *       |                          | transient error (lost, killed, timeout)
 *       +--reconnect() (backoff)<--+
 *   STREAMING --stop_at_end reached / sink BL_STOP / stop flag--> done (OK)
 *   any --permanent error (purged binlog, privileges, decode)--> done (ERR)
 *
 * A reconnect resumes at the end of the last complete transaction (or the
 * original start if none completed); the decoder suppresses the sink calls
 * for events it had already delivered, so nothing is lost or repeated. */
#include <errno.h>
#include <mysql.h>
#include <errmsg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "binlog/reader.h"
#include "cred_refused.h"
#include "db.h"
#include "log.h"

#define COM_DUMP 0x12
#define BL_DUMP_NET_WRITE_TIMEOUT_S "3600" /* the dump connection's net_write_timeout */
#define COM_DUMP_GTID 0x1e

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static bool transient_errno(unsigned e) {
    if (e >= 2000 && e < 3000) return true; /* client side: connection lost, refused, timeout */
    switch (e) {
    case 1040: /* too many connections */
    case 1053: /* server shutdown in progress */
    case 1152: /* aborted connection */
    case 1159: case 1161: /* net read/write timeouts */
    case 1317: /* query interrupted */
    case 1927: /* connection killed (MariaDB) */
    case 4031: /* disconnected by server for inactivity */
        return true;
    default:
        return false;
    }
}

/* the server's error, explained */
static void explain(bl_reader *r, MYSQL *m, const char *what) {
    unsigned e = mysql_errno(m);
    r->err_code = e;
    const char *msg = mysql_error(m);
    const char *host = r->o.host && *r->o.host ? r->o.host : "localhost";
    char hint[400];
    if (db_tls_hint(&r->o.tls, e, msg, hint, sizeof hint)) {
        snprintf(r->err, sizeof r->err, "%s: TLS to the server at %s:%d: %s (error %u); %s", what,
                 host, r->o.port, msg, e, hint);
        return;
    }
    switch (e) {
    case 1236:
        snprintf(r->err, sizeof r->err,
                 "%s: the requested binlog position is not available on the server (purged, or "
                 "never existed): %s. Start from a position the server still has (SHOW BINARY LOGS) "
                 "and resynchronise what was missed", what, msg);
        break;
    case 1227: case 1044: case 1142: case 1370:
        snprintf(r->err, sizeof r->err,
                 "%s: permission denied: %s. The user needs the REPLICATION SLAVE and REPLICATION "
                 "CLIENT privileges (MariaDB 10.5+: REPLICATION SLAVE, BINLOG MONITOR), e.g. GRANT "
                 "REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '%s'@'%%'", what, msg,
                 r->o.user ? r->o.user : "");
        break;
    case 1045:
        cred_refused_note();
        snprintf(r->err, sizeof r->err, "%s: access denied for '%s' at %s:%d: %s; check the "
                 "user and password in the [source] section (tail --source: those of the URI)",
                 what, r->o.user ? r->o.user : "", host, r->o.port, msg);
        break;
    case CR_CONNECTION_ERROR: case CR_CONN_HOST_ERROR: case 2005:
        snprintf(r->err, sizeof r->err, "%s: the server at %s:%d is unreachable: %s", what, host,
                 r->o.port, msg);
        break;
    default:
        snprintf(r->err, sizeof r->err, "%s: %s (error %u)", what, msg, e);
    }
}

static MYSQL *connect_server(bl_reader *r, bool dump, char *err, size_t errlen, unsigned *eno) {
    MYSQL *m = mysql_init(NULL);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    unsigned ct = (unsigned)(r->o.connect_timeout_ms > 0 ? (r->o.connect_timeout_ms + 999) / 1000 : 10);
    mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
    if (dump) {
        unsigned rt = (unsigned)(r->o.read_timeout_ms > 0 ? (r->o.read_timeout_ms + 999) / 1000
                                                          : (3 * r->o.heartbeat_ms + 999) / 1000 + 5);
        mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &rt);
    }
    unsigned long maxp = 1UL << 30;
    mysql_optionsv(m, MYSQL_OPT_MAX_ALLOWED_PACKET, &maxp);
    mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    const char *host = r->o.host && *r->o.host ? r->o.host : NULL;
    const char *sock = r->o.socket && *r->o.socket ? r->o.socket : NULL;
    if (!r->o.tls.section) r->o.tls.section = "source";
    db_tls_apply(m, &r->o.tls);
    if (!mysql_real_connect(m, host, r->o.user, r->o.password, NULL, (unsigned)r->o.port, sock, 0)) {
        if (eno) *eno = mysql_errno(m);
        explain(r, m, "connect");
        snprintf(err, errlen, "%s", r->err);
        mysql_close(m);
        return NULL;
    }
    char where[300];
    snprintf(where, sizeof where, "%s:%d", host ? host : "localhost", r->o.port);
    if (db_tls_check(m, &r->o.tls, "source", where, err, errlen) < 0) {
        if (eno) *eno = 1045; /* not transient: the reader gives up (as on a refused login) */
        snprintf(r->err, sizeof r->err, "%s", err);
        mysql_close(m);
        return NULL;
    }
    return m;
}

static MYSQL *schema_connect(void *ctx, char *err, size_t errlen) {
    return connect_server(ctx, false, err, errlen, NULL);
}

/* run a query returning one row; fills up to n columns (NULL → "") */
static int query_row(bl_reader *r, const char *sql, char vals[][256], int n, bool *found) {
    *found = false;
    if (mysql_query(r->mysql, sql)) {
        char what[300];
        snprintf(what, sizeof what, "%s", sql);
        explain(r, r->mysql, what);
        return BL_ERR;
    }
    MYSQL_RES *res = mysql_store_result(r->mysql);
    if (!res) return BL_OK;
    MYSQL_ROW row = mysql_fetch_row(res);
    if (row) {
        *found = true;
        unsigned nf = mysql_num_fields(res);
        for (int i = 0; i < n; i++)
            snprintf(vals[i], 256, "%s", (unsigned)i < nf && row[i] ? row[i] : "");
    }
    mysql_free_result(res);
    return BL_OK;
}

static int master_status(bl_reader *r, bl_pos *p) {
    char e[BL_ERR_LEN];
    unsigned long long pos = 0;
    int s = db_binlog_status(r->mysql, p->file, sizeof p->file, &pos, e, sizeof e);
    if (s < 0 && mysql_errno(r->mysql)) {
        explain(r, r->mysql, "reading the binlog position");
        return BL_ERR;
    }
    if (s <= 0) {
        snprintf(r->err, sizeof r->err, "%s", e);
        return BL_ERR;
    }
    p->pos = pos;
    return BL_OK;
}

static int check_server(bl_reader *r) {
    char v[3][256];
    bool found;
    const char *info = mysql_get_server_info(r->mysql);
    r->flavor = info && strstr(info, "MariaDB") ? BL_FLAVOR_MARIADB : BL_FLAVOR_MYSQL;
    if (query_row(r, "SELECT @@global.log_bin, @@global.binlog_format, @@global.binlog_checksum", v, 3,
                  &found) != BL_OK)
        return BL_ERR;
    if (strcmp(v[0], "1") != 0 && strcasecmp(v[0], "ON") != 0) {
        snprintf(r->err, sizeof r->err, "the server has binary logging disabled (log_bin=%s); start it "
                 "with --log-bin --binlog-format=ROW", v[0]);
        return BL_ERR;
    }
    if (strcasecmp(v[1], "ROW") != 0) {
        snprintf(r->err, sizeof r->err, "the server's binlog_format is %s; searchsync needs ROW (SET "
                 "GLOBAL binlog_format=ROW, and binlog-format=ROW in the server's configuration)", v[1]);
        return BL_ERR;
    }
    snprintf(r->checksum, sizeof r->checksum, "%.15s", v[2]);
    r->full_metadata = false;
    if (mysql_query(r->mysql, "SELECT @@global.binlog_row_metadata") == 0) {
        MYSQL_RES *res = mysql_store_result(r->mysql);
        MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
        if (row && row[0] && !strcasecmp(row[0], "FULL")) r->full_metadata = true;
        if (res) mysql_free_result(res);
    }
    if (!r->full_metadata)
        log_warn("binlog", "binlog_row_metadata is not FULL: column names and types come from "
                 "information_schema and are checked against every table map");
    /* collation ids → charsets, for text conversion */
    if (mysql_query(r->mysql, "SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATIONS") == 0) {
        MYSQL_RES *res = mysql_store_result(r->mysql);
        MYSQL_ROW row;
        while (res && (row = mysql_fetch_row(res)))
            if (row[0] && row[1]) bl_collation_register(&r->dec, (uint16_t)atoi(row[0]), row[1]);
        if (res) mysql_free_result(res);
    }
    return BL_OK;
}

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int set_session(bl_reader *r, const char *sql, bool required) {
    if (mysql_query(r->mysql, sql) == 0) return BL_OK;
    if (!required) return BL_OK;
    explain(r, r->mysql, sql);
    return BL_ERR;
}

void bl_connect_state_sql(sbuf *out, const char *gtid) {
    sbuf_reset(out);
    sbuf_adds(out, "SET @slave_connect_state=");
    /* no query connection here: db_quote escapes as the server would for utf8mb4 */
    db_quote(NULL, out, gtid ? gtid : "", gtid ? strlen(gtid) : 0);
}

static int start_dump(bl_reader *r, const bl_pos *from, bool by_gtid) {
    char sql[1024];
    if (set_session(r, "SET @master_binlog_checksum=@@global.binlog_checksum", true) != BL_OK ||
        set_session(r, "SET @source_binlog_checksum=@@global.binlog_checksum", false) != BL_OK ||
        set_session(r, "SET @mariadb_slave_capability=4", false) != BL_OK)
        return BL_ERR;
    /* The server gives up on a replica that takes no bytes for
     * net_write_timeout (60 s by default): its dump thread waits for room in
     * the socket, and Linux reports room only once about half of the send
     * buffer has been read. A reader held back by backpressure (the engine
     * slower than the binlog: a few KB/s against megabytes of socket
     * buffers) reads that much in more than a minute, so the server dropped
     * the stream about every 70 s under load (error 2013, then a reconnect
     * that reads the buffered megabytes again). The session's limit covers
     * the dump thread. A reader held longer (an engine down for an hour)
     * gets a reconnect, which loses nothing; a reconnect with the same
     * server_id ends a dump thread left behind. */
    set_session(r, "SET @@session.net_write_timeout=" BL_DUMP_NET_WRITE_TIMEOUT_S, false);
    snprintf(sql, sizeof sql, "SET @master_heartbeat_period=%llu",
             (unsigned long long)r->o.heartbeat_ms * 1000000ULL);
    set_session(r, sql, false);
    snprintf(sql, sizeof sql, "SET @source_heartbeat_period=%llu",
             (unsigned long long)r->o.heartbeat_ms * 1000000ULL);
    set_session(r, sql, false);

    sbuf pkt = SBUF_INIT;
    uint8_t b[16];
    int cmd = COM_DUMP;
    if (by_gtid && r->flavor == BL_FLAVOR_MARIADB) {
        sbuf state = SBUF_INIT; /* a GTID list has one entry per domain: any length */
        bl_connect_state_sql(&state, r->o.gtid);
        int ok = set_session(r, state.data, true) == BL_OK &&
                 set_session(r, "SET @slave_gtid_strict_mode=1", true) == BL_OK &&
                 set_session(r, "SET @slave_gtid_ignore_duplicates=0", false) == BL_OK;
        sbuf_free(&state);
        if (!ok) {
            sbuf_free(&pkt);
            return BL_ERR;
        }
        put_u32(b, 4);
        put_u16(b + 4, 0);
        put_u32(b + 6, r->o.server_id);
        sbuf_add(&pkt, b, 10);
        bl_decoder_set_pos(&r->dec, "", 4);
    } else if (by_gtid) {
        cmd = COM_DUMP_GTID;
        sbuf set = SBUF_INIT;
        bl_gtid_encode_mysql(r->dec.gtids, &set);
        put_u16(b, 0x04); /* BINLOG_THROUGH_GTID */
        put_u32(b + 2, r->o.server_id);
        put_u32(b + 6, 0); /* no file name */
        sbuf_add(&pkt, b, 10);
        uint8_t p8[8] = {4, 0, 0, 0, 0, 0, 0, 0};
        sbuf_add(&pkt, p8, 8);
        put_u32(b, (uint32_t)set.len);
        sbuf_add(&pkt, b, 4);
        sbuf_add(&pkt, set.data, set.len);
        sbuf_free(&set);
        bl_decoder_set_pos(&r->dec, "", 4);
    } else {
        if (from->pos > UINT32_MAX) {
            snprintf(r->err, sizeof r->err, "position %llu does not fit COM_BINLOG_DUMP",
                     (unsigned long long)from->pos);
            sbuf_free(&pkt);
            return BL_ERR;
        }
        put_u32(b, (uint32_t)from->pos);
        put_u16(b + 4, 0);
        put_u32(b + 6, r->o.server_id);
        sbuf_add(&pkt, b, 10);
        sbuf_adds(&pkt, from->file);
        bl_decoder_set_pos(&r->dec, from->file, from->pos);
    }
    r->dec.checksum_alg = -1;
    int rc = r->mysql->methods->db_command(r->mysql, (enum enum_server_command)cmd, pkt.data, pkt.len, 1, NULL);
    sbuf_free(&pkt);
    if (rc) {
        explain(r, r->mysql, "binlog dump");
        return BL_ERR;
    }
    if (by_gtid)
        log_info("binlog", "reading %s after GTID set %s", mysql_get_server_info(r->mysql), r->o.gtid);
    else
        log_info("binlog", "reading %s from %s:%llu", mysql_get_server_info(r->mysql), from->file,
                 (unsigned long long)from->pos);
    return BL_OK;
}

int bl_reader_open(bl_reader *r, const bl_reader_opts *o, const bl_sink *sink) {
    memset(r, 0, sizeof *r);
    r->o = *o;
    if (r->o.heartbeat_ms <= 0) r->o.heartbeat_ms = 5000;
    if (r->o.backoff_initial_ms <= 0) r->o.backoff_initial_ms = 100;
    if (r->o.backoff_max_ms <= 0) r->o.backoff_max_ms = 2000;
    if (r->o.server_id == 0) r->o.server_id = 4000000000u + (uint32_t)((unsigned)getpid() % 100000000u);
    r->user = sink;
    sbuf_init(&r->committed_gtids);
    bl_decoder_init(&r->dec, sink);
    char e[BL_ERR_LEN];
    r->mysql = connect_server(r, true, e, sizeof e, NULL);
    if (!r->mysql) return BL_ERR;
    if (check_server(r) != BL_OK) return BL_ERR;
    r->dec.flavor = r->flavor;
    bl_schema_init(&r->schema, schema_connect, r, r->flavor == BL_FLAVOR_MARIADB, r->full_metadata);
    r->dec.table_hook = (bl_table_hook)bl_schema_check;
    r->dec.hook_ctx = &r->schema;

    switch (r->o.start) {
    case BL_START_NOW:
        if (master_status(r, &r->start) != BL_OK) return BL_ERR;
        break;
    case BL_START_BEGINNING: {
        char v[1][256];
        bool found;
        if (query_row(r, "SHOW BINARY LOGS", v, 1, &found) != BL_OK) return BL_ERR;
        if (!found) {
            snprintf(r->err, sizeof r->err, "the server has no binary logs");
            return BL_ERR;
        }
        snprintf(r->start.file, sizeof r->start.file, "%s", v[0]);
        r->start.pos = 4;
        break;
    }
    case BL_START_FILEPOS:
        snprintf(r->start.file, sizeof r->start.file, "%s", r->o.file ? r->o.file : "");
        r->start.pos = r->o.pos < 4 ? 4 : r->o.pos;
        break;
    case BL_START_GTID:
        if (bl_decoder_set_gtids(&r->dec, r->o.gtid ? r->o.gtid : "") != BL_OK) {
            snprintf(r->err, sizeof r->err, "%s", r->dec.err);
            return BL_ERR;
        }
        if ((bl_gtid_flavor(r->dec.gtids) == BL_FLAVOR_MARIADB) != (r->flavor == BL_FLAVOR_MARIADB) &&
            !bl_gtid_empty(r->dec.gtids)) {
            snprintf(r->err, sizeof r->err, "--gtid '%s' is a %s GTID set but the server is %s", r->o.gtid,
                     bl_gtid_flavor(r->dec.gtids) == BL_FLAVOR_MARIADB ? "MariaDB" : "MySQL",
                     r->flavor == BL_FLAVOR_MARIADB ? "MariaDB" : "MySQL");
            return BL_ERR;
        }
        break;
    }
    if (r->o.stop_at_end) {
        if (master_status(r, &r->stop) != BL_OK) return BL_ERR;
        r->have_stop = true;
    }
    return start_dump(r, &r->start, r->o.start == BL_START_GTID);
}

/* a >= b in binlog order */
static bool pos_reached(const bl_pos *a, const bl_pos *b) {
    size_t la = strlen(a->file), lb = strlen(b->file);
    if (la == 0) return false;
    if (la != lb) return la > lb;
    int c = strcmp(a->file, b->file);
    if (c != 0) return c > 0;
    return a->pos >= b->pos;
}

static int reconnect(bl_reader *r) {
    int delay = r->o.backoff_initial_ms;
    int attempts = 0;
    for (;;) {
        if (r->stop_flag && *r->stop_flag) return BL_STOP;
        if (r->mysql) {
            mysql_close(r->mysql);
            r->mysql = NULL;
        }
        /* said at the loss, then once a minute or so: a server that is down
         * for minutes is tried every backoff_max_ms, and said rarely */
        if (attempts == 0) {
            log_warn("binlog", "connection lost (%s); reconnecting in %d ms", r->err, delay);
            if (r->o.link) r->o.link(r->o.link_ud, false, r->err);
        }
        else if (attempts % 30 == 0)
            log_warn("binlog", "reconnect failed %d times (%s); trying again every %d ms", attempts,
                     r->err, delay);
        sleep_ms(delay);
        char e[BL_ERR_LEN];
        unsigned eno = 0;
        r->mysql = connect_server(r, true, e, sizeof e, &eno);
        if (!r->mysql) snprintf(r->err, sizeof r->err, "%s", e); /* the latest reason */
        if (r->mysql && check_server(r) != BL_OK) {
            /* the server came back configured differently (binlog off, not ROW) */
            return BL_ERR;
        }
        if (r->mysql) {
            bool by_gtid = !r->dec.have_commit && r->o.start == BL_START_GTID;
            bl_pos from = r->dec.have_commit ? r->dec.last_commit : r->start;
            bl_decoder_reconnected(&r->dec, &from);
            if (by_gtid) r->dec.cur.file[0] = '\0';
            if (start_dump(r, &from, by_gtid) == BL_OK) {
                r->reconnects++;
                if (r->o.link) r->o.link(r->o.link_ud, true, NULL);
                log_info("binlog", "resumed at %s:%llu after %d attempt(s)", from.file[0] ? from.file : "(gtid)",
                         (unsigned long long)from.pos, attempts + 1);
                return BL_OK;
            }
            eno = mysql_errno(r->mysql);
        }
        if (eno && !transient_errno(eno)) return BL_ERR;
        attempts++;
        if (r->o.max_reconnects >= 0 && attempts > r->o.max_reconnects) {
            log_error("binlog", "giving up after %d reconnect attempts", attempts);
            return BL_ERR;
        }
        delay *= 2;
        if (delay > r->o.backoff_max_ms) delay = r->o.backoff_max_ms;
    }
}

int bl_reader_run(bl_reader *r) {
    for (;;) {
        if (r->stop_flag && *r->stop_flag && r->dec.txn_state == TXN_NONE) return BL_STOP;
        unsigned long len = mysql_net_read_packet(r->mysql);
        if (len == packet_error || len == 0) {
            if (r->stop_flag && *r->stop_flag) return BL_STOP;
            unsigned e = mysql_errno(r->mysql);
            explain(r, r->mysql, "binlog stream");
            if (!transient_errno(e)) return BL_ERR;
            int rc = reconnect(r);
            if (rc != BL_OK) return rc;
            continue;
        }
        const uint8_t *p = r->mysql->net.read_pos;
        if (p[0] == 0xfe && len < 9) return BL_OK; /* the server ended the stream */
        if (p[0] != 0) {
            snprintf(r->err, sizeof r->err, "unexpected packet 0x%02x in the binlog stream", p[0]);
            return BL_ERR;
        }
        int rc = bl_decode(&r->dec, p + 1, len - 1);
        if (rc == BL_ERR) {
            snprintf(r->err, sizeof r->err, "%s", r->dec.err);
            return BL_ERR;
        }
        if (rc == BL_STOP) return BL_STOP;
        if (r->have_stop && r->dec.txn_state == TXN_NONE && pos_reached(&r->dec.cur, &r->stop))
            return BL_OK;
    }
}

void bl_reader_refilter(bl_reader *r) {
    if (r) bl_decoder_refilter(&r->dec);
}

void bl_reader_close(bl_reader *r) {
    if (!r) return;
    if (r->mysql) mysql_close(r->mysql);
    r->mysql = NULL;
    bl_schema_free(&r->schema);
    bl_decoder_free(&r->dec);
    sbuf_free(&r->committed_gtids);
}

int bl_parse_uri(const char *uri, char **buf, const char **user, const char **pass, const char **host,
                 int *port, char *err, size_t errlen) {
    const char *pfx[] = {"mysql://", "mariadb://"};
    const char *rest = NULL;
    for (int i = 0; i < 2; i++)
        if (!strncmp(uri, pfx[i], strlen(pfx[i]))) rest = uri + strlen(pfx[i]);
    if (!rest) {
        snprintf(err, errlen, "source URI must look like mysql://USER:PASS@HOST:PORT, got '%s'", uri);
        return BL_ERR;
    }
    char *s = *buf = xstrdup(rest);
    *user = *pass = NULL;
    *host = "127.0.0.1";
    *port = 3306;
    char *at = strrchr(s, '@');
    char *hp = s;
    if (at) {
        *at = '\0';
        hp = at + 1;
        char *colon = strchr(s, ':');
        if (colon) {
            *colon = '\0';
            *pass = colon + 1;
        }
        *user = s;
    }
    char *slash = strchr(hp, '/');
    if (slash) *slash = '\0';
    char *colon = strrchr(hp, ':');
    if (colon) {
        *colon = '\0';
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (*end || p <= 0 || p > 65535) {
            snprintf(err, errlen, "bad port in source URI '%s'", uri);
            return BL_ERR;
        }
        *port = (int)p;
    }
    if (*hp) *host = hp;
    /* %XX escapes in user and password */
    char *fields[2] = {(char *)*user, (char *)*pass};
    for (int i = 0; i < 2; i++) {
        char *f = fields[i];
        if (!f) continue;
        char *o = f;
        for (char *q = f; *q; q++) {
            if (*q == '%' && q[1] && q[2]) {
                char hx[3] = {q[1], q[2], 0};
                *o++ = (char)strtol(hx, NULL, 16);
                q += 2;
            } else {
                *o++ = *q;
            }
        }
        *o = '\0';
    }
    return BL_OK;
}

bool bl_reader_more_pending(const bl_reader *r) {
    return bl_reader_wait_pending(r, 0);
}

bool bl_reader_wait_pending(const bl_reader *r, int timeout_ms) {
    if (!r || !r->mysql) return false;
    my_socket fd = mysql_get_socket(r->mysql);
    if (fd == MARIADB_INVALID_SOCKET) return false;
    struct pollfd pf = {.fd = (int)fd, .events = POLLIN};
    return poll(&pf, 1, timeout_ms) == 1 && (pf.revents & POLLIN);
}
