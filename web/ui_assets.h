/* ui_assets: the admin web UI's files (web/ui/: HTML, CSS, ES modules),
 * compiled into the binary by web/ui/embed.sh (web/ui_files.c, generated)
 * and served by the admin server at / and /ui/... behind the same session
 * or token checks as the API (docs/http-api.md, "The web UI").
 *
 * Responses carry the file's Content-Type, an ETag of its bytes and
 * Cache-Control "private, no-cache": the browser keeps a copy and asks
 * again each time (a 304 without a body when it has not changed), so a new
 * binary's files are used at once. */
#ifndef SS_WEB_UI_ASSETS_H
#define SS_WEB_UI_ASSETS_H
#include <stddef.h>

struct api_resp;

struct ui_asset {
    const char *path;         /* "/" or "/ui/..." */
    const char *content_type;
    const char *etag;         /* quoted */
    const unsigned char *data;
    size_t len;
};

extern const struct ui_asset ui_assets[];
extern const int ui_nassets;

/* the file served at path (exact match), or NULL */
const struct ui_asset *ui_asset_find(const char *path);

/* Fill r for GET/HEAD of path: 200 with the file, 304 when if_none_match
 * (the request's If-None-Match, may be NULL) names its ETag, or a JSON 404. */
void ui_asset_serve(const char *path, const char *if_none_match, struct api_resp *r);

#endif
