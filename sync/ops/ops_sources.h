/* ops_sources: the sources of the metadata schema, listed, added, edited and
 * removed at run time (docs/cluster.md, "Adding a source"), as operations
 * (sync/ops/ops.h) that `searchsync source` and /api/v1/sources both call.
 *
 * A source is one `searchsync run` of its own (docs/cluster.md, "One process
 * per source"). Adding one checks the server first (ops_source_check.c),
 * records it in the registry (the sources table; never its password), and
 * writes its configuration NAME.ini and its password NAME.password (both
 * mode 0600) into the sources directory ([admin] sources_dir), derived from
 * the configuration of the process that adds it (ops_source_ini.c): the same
 * metadata schema, engine and mapping. What starts its process is the
 * machine's: systemd's path unit searchsync-sources.path (packaging/), or the
 * command the outcome names. */
#ifndef SS_OPS_SOURCES_H
#define SS_OPS_SOURCES_H
#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"
#include "sync/ops/ops.h"

/* what add and edit take; for edit a NULL (or 0) member keeps its value */
struct source_spec {
    const char *name;
    const char *host;
    int port;            /* 0: 3306 (add) */
    const char *user;
    const char *password; /* never logged, stored or answered */
    const char *ssl_mode; /* disabled|preferred|required|verify_ca|verify_identity */
    const char *ssl_ca;
    int server_id;        /* this source's replica server id; 0: chosen (add) */
    const char *admin_listen; /* "none", or host:port; NULL: the next free port (add) */
    /* set by edit when the server and the replica id stay: the source's own
     * daemon may be connected with that id, which is then not "taken" */
    bool own_replica;
};

/* one source as the metadata schema knows it */
struct source_info {
    char *name;
    bool registered;     /* added with `source add` (host, port... known) */
    char *mapping, *host, *user, *ssl_mode, *config_path, *admin_listen, *updated_at;
    unsigned port, server_id;
    char *reader_node;   /* the node that says it reads it (node_states), NULL: none */
    int reader;          /* 1 a daemon reads it, 0 none, -1 not known */
    int source_up;       /* 1 its reader reaches its server, 0 not, -1 not known */
    char *source_error;  /* ... why not */
    char *lag_s;         /* its reader's lag in seconds (text), NULL: not known */
    char *checkpoint, *checkpoint_age_s;
    char *index_configs; /* comma list of the aliases it feeds ("" none) */
};

struct source_list {
    struct source_info *v;
    size_t n;
};

/* what add or edit did, for the front end to say */
struct source_done {
    char name[65], host[256], user[256]; /* its values now (edit: merged) */
    int port;
    char ini[1100];       /* the configuration written */
    char admin_listen[300]; /* its [admin] listen, "" none */
    unsigned server_id;
    bool systemd;         /* this machine runs systemd (the path unit may start it) */
    char start[1600];     /* the command that starts (add) or restarts (edit) it by hand */
    sbuf notes;           /* lines worth saying (no index config lists it yet...) */
    /* on failure: the value at fault ("host", "port", "user", "password",
     * "ssl_mode", "ssl_ca", "server_id", "admin_listen", "name"), "" when it
     * is the server's (its binlog, grants, tables): the form shows it there */
    char field[32];
};
void source_done_free(struct source_done *d);

/* Every source the metadata schema knows: the registry's, the checkpoints',
 * the node states' and the sources the index configs list. */
enum ops_status ops_source_list(const struct ops_env *env, struct source_list *out,
                                struct ops_err *e);
void source_list_free(struct source_list *l);
/* the list as a JSON array (`source list --json`, GET /api/v1/sources): no
 * password, ever (none is read) */
struct jsonw;
void sources_json_array(const struct source_list *l, struct jsonw *w);

/* Checked on its server (ops_source_check), recorded and written. OPS_INVALID:
 * a value, or the server does not fit (e.msg names what and what to do);
 * OPS_REFUSED: a source of that name exists; OPS_DOWN at OPS_AT_SOURCE: the
 * server was not reached; OPS_FAILED: the files or the registry. */
enum ops_status ops_source_add(const struct ops_env *env, const struct source_spec *s,
                               struct source_done *d, struct ops_err *e);
/* The same checks with the values changed; nothing written when they fail.
 * OPS_UNKNOWN: no source of that name was added with `source add`. */
enum ops_status ops_source_edit(const struct ops_env *env, const struct source_spec *s,
                                struct source_done *d, struct ops_err *e);
/* Its registry row, checkpoint and files removed. OPS_REFUSED while an index
 * config lists it, unless force; *fed: those index configs (comma list). */
enum ops_status ops_source_remove(const struct ops_env *env, const char *name, bool force,
                                  sbuf *fed, struct ops_err *e);

/* ---------- between the files of this family ---------- */

/* ops_source_check.c: the server of s fits a source of mapping `mapping`
 * (binlog on, ROW, FULL row image, a server id, the grants, the mapping's
 * tables): OPS_OK, else OPS_INVALID / OPS_DOWN with e said (d->field: the
 * value at fault). *server_id is the replica server id to use (s's, or one
 * chosen unlike the server's); d->notes takes what is worth saying. */
enum ops_status ops_source_check(const struct ops_env *env, MYSQL *meta, const char *mapping,
                                 const struct source_spec *s, unsigned *server_id,
                                 struct source_done *d, struct ops_err *e);

/* ops_source_ini.c: the configuration of source s derived from env->cfg,
 * written as DIR/NAME.ini and DIR/NAME.password (0600, each by a rename so a
 * watcher never reads half a file). listen: its [admin] listen ("" none). */
int ops_source_ini_write(const struct ss_config *cfg, const struct source_spec *s,
                         const char *mapping, unsigned server_id, const char *listen,
                         char *path, size_t pathlen, char *err, size_t errlen);
/* The [admin] listen of a new source: the first port after cfg's own that
 * no registered source has and that can be bound now; "" when cfg has none. */
void ops_source_pick_listen(const struct ss_config *cfg, MYSQL *meta, char *out, size_t n);
/* the sources directory: [admin] sources_dir */
const char *ops_sources_dir(const struct ss_config *cfg);
/* Remove DIR/NAME.ini and DIR/NAME.password; 0, or -1 (err). */
int ops_source_files_remove(const struct ss_config *cfg, const char *name, char *err,
                            size_t errlen);

#endif
