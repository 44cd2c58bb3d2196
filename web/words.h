/* words: the dynamic words of the IK analyzer (docs/http-api.md, "Dynamic
 * words" and "Dictionary files").
 *
 * A word (table dynamic_words) is an extension word (kind ext) or a stop
 * word (kind stop), in state init or published. It can be edited while in
 * init only; publishing is one way; it can be deleted in either state.
 * /dict/ext.txt and /dict/stop.txt list the published words of a kind, one
 * per line, for the analyzer's remote dictionary: public, read-only, with a
 * Last-Modified (dict_changes.changed_at, moved in the same transaction as
 * every publish and every delete of a published word, migration 0006) and a
 * strong ETag (a hash of the body), answering If-None-Match and
 * If-Modified-Since with 304.
 *
 * A word is 1..255 characters of valid UTF-8 without control characters
 * (a line break would add a word to the dictionary file) and without
 * leading or trailing white space (the analyzer trims lines): checked
 * here, before the operations of sync/ops/ops_words.h store it. */
#ifndef SS_WEB_WORDS_H
#define SS_WEB_WORDS_H
#include <stdbool.h>
#include <stddef.h>

#include "api.h"
#include "route.h"

/* ROUTE_WORDS_LIST ... ROUTE_WORD_PUBLISH */
void words_handle(const struct api_ctx *ctx, const struct route *rt, const char *body, size_t len,
                  struct api_resp *r);
/* ROUTE_DICT: file "ext" or "stop" */
void dict_handle(const struct api_ctx *ctx, const char *file, struct api_resp *r);

/* The body of POST /api/v1/words (create: word and kind required) or PUT
 * /api/v1/words/{id} (either or both). *word and *kind are NULL when
 * absent; *word is malloc'd. -1 with err and *field naming the culprit
 * ("" for the body itself). */
int words_parse_body(const char *body, size_t len, bool create, char **word, const char **kind,
                     const char **field, char *err, size_t errlen);
/* NULL when w[0..n) is a valid word, else why not */
const char *words_invalid(const char *w, size_t n);

#endif
