/* dialect: which engine and version answers at the configured address, and
 * what that means for the requests we send (search.h, struct search_dialect).
 *
 *   Elasticsearch 7.x  no mapping types in bulk lines (typeless API), "routing"
 *   Elasticsearch 8.x  the same; accepts compatible-with=8 media types
 *   Elasticsearch 9.x  the same as 8
 *   OpenSearch 1/2/3   the same as Elasticsearch 7 (forked from 7.10.2);
 *                      1.x in compatibility mode reports "7.10.2" with
 *                      distribution "opensearch" and is taken as 1.x
 *   Elasticsearch <= 6 refused: its bulk lines need _type
 *
 * External versioning (version_type=external) and painless update scripts
 * behave the same in all of them, so bulk bodies are the same; the golden
 * files in tests/fixtures/search/ pin that down per dialect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/jscan.h"
#include "search/search.h"

static void finish(struct search_dialect *d) {
    d->doc_type = d->engine == ENGINE_ELASTICSEARCH && d->major < 7;
    d->compat_header = d->engine == ENGINE_ELASTICSEARCH && d->major >= 8;
    d->routing_key = "routing";
    snprintf(d->name, sizeof d->name, "%s-%d",
             d->engine == ENGINE_OPENSEARCH ? "opensearch" : "elasticsearch", d->major);
}

int search_dialect_named(const char *name, struct search_dialect *d) {
    memset(d, 0, sizeof *d);
    const char *dash = strrchr(name, '-');
    if (!dash) return -1;
    size_t n = (size_t)(dash - name);
    if (n == 10 && !memcmp(name, "opensearch", 10))
        d->engine = ENGINE_OPENSEARCH;
    else if (n == 13 && !memcmp(name, "elasticsearch", 13))
        d->engine = ENGINE_ELASTICSEARCH;
    else
        return -1;
    d->major = atoi(dash + 1); /* "opensearch-2", or with a minor: "opensearch-2.19" */
    const char *dot = strchr(dash + 1, '.');
    d->minor = dot ? atoi(dot + 1) : 0;
    snprintf(d->number, sizeof d->number, "%d.%d.0", d->major, d->minor);
    finish(d);
    return 0;
}

int search_dialect_from_root(const char *json, size_t len, struct search_dialect *d, char *err,
                             size_t errlen) {
    memset(d, 0, sizeof *d);
    const char *p = json, *e = json + len;
    const char *num = NULL, *dist = NULL, *flavor = NULL, *tagline = NULL;
    size_t numn = 0, distn = 0, flavorn = 0, taglinen = 0;
    struct js_walk o, o2;
    const char *k;
    size_t kn;
    p = js_members(&o, p, e);
    while (js_member(&o, &p, &k, &kn)) {
        if (js_key_is(k, kn, "version") && *p == '{') {
            p = js_members(&o2, p, e);
            while (js_member(&o2, &p, &k, &kn)) {
                if (*p == '"' && js_key_is(k, kn, "number"))
                    p = js_str(p, e, &num, &numn);
                else if (*p == '"' && js_key_is(k, kn, "distribution"))
                    p = js_str(p, e, &dist, &distn);
                else if (*p == '"' && js_key_is(k, kn, "build_flavor"))
                    p = js_str(p, e, &flavor, &flavorn);
                else
                    p = js_skip(p, e);
            }
        } else if (*p == '"' && js_key_is(k, kn, "tagline")) {
            p = js_str(p, e, &tagline, &taglinen);
        } else {
            p = js_skip(p, e);
        }
    }
    if (!p || !num) {
        snprintf(err, errlen, "the engine's root response has no version.number: %.120s", json);
        return -1;
    }
    if (numn >= sizeof d->number) numn = sizeof d->number - 1;
    memcpy(d->number, num, numn);
    d->number[numn] = '\0';
    if (sscanf(d->number, "%d.%d.%d", &d->major, &d->minor, &d->patch) < 1) {
        snprintf(err, errlen, "cannot read the engine version \"%s\"", d->number);
        return -1;
    }
    bool is_os = (dist && distn == 10 && !memcmp(dist, "opensearch", 10)) ||
                 (tagline && taglinen >= 10 && memmem(tagline, taglinen, "OpenSearch", 10));
    (void)flavor;
    (void)flavorn;
    if (is_os) {
        d->engine = ENGINE_OPENSEARCH;
        /* compatibility mode of OpenSearch 1.x answers as 7.10.2 */
        if (d->major == 7) d->major = 1, d->minor = 0, d->patch = 0;
        if (d->major < 1 || d->major > 3) {
            snprintf(err, errlen, "OpenSearch %s is not supported (1.x, 2.x, 3.x are)", d->number);
            finish(d);
            return -1;
        }
    } else {
        d->engine = ENGINE_ELASTICSEARCH;
        if (d->major < 7 || d->major > 9) {
            snprintf(err, errlen, "Elasticsearch %s is not supported (7.x, 8.x, 9.x are)",
                     d->number);
            finish(d);
            return -1;
        }
    }
    finish(d);
    return 0;
}
