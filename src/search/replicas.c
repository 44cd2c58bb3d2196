/* replicas: the default number_of_replicas from the engine's data nodes
 * (replicas.h). */
#include "search/replicas.h"

#include <stdio.h>
#include <stdlib.h>

#include "deliver/deliver.h"
#include "json_exact.h"
#include "sbuf.h"
#include "search/search.h"

int replicas_for_nodes(long data_nodes) {
    return data_nodes >= 2 ? 1 : 0;
}

int search_default_replicas(struct search_conn *k, char *err, size_t errlen) {
    struct search_resp r;
    search_resp_init(&r);
    int rc = -1;
    if (search_request(k, "GET", "/_cluster/health", NULL, NULL, 0, &r) != 0) {
        errf(err, errlen, "engine: GET /_cluster/health: %s", r.err);
    } else if (r.status != 200) {
        errf(err, errlen, "engine: GET /_cluster/health answered %ld: %.200s", r.status,
             r.body.data ? r.body.data : "");
    } else {
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "number_of_data_nodes");
        long nodes = -1;
        if (cJSON_IsRaw(n) && n->valuestring) nodes = strtol(n->valuestring, NULL, 10);
        else if (cJSON_IsNumber(n)) nodes = (long)n->valuedouble;
        if (nodes >= 0) rc = replicas_for_nodes(nodes);
        else errf(err, errlen, "engine: GET /_cluster/health has no number_of_data_nodes");
        cJSON_Delete(j);
    }
    search_resp_free(&r);
    return rc;
}

int config_default_replicas(const struct ss_config *cfg, char *err, size_t errlen) {
    struct search_opts so;
    deliver_search_opts(&so, cfg);
    struct search_client *sc = search_client_new(&so, err, errlen);
    struct search_conn *k = sc ? search_conn_new(sc) : NULL;
    int rc = k ? search_default_replicas(k, err, errlen) : -1;
    search_conn_free(k);
    search_client_free(sc);
    return rc;
}
