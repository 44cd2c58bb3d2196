/* json_exact: parse JSON text into a cJSON tree without rounding numbers.
 *
 * cJSON keeps numbers as doubles, so 18446744073709551615 or a DECIMAL with
 * 30 digits would come back changed. This parser builds the same cJSON tree
 * but stores every number as a cJSON_Raw item holding its exact text, which
 * cJSON_Print* writes back verbatim. Use it wherever a JSON document is read,
 * edited and written again (partial JSON updates, engine documents compared
 * with MySQL). Strings are unescaped (\uXXXX with surrogate pairs to UTF-8). */
#ifndef SS_JSON_EXACT_H
#define SS_JSON_EXACT_H
#include <stddef.h>

#include <cjson/cJSON.h>

/* NULL on malformed input (or nesting deeper than 512). */
cJSON *json_exact_parse(const char *s, size_t n);
/* The same; on malformed input *errpos is the offset where parsing stopped. */
cJSON *json_exact_parse_at(const char *s, size_t n, size_t *errpos);
/* The same, but a string may hold \u0000 (a NUL byte), as change messages
 * values do (canal writes a binary column's bytes as characters, 0x00 as
 * \u0000): such a string item's valuestring holds all of its bytes and
 * json_exact_strlen gives their count. Read these trees, don't copy them:
 * cJSON_Duplicate, cJSON_Print and friends stop at the first NUL. */
cJSON *json_exact_parse_nul(const char *s, size_t n, size_t *errpos);
/* The byte count of a string (or raw) item's text: with NUL bytes in it
 * (json_exact_parse_nul) all of them, else strlen. 0 for NULL. */
size_t json_exact_strlen(const cJSON *j);
/* A request body that must be one JSON object: the tree (cJSON_Delete it),
 * or NULL when it is empty, malformed or not an object, with err saying
 * "the body must be a JSON object" and then example (": {...}", " such as
 * {...}"). */
cJSON *json_exact_object(const char *body, size_t len, const char *example, char *err,
                         size_t errlen);

#endif
