/* ui_assets: lookup and responses for the embedded UI files (see ui_assets.h). */
#include "ui_assets.h"

#include <string.h>

#include "api.h"

const struct ui_asset *ui_asset_find(const char *path) {
    if (!path) return NULL;
    for (int i = 0; i < ui_nassets; i++)
        if (!strcmp(ui_assets[i].path, path)) return &ui_assets[i];
    return NULL;
}

/* does an If-None-Match list ("a", W/"b", or *) name etag? */
static int etag_listed(const char *list, const char *etag) {
    size_t n = strlen(etag);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (*p == '*') return 1;
        if (!strncmp(p, "W/", 2)) p += 2;
        if (!strncmp(p, etag, n) && (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == '\t'))
            return 1;
        p = strchr(p, ',');
    }
    return 0;
}

void ui_asset_serve(const char *path, const char *if_none_match, struct api_resp *r) {
    const struct ui_asset *a = ui_asset_find(path);
    if (!a) {
        api_error(r, 404, "no such file of the web UI",
                  "open / for the UI; its files are under /ui/");
        return;
    }
    r->content_type = a->content_type;
    sbuf_printf(&r->headers, "ETag: %s\nCache-Control: private, no-cache\n", a->etag);
    if (if_none_match && etag_listed(if_none_match, a->etag)) {
        r->status = 304;
        return;
    }
    sbuf_add(&r->body, a->data, a->len);
    r->status = 200;
}
