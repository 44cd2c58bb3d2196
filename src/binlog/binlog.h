/* binlog: the MySQL / MariaDB binlog event parser and row decoder.
 *
 * The decoder is fed one complete event at a time (header, body, checksum) by
 * the reader (reader.c, the replica connection) or by a test, and hands what it
 * decodes to a sink: a struct of function pointers (begin, row, commit, ddl,
 * heartbeat). `tail` is one sink, the document builder another, the unit tests
 * a recorder. It does not include the daemon's headers and allocates nothing
 * per row: row images are arrays of cells pointing into the event bytes, and
 * values become JSON only when the sink asks (value.c).
 *
 * Transactions (event.c, txn_* functions):
 *
 *     NONE --GTID(MySQL)--> GTID_SEEN --QUERY "BEGIN"--> IN_TXN
 *     NONE --GTID(MariaDB, not standalone)-----------> IN_TXN
 *     NONE --QUERY "BEGIN"---------------------------> IN_TXN
 *     IN_TXN --XID | QUERY "COMMIT"/"ROLLBACK"--> NONE   sink->commit(end position)
 *     GTID_SEEN / NONE --QUERY (DDL)--> NONE             sink->ddl, sink->commit
 *
 * Positions handed to commit are transaction boundaries: the file and the
 * offset just after the XID/COMMIT/DDL event, plus the transaction's GTID and
 * the executed GTID set including it. The position is tracked by the events'
 * end_log_pos, or by counting bytes where that is 0 (MariaDB 11.4+ inside
 * transactions, MySQL's compressed payloads); artificial events do not move it.
 *
 * Errors: functions return BL_OK (0) or BL_ERR (-1) with a message naming the
 * event type and position in the decoder's error buffer; BL_STOP (1) means a
 * sink asked to stop at this transaction boundary. */
#ifndef SS_BINLOG_H
#define SS_BINLOG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonw.h"
#include "sbuf.h"

enum { BL_OK = 0, BL_ERR = -1, BL_STOP = 1 };

#define BL_ERR_LEN 512
#define BL_FILE_MAX 256
#define BL_GTID_MAX 128
#define BL_HEADER_LEN 19

enum bl_event_type {
    BL_UNKNOWN_EVENT = 0,
    BL_START_V3 = 1,
    BL_QUERY = 2,
    BL_STOP_EVENT = 3,
    BL_ROTATE = 4,
    BL_INTVAR = 5,
    BL_RAND = 13,
    BL_USER_VAR = 14,
    BL_FORMAT_DESCRIPTION = 15,
    BL_XID = 16,
    BL_TABLE_MAP = 19,
    BL_WRITE_ROWS_V1 = 23,
    BL_UPDATE_ROWS_V1 = 24,
    BL_DELETE_ROWS_V1 = 25,
    BL_INCIDENT = 26,
    BL_HEARTBEAT = 27,
    BL_IGNORABLE = 28,
    BL_ROWS_QUERY = 29,
    BL_WRITE_ROWS_V2 = 30,
    BL_UPDATE_ROWS_V2 = 31,
    BL_DELETE_ROWS_V2 = 32,
    BL_GTID = 33,
    BL_ANONYMOUS_GTID = 34,
    BL_PREVIOUS_GTIDS = 35,
    BL_TRANSACTION_CONTEXT = 36,
    BL_VIEW_CHANGE = 37,
    BL_XA_PREPARE = 38,
    BL_PARTIAL_UPDATE_ROWS = 39,
    BL_TRANSACTION_PAYLOAD = 40,
    BL_HEARTBEAT_V2 = 41,
    BL_GTID_TAGGED = 42,
    /* MariaDB */
    BL_ANNOTATE_ROWS = 160,
    BL_BINLOG_CHECKPOINT = 161,
    BL_MARIA_GTID = 162,
    BL_MARIA_GTID_LIST = 163,
    BL_START_ENCRYPTION = 164,
    BL_QUERY_COMPRESSED = 165,
    BL_WRITE_ROWS_COMPRESSED_V1 = 166,
    BL_UPDATE_ROWS_COMPRESSED_V1 = 167,
    BL_DELETE_ROWS_COMPRESSED_V1 = 168,
    BL_WRITE_ROWS_COMPRESSED = 169,
    BL_UPDATE_ROWS_COMPRESSED = 170,
    BL_DELETE_ROWS_COMPRESSED = 171,
};

/* event header flags */
#define BL_FLAG_ARTIFICIAL 0x20

/* column types as they appear in TABLE_MAP (MYSQL_TYPE_*) */
enum bl_type {
    BT_DECIMAL = 0, BT_TINY = 1, BT_SHORT = 2, BT_LONG = 3, BT_FLOAT = 4, BT_DOUBLE = 5,
    BT_NULL = 6, BT_TIMESTAMP = 7, BT_LONGLONG = 8, BT_INT24 = 9, BT_DATE = 10, BT_TIME = 11,
    BT_DATETIME = 12, BT_YEAR = 13, BT_NEWDATE = 14, BT_VARCHAR = 15, BT_BIT = 16,
    BT_TIMESTAMP2 = 17, BT_DATETIME2 = 18, BT_TIME2 = 19, BT_TYPED_ARRAY = 20,
    BT_VECTOR = 242, BT_JSON = 245, BT_NEWDECIMAL = 246, BT_ENUM = 247, BT_SET = 248,
    BT_TINY_BLOB = 249, BT_MEDIUM_BLOB = 250, BT_LONG_BLOB = 251, BT_BLOB = 252,
    BT_VAR_STRING = 253, BT_STRING = 254, BT_GEOMETRY = 255,
};

/* how a column's value is rendered beyond its binlog type (value.c) */
enum bl_kind {
    BK_DEFAULT = 0,
    BK_TEXT,       /* character data: convert charset to UTF-8 */
    BK_BINARY,     /* bytes: base64 */
    BK_JSON_TEXT,  /* MariaDB JSON (LONGTEXT with json_valid): the value itself */
    BK_UUID,       /* MariaDB UUID (BINARY(16) in the binlog): canonical text */
    BK_INET6,      /* MariaDB INET6 (BINARY(16)): RFC 5952 text */
    BK_INET4,      /* MariaDB INET4 (BINARY(4)): dotted quad */
};

/* text encodings value.c converts from (charset of a collation id) */
enum bl_cs {
    CS_UNKNOWN = 0, CS_UTF8, CS_LATIN1, CS_ASCII, CS_BINARY, CS_OTHER,
};

typedef struct bl_column {
    const char *name;     /* NULL when neither metadata nor schema gave one */
    const char *key_json; /* "name": pre-escaped, for the sinks' hot path */
    uint32_t key_json_len;
    uint8_t type;         /* real type: STRING's metadata resolved to ENUM/SET */
    uint8_t map_type;     /* as written in TABLE_MAP */
    uint16_t meta;        /* type metadata, normalised (see table_map.c) */
    uint32_t max_len;     /* STRING: max byte length */
    uint8_t precision, scale, fsp;
    uint8_t len_bytes;    /* BLOB/JSON/GEOMETRY length prefix */
    bool is_unsigned;
    bool nullable;
    bool is_pk;
    uint8_t kind;         /* enum bl_kind */
    uint8_t cs;           /* enum bl_cs */
    uint16_t collation;   /* 0 = unknown */
    const char *cs_name;  /* iconv charset name when cs == CS_OTHER */
    uint32_t n_labels;    /* ENUM / SET labels */
    const char **labels;
    uint32_t *label_lens;
    uint8_t geom_type;
} bl_column;

typedef struct bl_table {
    uint64_t id;
    char *db, *name;
    const char *dbt_json; /* "db":"..","table":".." pre-escaped */
    uint32_t dbt_json_len;
    uint32_t ncols;
    bl_column *cols;
    bool have_names;     /* every column has a name */
    bool have_signedness;
    bool have_charsets;
    bool skip;           /* the sink does not want this table's rows */
    bool checked;        /* schema hook ran */
    struct arena_block *arena; /* strings the columns point into (table_map.c) */
    unsigned schema_gen; /* decoder's schema_gen when last checked */
    unsigned filter_gen; /* decoder's filter_gen when skip was last decided */
    sbuf raw;            /* the TABLE_MAP body, to recognise repeats */
    void *user;          /* free for the sink */
    struct bl_table *next;
} bl_table;

/* BL_UNSURE: a value its producer sent that could not be decoded with
 * certainty (a Kafka message's, src/mq: the decoder keeps the reason); it
 * holds no bytes and is rendered like an absent column. The binlog decoder
 * never makes one. */
enum bl_cell_state { BL_ABSENT = 0, BL_NULL = 1, BL_VALUE = 2, BL_JSON_DIFF = 3, BL_UNSURE = 4 };

/* one column of one row image: points into the event bytes */
typedef struct bl_cell {
    const uint8_t *p;
    uint32_t len;
    uint8_t state;
} bl_cell;

typedef struct bl_pos {
    char file[BL_FILE_MAX];
    uint64_t pos;
    char gtid[BL_GTID_MAX]; /* the transaction's GTID, "" when none */
    uint64_t ordinal;       /* bl_gtid_ordinal of the executed set after the last
                             * transaction ended at or before here; 0 unknown */
} bl_pos;

enum bl_change { BL_INSERT = 0, BL_UPDATE = 1, BL_DELETE = 2 };
extern const char *const bl_change_name[3];

typedef struct bl_row {
    enum bl_change kind;
    const bl_table *table;
    uint32_t ts;          /* event timestamp, unix seconds */
    const bl_pos *txn;    /* where the transaction started, and its GTID */
    const bl_cell *before; /* NULL for inserts */
    const bl_cell *after;  /* NULL for deletes */
} bl_row;

/* What a transaction's end is, for two-phase XA (src/binlog/xa.c): its
 * XA PREPARE (rows not yet visible), or the later XA COMMIT / XA ROLLBACK of
 * a prepared one (no rows of its own). One-phase XA is BL_XA_NONE. */
enum bl_xa { BL_XA_NONE = 0, BL_XA_PREPARED, BL_XA_COMMITTED, BL_XA_ROLLED_BACK };
#define BL_XID_MAX 300 /* X'<64 bytes hex>',X'<64 bytes hex>',<formatID> */

typedef struct bl_commit {
    bl_pos end;               /* just after the transaction's last event */
    uint32_t ts;
    const char *gtid_executed; /* executed set including this transaction ("" if unknown) */
    int xa;                   /* enum bl_xa */
    const char *xid;          /* with xa: X'gtrid',X'bqual',formatID; "" if unreadable */
} bl_commit;

/* The sink. Any callback may be NULL. A nonzero return stops decoding: the
 * decoder returns BL_STOP (positive) or BL_ERR (negative, with the sink's
 * message expected in the error buffer it was given). */
typedef struct bl_sink {
    void *ctx;
    bool (*want_table)(void *ctx, const char *db, const char *table);
    int (*begin)(void *ctx, const bl_pos *at, uint32_t ts);
    int (*row)(void *ctx, const bl_row *row);
    int (*commit)(void *ctx, const bl_commit *c);
    int (*ddl)(void *ctx, const char *db, const char *sql, size_t len, const bl_commit *c);
    int (*heartbeat)(void *ctx, const bl_pos *at);
} bl_sink;

/* Called once per new TABLE_MAP shape, before rows of it are decoded: fill
 * missing names/signedness/labels from the schema and check the types.
 * Returns BL_OK or BL_ERR with err set. */
typedef int (*bl_table_hook)(void *ctx, bl_table *t, char *err, size_t errlen);

typedef struct bl_gtid_set bl_gtid_set;

enum bl_flavor { BL_FLAVOR_UNKNOWN = 0, BL_FLAVOR_MYSQL = 1, BL_FLAVOR_MARIADB = 2 };

enum bl_txn_state { TXN_NONE = 0, TXN_GTID_SEEN = 1, TXN_IN = 2 };

typedef struct bl_decoder {
    const bl_sink *sink;
    bl_table_hook table_hook;
    void *hook_ctx;

    int flavor;
    int checksum_alg;     /* -1 unknown, 0 off, 1 crc32 */
    bool have_fde;
    uint8_t post_header_len[256];
    char server_version[51];

    /* position */
    bl_pos cur;           /* file and offset after the last event */
    bool in_payload;      /* decoding events inside a TRANSACTION_PAYLOAD */
    uint64_t ev_start;    /* start offset of the event being decoded */
    int txn_state;
    bool standalone;      /* MariaDB GTID with FL_STANDALONE: one statement */
    bl_pos txn;           /* where the current transaction started */
    uint32_t txn_ts;
    bool began;           /* sink->begin was called for this transaction */
    int commit_xa;        /* enum bl_xa of the transaction's end (src/binlog/xa.c) */
    char xid[BL_XID_MAX]; /* ... and its xid */
    bl_gtid_set *gtids;   /* executed set (updated at each commit) */
    sbuf gtid_text;

    /* replay suppression after a reconnect: events ending at or before
     * (suppress_file, suppress_pos) were already handed to the sink */
    bool suppress;
    char suppress_file[BL_FILE_MAX];
    uint64_t suppress_upto;
    uint64_t last_delivered;   /* end of the last event that reached the sink */
    char last_delivered_file[BL_FILE_MAX];

    /* tables by id (latest TABLE_MAP wins) */
    bl_table *tables[256];
    bl_table *free_tables;
    uint32_t n_tables;

    /* row scratch: reused, never freed per row */
    bl_cell *cells;
    size_t cells_cap;
    sbuf scratch;         /* decompression */
    sbuf scratch2;
    sbuf payload;         /* an uncompressed TRANSACTION_PAYLOAD */

    /* counters */
    uint64_t n_events, n_rows, n_txns;

    int cur_type;         /* type of the event being decoded (for errors) */
    bool quiet;           /* this event's sink calls are suppressed */
    int n_post_header;
    unsigned schema_gen;  /* bumped by every DDL statement */
    unsigned filter_gen;  /* bumped by bl_decoder_refilter: ask want_table again */
    struct bl_pending_gtid {
        int kind;         /* 0 none, 1 MariaDB, 2 MySQL */
        uint32_t domain, server;
        uint64_t seq;
        uint8_t uuid[16];
        char tag[33];
    } pending;
    bl_pos last_commit;   /* end of the last complete transaction */
    bool have_commit;
    char **coll_names;    /* collation id -> charset name from the server, or NULL */
    char hb_file[BL_FILE_MAX]; /* last HEARTBEAT_V2 */
    uint64_t hb_pos;

    char err[BL_ERR_LEN];
} bl_decoder;

void bl_decoder_init(bl_decoder *d, const bl_sink *sink);
void bl_decoder_free(bl_decoder *d);
/* Decode one event (header + body + checksum as sent by the server). */
int bl_decode(bl_decoder *d, const uint8_t *ev, size_t len);
/* Set the starting position (file, offset) before the first event. */
void bl_decoder_set_pos(bl_decoder *d, const char *file, uint64_t pos);
/* Set the executed GTID set to start from (text, either flavor). */
int bl_decoder_set_gtids(bl_decoder *d, const char *text);
/* Forget everything about the current partial transaction (after a
 * disconnect) and suppress sink calls up to the last delivered event. */
void bl_decoder_reconnected(bl_decoder *d, const bl_pos *resume_from);
/* The sink's want_table answers may have changed (its mapping was reloaded):
 * every cached table is asked again at its next TABLE_MAP, which the server
 * sends before the rows of every statement. Call it from the thread that
 * decodes, between events (a sink callback is fine). */
void bl_decoder_refilter(bl_decoder *d);
const char *bl_event_name(int type);
/* The sequence number of a binlog file name: the digits after its last dot
 * ("mysql-bin.000042" -> 42), 0 when there are none; UINT32_MAX at most.
 * The one parser of it (versions, snapshot positions, order of files). */
uint32_t bl_file_seq(const char *file);
int bl_error(bl_decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An XA transaction's id in the canonical text of bl_commit.xid (xa.c). */
void bl_xid_format(char *out, size_t outlen, uint32_t format_id, const uint8_t *gtrid,
                   size_t gtrid_len, const uint8_t *bqual, size_t bqual_len);
/* An xid as an XA statement writes it (gtrid [, bqual [, formatID]]; each
 * string X'hex', 0xhex or 'text') into that canonical text; false when the
 * text is anything else. */
bool bl_xid_parse(const char *text, size_t len, char *out, size_t outlen);

/* ---- tables (table_map.c) ---- */
int bl_table_map(bl_decoder *d, const uint8_t *body, size_t len);
bl_table *bl_table_find(bl_decoder *d, uint64_t id);
void bl_tables_free(bl_decoder *d);
/* derive type fields (max_len, fsp, precision...) from type + raw meta */
void bl_column_set_type(bl_column *c, uint8_t map_type, const uint8_t *meta, size_t meta_len);
size_t bl_meta_len(uint8_t type);
void bl_table_set_labels(bl_table *t, uint32_t col, const char *const *labels, const uint32_t *lens,
                         uint32_t n);
void bl_table_set_name(bl_table *t, uint32_t col, const char *name, size_t n);
void bl_table_finish_keys(bl_table *t);
/* collation id -> encoding (+ iconv name for CS_OTHER): the ids d's server
 * reported (bl_collation_register), else the built-in table; d may be NULL */
int bl_collation_cs(const bl_decoder *d, uint16_t id, const char **iconv_name);
/* the charset of a collation id as d's server reports it; per decoder */
void bl_collation_register(bl_decoder *d, uint16_t id, const char *charset_name);
void bl_collations_free(bl_decoder *d); /* bl_decoder_free does it */
/* charset name (utf8mb4, latin1, cp1251...) -> encoding (+ iconv name) */
int bl_charset_cs(const char *name, const char **iconv_name);
/* MySQL's latin1 text (cp1252, its five undefined bytes kept as U+0081...)
 * → UTF-8, appended to out (value_charset.c) */
void bl_latin1_utf8(sbuf *out, const uint8_t *p, size_t n);

/* ---- rows (rows.c) ---- */
int bl_rows_event(bl_decoder *d, int type, const uint8_t *body, size_t len, uint32_t ts);
/* bytes a value of column c takes at p (avail bytes), or -1 if truncated/unsupported */
int64_t bl_value_len(const bl_column *c, const uint8_t *p, size_t avail);

/* ---- values → JSON (value.c) ---- */
typedef struct bl_valctx {
    sbuf tmp;
    void *iconv_cache; /* opaque */
} bl_valctx;
void bl_valctx_init(bl_valctx *v);
void bl_valctx_free(bl_valctx *v);
/* Write the value of one cell (BL_NULL → null). Never fails: undecodable
 * bytes become null with the column named in stderr once. */
void bl_value_json(bl_valctx *v, jsonw *w, const bl_column *c, const bl_cell *cell,
                   const bl_cell *before);
/* Append the value of one cell as text, the text MySQL gives for it
 * (CAST(col AS CHAR) through a utf8mb4 connection with time_zone '+00:00',
 * as db.c connects): integers and DECIMAL exact, dates "2024-01-02",
 * DATETIME/TIMESTAMP "2024-01-02 03:04:05[.ffffff]" (zero dates as zeros),
 * strings converted to UTF-8 but otherwise their bytes (NUL, control
 * characters, invalid UTF-8 kept; CHAR's trailing spaces stripped), binary
 * strings and BIT their bytes (BINARY(n) zero padded), ENUM/SET labels
 * (SET comma separated), FLOAT/DOUBLE shortest round-trip, JSON, GEOMETRY
 * and VECTOR their JSON text. For key and join values: the text the
 * document builder reads for the same column. false (nothing appended)
 * for NULL and absent cells. */
bool bl_value_text(bl_valctx *v, sbuf *out, const bl_column *c, const bl_cell *cell);
/* Write a row image as an object {"col":value,...}; absent cells omitted. */
void bl_image_json(bl_valctx *v, jsonw *w, const bl_table *t, const bl_cell *cells,
                   const bl_cell *before);
/* One `tail` line (docs/binlog.md, "Values") for a row, newline included; pos_json is
 * the transaction's position object (bl_pos_json) or NULL. */
void bl_row_json(bl_valctx *v, sbuf *out, const bl_row *r, const char *pos_json, size_t pos_len);
void bl_pos_json(sbuf *out, const bl_pos *at); /* {"file":..,"pos":..,"gtid":..|null} */
void bl_base64(sbuf *out, const uint8_t *p, size_t n); /* appends "..." */
/* decimal(precision, scale) bytes → text; returns length or -1 */
int bl_decimal_text(const uint8_t *p, size_t avail, int precision, int scale, char *out,
                    size_t outsz);
int bl_decimal_size(int precision, int scale);

/* ---- MySQL binary JSON (json_binary.c) ---- */
/* Append the JSON text of a binary JSON document; BL_OK or BL_ERR. */
int bl_json_binary(sbuf *out, const uint8_t *p, size_t n);
/* Apply PARTIAL_UPDATE_ROWS JSON diffs to a JSON text document. */
int bl_json_apply_diffs(sbuf *out, const char *doc, size_t doc_len, const uint8_t *diffs,
                        size_t n);

/* ---- compressed events (payload.c) ---- */
int bl_transaction_payload(bl_decoder *d, const uint8_t *body, size_t len);
/* MariaDB: inflate a compressed block (header byte + length + zlib) */
int bl_mariadb_uncompress(sbuf *out, const uint8_t *p, size_t n, size_t *consumed);

/* ---- GTIDs (gtid.c) ---- */
bl_gtid_set *bl_gtid_new(void);
void bl_gtid_free(bl_gtid_set *s);
void bl_gtid_clear(bl_gtid_set *s);
int bl_gtid_flavor(const bl_gtid_set *s);
int bl_gtid_parse(bl_gtid_set *s, const char *text, char *err, size_t errlen);
void bl_gtid_format(const bl_gtid_set *s, sbuf *out);
bool bl_gtid_empty(const bl_gtid_set *s);
void bl_gtid_add_mariadb(bl_gtid_set *s, uint32_t domain, uint32_t server, uint64_t seq);
/* MariaDB: sum of the domains' last seq_no; MySQL: number of transactions */
uint64_t bl_gtid_ordinal(const bl_gtid_set *s);
/* every transaction of small is in big */
bool bl_gtid_contains(const bl_gtid_set *big, const bl_gtid_set *small);
int bl_gtid_add_mysql(bl_gtid_set *s, const uint8_t uuid[16], const char *tag, uint64_t gno);
/* COM_BINLOG_DUMP_GTID data (n_sids ...) */
void bl_gtid_encode_mysql(const bl_gtid_set *s, sbuf *out);
/* PREVIOUS_GTIDS body / encoded set → set */
int bl_gtid_decode_mysql(bl_gtid_set *s, const uint8_t *p, size_t n);
void bl_uuid_format(const uint8_t uuid[16], char out[37]);
/* MySQL 8.3+ GTID_TAGGED event: uuid, gno, tag */
int bl_gtid_tagged_event(const uint8_t *p, size_t n, uint8_t uuid[16], uint64_t *gno, char tag[33]);

/* little-endian helpers */
static inline uint16_t bl_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t bl_u24(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16; }
static inline uint32_t bl_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t bl_u48(const uint8_t *p) { return (uint64_t)bl_u32(p) | (uint64_t)bl_u16(p + 4) << 32; }
static inline uint64_t bl_u64(const uint8_t *p) { return (uint64_t)bl_u32(p) | (uint64_t)bl_u32(p + 4) << 32; }
/* length-encoded integer; returns bytes used or 0 if truncated */
static inline size_t bl_lenenc(const uint8_t *p, size_t avail, uint64_t *v) {
    if (avail < 1) return 0;
    if (p[0] < 251) { *v = p[0]; return 1; }
    if (p[0] == 252) { if (avail < 3) return 0; *v = bl_u16(p + 1); return 3; }
    if (p[0] == 253) { if (avail < 4) return 0; *v = bl_u24(p + 1); return 4; }
    if (p[0] == 254) { if (avail < 9) return 0; *v = bl_u64(p + 1); return 9; }
    *v = 0; /* 251 = NULL in result sets; not used in the binlog */
    return 1;
}

/* days since 1970-01-01 → civil date (H. Hinnant's algorithm): the value
 * renderers' and the Kafka formats' (mq/cell.c) */
static inline void bl_civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int)(yy + (*m <= 2));
}

#endif
