/* topics_api: the admin API's Kafka topics (web/topics_api.c,
 * docs/http-api.md "Topics"): what `searchsync topics list|add|remove`
 * does, from the running daemon, with the saved offsets and the lag. */
#ifndef SS_WEB_TOPICS_API_H
#define SS_WEB_TOPICS_API_H
#include <stddef.h>

#include "api.h"
#include "route.h"

void topics_api_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                       size_t len, struct api_resp *r);

#endif
