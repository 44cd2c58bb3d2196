/* table_ops_api: resync of ids and delete-all of an index config, and the
 * sync log, through the admin API (web/table_ops_api.c). */
#ifndef SS_WEB_TABLE_OPS_API_H
#define SS_WEB_TABLE_OPS_API_H
#include <stddef.h>

#include "api.h"
#include "route.h"

void table_ops_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                      size_t len, struct api_resp *r);

#endif
