/* indices_api: the admin API's index configs and their builds
 * (docs/http-api.md: /api/v1/indices, /api/v1/indices/{alias}/reindex). */
#ifndef SS_WEB_INDICES_API_H
#define SS_WEB_INDICES_API_H
#include <stddef.h>

#include "api.h"
#include "route.h"

/* ROUTE_INDICES, ROUTE_REINDEX_GET, ROUTE_REINDEX_POST, ROUTE_REINDEX_RESET */
void indices_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                        size_t len, struct api_resp *r);

#endif
