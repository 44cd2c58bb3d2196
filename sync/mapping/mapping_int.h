/* mapping_int: what the files of the mapping model share among themselves
 * (mapping.c, mapping_types.c, mapping_validate.c) and nobody else. */
#ifndef SS_MAPPING_INT_H
#define SS_MAPPING_INT_H
#include <stdbool.h>
#include <stddef.h>

#include "sync/mapping/mapping.h"

/* the column named name among cols[0..n), NULL when none */
const struct mp_column *mp_find_col(const struct mp_column *cols, size_t n, const char *name);
/* an engine type that is analysed text (text, search_as_you_type) */
bool mp_is_text_type(const char *t);
/* the same MySQL column type, integer display widths and case aside
 * (MariaDB writes "int(11)", MySQL 8 "int") */
bool mp_same_mysql_type(const char *a, const char *b);

#endif
