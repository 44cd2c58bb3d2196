/* dead_letters_api: the admin API's dead letters: list, one with its body,
 * replay, discard (web/dead_letters_api.c, docs/http-api.md). */
#ifndef SS_WEB_DEAD_LETTERS_API_H
#define SS_WEB_DEAD_LETTERS_API_H
#include <stddef.h>

#include "api.h"
#include "route.h"

void dead_letters_handle(const struct api_ctx *ctx, const struct route *rt, const char *body,
                         size_t len, struct api_resp *r);

#endif
