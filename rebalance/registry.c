/* registry: the nodes of a cluster (see registry.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "registry.h"

static void node_path(char *out, size_t n, const char *cluster, const char *node_id) {
    snprintf(out, n, "/searchsync/%s/nodes/%s", cluster, node_id);
}

int registry_register(struct zk *z, const char *cluster, const char *node_id, const char *json,
                      char *err, size_t errlen) {
    char dir[600], path[900];
    snprintf(dir, sizeof dir, "/searchsync/%s/nodes", cluster);
    if (zk_ensure_path(z, dir, err, errlen) < 0) return -1;
    node_path(path, sizeof path, cluster, node_id);
    int rc = zoo_create(zk_handle(z), path, json, (int)strlen(json), &ZOO_OPEN_ACL_UNSAFE,
                        ZOO_EPHEMERAL, NULL, 0);
    if (rc == ZNODEEXISTS) { /* ours from a create that looked lost, or a namesake's */
        struct Stat st;
        if (zoo_exists(zk_handle(z), path, 0, &st) == ZOK &&
            st.ephemeralOwner != zoo_client_id(zk_handle(z))->client_id)
            return errf(err, errlen, "node id %s is already registered in cluster %s by a "
                        "running node: give each node its own [cluster] node_id", node_id,
                        cluster);
        rc = zoo_set(zk_handle(z), path, json, (int)strlen(json), -1);
    }
    if (rc != ZOK)
        return errf(err, errlen, "ZooKeeper: registering %s: %s", path, zerror(rc));
    return 0;
}

int registry_update(struct zk *z, const char *cluster, const char *node_id, const char *json,
                    char *err, size_t errlen) {
    char path[900];
    node_path(path, sizeof path, cluster, node_id);
    int rc = zoo_set(zk_handle(z), path, json, (int)strlen(json), -1);
    if (rc != ZOK) return errf(err, errlen, "ZooKeeper: updating %s: %s", path, zerror(rc));
    return 0;
}

int registry_list(struct zk *z, const char *cluster, sbuf *out, char *err, size_t errlen) {
    char dir[600];
    snprintf(dir, sizeof dir, "/searchsync/%s/nodes", cluster);
    struct String_vector kids = {0};
    int rc = zoo_get_children(zk_handle(z), dir, 0, &kids);
    if (rc == ZNONODE) {
        sbuf_adds(out, "[]");
        return 0;
    }
    if (rc != ZOK) return errf(err, errlen, "ZooKeeper: listing %s: %s", dir, zerror(rc));
    jsonw w;
    jw_init(&w, out);
    jw_arr_open(&w);
    char *buf = xcalloc(1, 1 << 20);
    for (int i = 0; i < kids.count; i++) {
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, kids.data[i]);
        int len = (1 << 20) - 1;
        struct Stat st;
        if (zoo_get(zk_handle(z), path, 0, buf, &len, &st) != ZOK) continue; /* gone meanwhile */
        jw_obj_open(&w);
        jw_key(&w, "node");
        jw_str(&w, kids.data[i]);
        jw_key(&w, "entity");
        if (len > 0 && buf[0] == '{') jw_raw(&w, buf, (size_t)len);
        else jw_null(&w);
        jw_obj_close(&w);
    }
    free(buf);
    jw_arr_close(&w);
    deallocate_String_vector(&kids);
    return 0;
}
