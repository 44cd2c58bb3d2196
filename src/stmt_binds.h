/* stmt_binds: the result buffers of a prepared statement, one MYSQL_BIND per
 * column with its buffer, length, NULL and error flags.
 *
 * Every reader of prepared-statement rows (the document builder, the admin
 * API's queries) needs the same five parallel arrays set up and freed
 * together; only the buffer type and size of a column differ. */
#ifndef SS_STMT_BINDS_H
#define SS_STMT_BINDS_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

struct stmt_binds {
    unsigned n;
    MYSQL_BIND *bind;
    unsigned long *lens;
    my_bool *nulls, *errs;
    void **bufs;
};

/* n columns, all unset; stmt_binds_set gives each its type and buffer */
void stmt_binds_init(struct stmt_binds *b, unsigned n);
/* column i read as type into a zeroed buffer of size bytes */
void stmt_binds_set(struct stmt_binds *b, unsigned i, enum enum_field_types type, size_t size,
                    bool is_unsigned);
void stmt_binds_free(struct stmt_binds *b); /* the buffers too; NULL-safe */

#endif
