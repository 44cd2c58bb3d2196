/* metrics: the /metrics page (see metrics.c; names in docs/metrics.md). */
#ifndef SS_WEB_METRICS_H
#define SS_WEB_METRICS_H
#include <mysql.h>

#include "config.h"
#include "sbuf.h"

struct api_ctx;
struct api_resp;
struct deliver;
struct reader_stats;

/* GET /metrics: the page of this process (503 while delivery is not
 * running yet); its own connections to the metadata and the source. */
void metrics_handle(const struct api_ctx *ctx, struct api_resp *r);

/* Everything into o, every sample labelled with the source. rs, meta and
 * src may be NULL (a part left out: meta_err/src_err say why, in the log). */
void metrics_render(const struct ss_config *cfg, struct deliver *d, struct reader_stats *rs,
                    MYSQL *meta, const char *meta_err, MYSQL *src, const char *src_err,
                    sbuf *o);

/* The exposition text[0..len) into out with key="value" added to every
 * sample that has no label key yet (comments and blank lines as they are). */
void metrics_label_all(const char *text, size_t len, const char *key, const char *value,
                       sbuf *out);

#endif
