/* mq_schema: the source's column types for the message decoders (src/mq):
 * mq_opts.lookup reads a table's columns from [source]'s information_schema
 * (COLUMN_TYPE, primary key, CHARACTER_SET_NAME; MariaDB's JSON columns found by their
 * json_valid() check, as the binlog reader finds them) and keeps them until
 * mq_schema_forget (a DDL message). Used by `kafka-tail` and by the Kafka
 * source of `run` (sync/sources/kafka_source.c). */
#ifndef SS_MQ_SCHEMA_H
#define SS_MQ_SCHEMA_H
#include "config.h"
#include "db.h"
#include "mq/mq.h"

struct mq_tabcols;
struct mq_schema {
    const struct ss_config *cfg; /* [source]: where the columns are read */
    MYSQL *conn;                 /* its own connection, made on first use */
    struct mq_tabcols *tables;
};

/* an mq_lookup_fn; ctx: a struct mq_schema */
int mq_schema_lookup(void *ctx, const char *db, const char *table, const mq_coldef **cols,
                     uint32_t *ncols, char *err, size_t errlen);
/* the tables read so far are read again when next needed */
void mq_schema_forget(struct mq_schema *s);
/* forget and close the connection */
void mq_schema_free(struct mq_schema *s);
#endif
