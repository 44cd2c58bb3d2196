/* mq: decoders of change messages read from a message queue (Kafka): canal's
 * flat JSON (canal-json), Debezium's MySQL connector envelope (with or
 * without schemas) and Maxwell's JSON, detected per message.
 *
 * A decoded message is what the binlog decoder hands its sink: one bl_table
 * (db, table, columns with binlog type codes, signedness, precision/scale/
 * fsp, labels, is_pk) and rows whose before/after cells hold each value
 * encoded in the binlog's binary format for its column type (cell.c), so the
 * router, the document builder and `tail` rendering (bl_row_json) are the
 * same for both sources. Each format's quirks are undone on the way in:
 * canal's all-string values (binary as ISO-8859-1 text), Debezium's epoch
 * days/millis/micros, base64 decimals and little-endian BIT bytes, Maxwell's
 * typed JSON. Numbers are read with json_exact, never through a double.
 *
 * Types: a message's own type information is used when it has some (canal's
 * mysqlType, Debezium's schema); a schema lookup (mq_opts.lookup: the
 * source's information_schema columns) makes every format exact and takes
 * precedence. Without either, types are guessed from the JSON values, which
 * each format's file says how (debezium.c, maxwell.c).
 *
 * Positions: m->have_pos says the message carried binlog coordinates (canal
 * logfileName/logfileOffset, Debezium source.file/pos/row and gtid, Maxwell
 * position "file:pos" and xoffset); otherwise the caller versions the
 * message by its partition offset under an epoch.
 *
 * Errors: mq_decode returns MQ_ERR with m->err saying what is wrong with the
 * message; the caller keeps the raw message as a dead letter and goes on.
 * No message, however malformed, makes it crash or stop. One value that
 * cannot be decoded, or not with certainty (out of its column's range, an
 * encoding the producer's settings leave open), does not fail its message:
 * its cell is BL_UNSURE and m->unsure says which and why, so the rows' keys
 * still reach whatever needs only them (documents re-read from MySQL). A
 * primary key column's value must decode: without it the row's documents
 * cannot be found, and the message fails. */
#ifndef SS_MQ_H
#define SS_MQ_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binlog/binlog.h"
#include "sbuf.h"

enum { MQ_OK = 0, MQ_ERR = -1 };

enum mq_format { MQ_AUTO = 0, MQ_CANAL, MQ_DEBEZIUM, MQ_MAXWELL };
extern const char *const mq_format_name[4]; /* "auto", "canal-json", "debezium", "maxwell" */

/* what a message is */
enum mq_kind {
    MQ_NONE = 0, /* nothing to apply: tombstone, heartbeat, transaction marker, bootstrap marker */
    MQ_ROWS,     /* row changes: m->table, m->rows */
    MQ_DDL,      /* a statement: m->ddl_db, m->ddl */
};

/* One column as the source's information_schema describes it. */
typedef struct mq_coldef {
    const char *name;
    /* COLUMN_TYPE: "bigint(20) unsigned", "decimal(30,10)", "enum('a','b')";
     * a character column's may end in its charset, as a column definition
     * says it: "varchar(8) character set latin1" (mq_col_type) */
    const char *column_type;
    bool is_pk;
} mq_coldef;

/* The table's columns in their order: 1 with *cols and *ncols set (valid until
 * mq_decode returns), 0 when the table is unknown (the message's own types
 * are used), -1 on a failure (err set; the message fails). */
typedef int (*mq_lookup_fn)(void *ctx, const char *db, const char *table, const mq_coldef **cols,
                            uint32_t *ncols, char *err, size_t errlen);

/* Debezium connector settings a message without schemas does not say
 * (debezium.c); 0: not stated. */
enum mq_dbz_decimal { MQ_DBZ_DEC_PRECISE = 1, MQ_DBZ_DEC_STRING, MQ_DBZ_DEC_DOUBLE };
enum mq_dbz_time { MQ_DBZ_TIME_MICROS = 1 /* adaptive_time_microseconds */, MQ_DBZ_TIME_CONNECT };
enum mq_dbz_binary { MQ_DBZ_BIN_BASE64 = 1 /* bytes, base64, base64-url-safe */, MQ_DBZ_BIN_HEX };

typedef struct mq_opts {
    int format;            /* enum mq_format; MQ_AUTO detects per message */
    mq_lookup_fn lookup;   /* optional */
    void *lookup_ctx;
    /* offset east of UTC, in seconds, of the TIMESTAMP text canal writes
     * (its JVM's time zone); Maxwell writes UTC and Debezium ISO-8601 with a zone */
    int32_t canal_tz_offset;
    /* the Debezium connector's decimal.handling.mode, time.precision.mode
     * and binary.handling.mode ([kafka] debezium_*): used where a message
     * has no schema saying them */
    int dbz_decimal, dbz_time, dbz_binary;
} mq_opts;

/* A value of the message that could not be decoded with certainty: cell col
 * of row's after (or before) image is BL_UNSURE; why names the column and
 * table, what is wrong and, where a setting decides it, the setting. */
typedef struct mq_unsure {
    uint32_t row, col;
    bool after;
    const char *why;
} mq_unsure;

typedef struct mq_msg {
    int format;           /* enum mq_format the message was decoded as */
    int kind;             /* enum mq_kind */

    bl_table table;       /* MQ_ROWS: every row's table */
    bl_row *rows;
    uint32_t nrows;

    bool have_pos;        /* pos holds the message's binlog coordinates */
    bl_pos pos;           /* file, offset (and GTID when carried) */
    uint32_t pos_row;     /* Debezium source.row / Maxwell xoffset: order within pos */
    uint32_t ts;          /* the change's time, unix seconds (0 if unknown) */
    uint64_t ts_ms;

    char *ddl_db, *ddl;   /* MQ_DDL */
    bool ddl_replayed;    /* MQ_DDL: written by the producer to describe the schema
                           * as it was at pos (Debezium's snapshot), not a
                           * statement the server ran there */

    mq_unsure *unsure;    /* the values left BL_UNSURE */
    uint32_t nunsure;

    /* private: the table's strings, the cells and the value bytes */
    struct arena_block *arena;
    bl_cell *cells;
    uint32_t *cell_off;
    size_t cells_cap;
    size_t rows_cap;
    uint32_t unsure_cap;
    sbuf vals;
    char err[512];
} mq_msg;

void mq_msg_init(mq_msg *m);
void mq_msg_free(mq_msg *m);
/* Decode one message (the Kafka record's value); resets m first.
 * MQ_OK, or MQ_ERR with m->err. */
int mq_decode(mq_msg *m, const mq_opts *o, const char *data, size_t len);
/* Which format a message is (MQ_CANAL...), or MQ_AUTO with err naming the
 * keys seen when it is none or ambiguous. root: a parsed JSON object. */
struct cJSON;
int mq_detect(const struct cJSON *root, char *err, size_t errlen);

/* Row i of m could not be routed for want of a column (the router's or the
 * row-image builder's error says so in the binlog's words): what its
 * producer must do, in out (absent.c) — a primary key column missing from
 * an image, else the columns missing. 0, or -1 when the row lacks none. */
int mq_absent_advice(const mq_msg *m, uint32_t i, char *out, size_t outlen);

/* ---- building a message (msg.c), used by the format decoders ---- */
int mq_fail(mq_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *mq_strdup(mq_msg *m, const char *s, size_t n);
void *mq_alloc(mq_msg *m, size_t n); /* freed with the message */
void mq_set_table(mq_msg *m, const char *db, const char *table);
/* the rows' table from a JSON message's "database" and "table" strings; else
 * MQ_ERR: the format's (fmt) message of type type lacks them */
int mq_set_table_json(mq_msg *m, const char *fmt, const char *type, const struct cJSON *db,
                      const struct cJSON *table);
/* m becomes a DDL statement sql run in database db (NULL: ""); MQ_OK */
int mq_set_ddl(mq_msg *m, const char *db, const char *sql);
/* a column, appended; its index */
uint32_t mq_add_col(mq_msg *m, const char *name);
int mq_find_col(const mq_msg *m, const char *name);
/* the lookup's columns become the table's (1), or 0 unknown, -1 failed */
int mq_lookup_cols(mq_msg *m, const mq_opts *o);
/* finish the column list (keys, db/table JSON); call once before rows */
void mq_cols_done(mq_msg *m);
/* a new row: its before/after cell arrays (all BL_ABSENT); index in m->rows */
uint32_t mq_add_row(mq_msg *m, enum bl_change kind);
bl_cell *mq_row_cells(mq_msg *m, uint32_t row, bool after);
/* start / end a value: bytes appended to m->vals in between belong to it */
static inline size_t mq_val_start(mq_msg *m) { return m->vals.len; }
void mq_val_end(mq_msg *m, uint32_t row, bool after, uint32_t col, size_t start);
void mq_val_null(mq_msg *m, uint32_t row, bool after, uint32_t col);
/* A format's encoder of one JSON value (never null) of column c: its binlog
 * bytes appended to out, 0; -1 with err saying what is wrong with it; or 1
 * with err saying why it cannot be decoded with certainty (and which
 * setting to state). */
typedef int (*mq_enc_fn)(sbuf *out, const bl_column *c, const struct cJSON *v, const void *ud,
                         char *err, size_t errlen);
/* Cell col of row's after (or before) image from v: NULL for a JSON null
 * (or no v), else what enc(.., ud) appends. An encoder's error or doubt
 * makes the cell BL_UNSURE (mq_val_unsure); of a primary key column it
 * fails the message. Both name the column and table. 0, or MQ_ERR with
 * m->err. */
int mq_put_value(mq_msg *m, uint32_t row, bool after, uint32_t col, const struct cJSON *v,
                 mq_enc_fn enc, const void *ud);
/* cell col of row's after (or before) image is BL_UNSURE, why (printf)
 * recorded in m->unsure */
void mq_val_unsure(mq_msg *m, uint32_t row, bool after, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* point the cells at the value bytes, set the rows' table/pos; call last */
void mq_finish(mq_msg *m);
/* "file:pos" / file + pos into m->pos */
void mq_set_pos(mq_msg *m, const char *file, uint64_t pos, const char *gtid);
/* when the change was made (m->ts_ms, m->ts) from a time some producers
 * write in seconds and others in milliseconds: below 10^11 it is seconds */
void mq_set_ts(mq_msg *m, uint64_t t);

/* ---- column types (coltype.c) ---- */
/* Set c's type from a MySQL column type text (information_schema
 * COLUMN_TYPE, canal's mysqlType): "int(10) unsigned", "decimal(30,10)",
 * "datetime(6)", "varbinary(16)", "enum('a','b')", "json"... 0 or -1 (err).
 * A character column's "character set NAME" at the end is kept in
 * c->cs_name (the values are UTF-8 already, c->cs stays CS_UTF8): a decoder
 * undoes by it a producer's misreading of that charset (maxwell.c). */
int mq_col_type(mq_msg *m, bl_column *c, const char *type, char *err, size_t errlen);
/* guessed types */
void mq_col_simple(bl_column *c, uint8_t type, bool is_unsigned); /* integers, FLOAT, DOUBLE, DATE, YEAR */
void mq_col_text(bl_column *c);          /* LONGTEXT */
void mq_col_bytes(bl_column *c);         /* LONGBLOB */
void mq_col_json(bl_column *c);          /* JSON as text */
void mq_col_temporal(bl_column *c, uint8_t type, unsigned fsp); /* DATETIME2 / TIMESTAMP2 / TIME2 */
void mq_col_decimal(bl_column *c, unsigned precision, unsigned scale);
void mq_col_bit(bl_column *c, unsigned bits);
int mq_col_labels(mq_msg *m, bl_column *c, uint8_t type, const char *const *labels,
                  const uint32_t *lens, uint32_t n);
/* mq_col_labels with the labels of a comma-separated list (NULL or "": none;
 * at most 1024 are read). */
int mq_col_labels_list(mq_msg *m, bl_column *c, uint8_t type, const char *list);
bool mq_col_is_text(const bl_column *c); /* character data (CHAR/VARCHAR/TEXT) */
bool mq_col_is_binary(const bl_column *c);

/* ---- value encoders (cell.c): binlog bytes appended to out ---- */
/* A value in MySQL's text form (what CAST(.. AS CHAR) gives, as canal and
 * Maxwell write it): integers, DECIMAL, FLOAT/DOUBLE, "2024-01-02",
 * "2024-01-02 03:04:05[.ffffff]" (or 'T'), "[-]838:59:59[.f]", YEAR, text,
 * ENUM label, SET labels "a,b", BIT as its integer, JSON text. TIMESTAMP
 * text is local time at tz_offset seconds east of UTC. */
int mq_enc_text(sbuf *out, const bl_column *c, const char *s, size_t n, int32_t tz_offset,
                char *err, size_t errlen);
int mq_enc_int(sbuf *out, const bl_column *c, bool neg, uint64_t mag, char *err, size_t errlen);
int mq_enc_decimal(sbuf *out, const bl_column *c, const char *s, size_t n, char *err, size_t errlen);
int mq_enc_bytes(sbuf *out, const bl_column *c, const uint8_t *p, size_t n, char *err, size_t errlen);
int mq_enc_date(sbuf *out, int y, unsigned mo, unsigned d);
int mq_enc_days(sbuf *out, int64_t days, char *err, size_t errlen); /* days since 1970-01-01 */
/* DATETIME2 from microseconds since 1970-01-01 00:00 (no zone) */
int mq_enc_datetime_us(sbuf *out, const bl_column *c, int64_t us, char *err, size_t errlen);
/* TIMESTAMP2 from UTC seconds + microseconds */
int mq_enc_timestamp(sbuf *out, const bl_column *c, int64_t secs, uint32_t usec, char *err,
                     size_t errlen);
/* TIME2 from signed microseconds */
int mq_enc_time_us(sbuf *out, const bl_column *c, int64_t us, char *err, size_t errlen);
int mq_enc_year(sbuf *out, int64_t y, char *err, size_t errlen);
int mq_enc_double(sbuf *out, const bl_column *c, double d); /* FLOAT or DOUBLE */
int mq_enc_bit(sbuf *out, const bl_column *c, uint64_t v, char *err, size_t errlen);
/* a decimal integer text: sign and magnitude; -1 when not one or too big */
int mq_parse_int(const char *s, size_t n, bool *neg, uint64_t *mag);
/* base64 (standard alphabet, padding optional) → bytes; -1 when invalid */
int mq_base64_decode(sbuf *out, const char *s, size_t n);
/* days since 1970-01-01 of a civil date */
int64_t mq_days_from_civil(int64_t y, unsigned m, unsigned d);

/* ---- Debezium's values by the connector's settings (debezium_value.c) ---- */
/* big-endian two's complement bytes → decimal text with scale digits; its
 * length, or -1 */
int mq_unscaled_text(const uint8_t *p, size_t n, int scale, char *out, size_t outsz);
/* A DECIMAL column's value v (a string or a JSON number) under
 * decimal.handling.mode mode (enum mq_dbz_decimal; 0: not stated, the value
 * alone decides when it can), scale of precise bytes (-1: the column's);
 * by_schema: the mode is the message's schema's, not a setting. 0, -1 with
 * err, or 1 with err: the value can be read two ways. */
int mq_dbz_decimal(sbuf *out, const bl_column *c, const struct cJSON *v, int mode, int scale,
                   bool by_schema, char *err, size_t errlen);
/* A binary column's text s under binary.handling.mode mode (enum
 * mq_dbz_binary; 0: not stated); 0, -1 or 1 as above. */
int mq_dbz_binary(sbuf *out, const bl_column *c, const char *s, int mode, char *err,
                  size_t errlen);

#endif
