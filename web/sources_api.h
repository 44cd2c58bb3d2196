/* sources_api: the sources of the metadata schema through the admin API:
 * listed, added, edited, removed (web/sources_api.c). */
#ifndef SS_WEB_SOURCES_API_H
#define SS_WEB_SOURCES_API_H
#include <stddef.h>

#include "api.h"
#include "route.h"

void sources_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                        size_t len, struct api_resp *r);

#endif
