/* metrics: the /metrics page (see metrics.c; names in docs/metrics.md). */
#ifndef SS_WEB_METRICS_H
#define SS_WEB_METRICS_H
#include <mysql.h>

#include "config.h"
#include "sbuf.h"

struct deliver;
struct reader_stats;

/* Everything into o. rs, meta and src may be NULL (a part left out:
 * meta_err/src_err say why, in the log). */
void metrics_render(const struct ss_config *cfg, struct deliver *d, struct reader_stats *rs,
                    MYSQL *meta, const char *meta_err, MYSQL *src, const char *src_err,
                    sbuf *o);

#endif
