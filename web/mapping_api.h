/* mapping_api: the mapping (export, plan, apply) and the source's tables
 * (list, a generated mapping) through the admin API (web/mapping_api.c,
 * docs/http-api.md "Mapping"). */
#ifndef SS_WEB_MAPPING_API_H
#define SS_WEB_MAPPING_API_H
#include <stddef.h>

#include "api.h"
#include "route.h"

void mapping_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                        size_t len, struct api_resp *r);

#endif
