/* route: which endpoint of the admin HTTP server a request names, and the
 * parsing of request bodies; pure functions (tests/unit/test_web.c).
 *
 *   GET  /api/v1/status                          ROUTE_STATUS
 *   GET  /api/v1/indices                         ROUTE_INDICES
 *   GET  /api/v1/nodes                           ROUTE_NODES
 *   POST /api/v1/rebalance                       ROUTE_REBALANCE (a cluster's jobs)
 *   GET  /api/v1/live                            ROUTE_LIVE (this daemon's live figures)
 *   GET  /api/v1/checks                          ROUTE_CHECKS (the last 50)
 *   GET  /api/v1/delayed/runs                    ROUTE_DELAYED_RUNS (the last 50)
 *   GET  /api/v1/delayed/snapshots[?status=S]    ROUTE_DELAYED_SNAPSHOTS
 *   GET  /api/v1/delayed/relation-tops           ROUTE_RELATION_TOPS
 *   GET  /api/v1/indices/{alias}/checks          ROUTE_CHECKS (that index's)
 *   GET  /api/v1/indices/{alias}/reindex         ROUTE_REINDEX_GET (progress)
 *   POST /api/v1/indices/{alias}/reindex         ROUTE_REINDEX_POST (queue a build)
 *   POST /api/v1/indices/{alias}/reindex/reset   ROUTE_REINDEX_RESET
 *   GET  /metrics                                ROUTE_METRICS
 *   POST /api/v1/login                           ROUTE_LOGIN (public)
 *   POST /api/v1/logout                          ROUTE_LOGOUT
 *   GET  /api/v1/session                         ROUTE_SESSION
 *   GET  /api/v1/words                           ROUTE_WORDS_LIST
 *   POST /api/v1/words                           ROUTE_WORD_CREATE
 *   GET  /api/v1/words/{id}                      ROUTE_WORD_GET
 *   PUT  /api/v1/words/{id}                      ROUTE_WORD_UPDATE
 *   DELETE /api/v1/words/{id}                    ROUTE_WORD_DELETE
 *   POST /api/v1/words/{id}/publish              ROUTE_WORD_PUBLISH
 *   GET  /dict/ext.txt, /dict/stop.txt           ROUTE_DICT (public; also on
 *                                                [admin] dict_listen)
 *   GET  /login, /login.js                       ROUTE_LOGIN_PAGE (public)
 *   GET  /api/v1/dead-letters                    ROUTE_DEAD_LETTERS_LIST
 *   POST /api/v1/dead-letters/replay             ROUTE_DEAD_LETTERS_REPLAY
 *   GET  /api/v1/dead-letters/{id}               ROUTE_DEAD_LETTER_GET
 *   DELETE /api/v1/dead-letters/{id}             ROUTE_DEAD_LETTER_DELETE
 *   GET  /api/v1/mapping                         ROUTE_MAPPING_GET (the stored file)
 *   POST /api/v1/mapping/plan                    ROUTE_MAPPING_PLAN
 *   POST /api/v1/mapping/apply                   ROUTE_MAPPING_APPLY
 *   GET  /api/v1/source/tables                   ROUTE_SOURCE_TABLES
 *   GET  /api/v1/source/tables/{db}/{table}/mapping  ROUTE_SOURCE_TABLE_MAPPING
 *        ({db} and {table}: 1..64 bytes of [A-Za-z0-9_$])
 *   POST /api/v1/indices/{alias}/resync          ROUTE_RESYNC ({"ids":[...]})
 *   POST /api/v1/indices/{alias}/delete-all      ROUTE_DELETE_ALL ({"confirm":alias})
 *   GET  /api/v1/sync-log                        ROUTE_SYNC_LOG
 *   GET  /api/v1/indices/{alias}/runs            ROUTE_RUNS (its builds)
 *   GET  /api/v1/topics                          ROUTE_TOPICS_LIST (a Kafka source's)
 *   POST /api/v1/topics                          ROUTE_TOPIC_ADD ({"topic":..,"format":..})
 *   DELETE /api/v1/topics/{topic}                ROUTE_TOPIC_DELETE ({topic} in alias: the
 *                                                characters of an {alias})
 *   GET  /api/v1/sources                         ROUTE_SOURCES_LIST (every source known)
 *   POST /api/v1/sources                         ROUTE_SOURCE_ADD (web/sources_api.c)
 *   PUT  /api/v1/sources/{name}                  ROUTE_SOURCE_EDIT ({name} in alias: the
 *   DELETE /api/v1/sources/{name}                ROUTE_SOURCE_REMOVE  characters of an {alias})
 *   GET  /, /ui/...                              ROUTE_UI (the web UI's files,
 *                                                web/ui_assets.h)
 *
 * HEAD is accepted wherever GET is; POST, PUT and DELETE are mutating. A known path with another method is
 * ROUTE_BAD_METHOD (405, `allow` says which methods); anything else is
 * ROUTE_NOT_FOUND. {alias} is 1..255 bytes of [A-Za-z0-9_.-] (the characters
 * an engine index name and our <alias>_v<N> scheme can hold); others are
 * ROUTE_NOT_FOUND before any lookup; so is a word {id} that is not 1..18
 * digits. */
#ifndef SS_WEB_ROUTE_H
#define SS_WEB_ROUTE_H
#include <stdbool.h>
#include <stddef.h>

enum route_id {
    ROUTE_NOT_FOUND = 0,
    ROUTE_BAD_METHOD,
    ROUTE_STATUS,
    ROUTE_INDICES,
    ROUTE_REINDEX_GET,
    ROUTE_REINDEX_POST,
    ROUTE_REINDEX_RESET,
    ROUTE_METRICS,
    ROUTE_NODES,
    ROUTE_REBALANCE,
    ROUTE_LIVE,
    ROUTE_CHECKS,
    ROUTE_DELAYED_RUNS,
    ROUTE_DELAYED_SNAPSHOTS,
    ROUTE_LOGIN,
    ROUTE_LOGOUT,
    ROUTE_SESSION,
    ROUTE_WORDS_LIST,
    ROUTE_WORD_CREATE,
    ROUTE_WORD_GET,
    ROUTE_WORD_UPDATE,
    ROUTE_WORD_DELETE,
    ROUTE_WORD_PUBLISH,
    ROUTE_DICT,
    ROUTE_LOGIN_PAGE,
    ROUTE_DEAD_LETTERS_LIST,
    ROUTE_DEAD_LETTER_GET,
    ROUTE_DEAD_LETTER_DELETE,
    ROUTE_DEAD_LETTERS_REPLAY,
    ROUTE_MAPPING_GET,
    ROUTE_MAPPING_PLAN,
    ROUTE_MAPPING_APPLY,
    ROUTE_SOURCE_TABLES,
    ROUTE_SOURCE_TABLE_MAPPING,
    ROUTE_RESYNC,
    ROUTE_DELETE_ALL,
    ROUTE_SYNC_LOG,
    ROUTE_RUNS,
    ROUTE_RELATION_TOPS,
    ROUTE_TOPICS_LIST,
    ROUTE_TOPIC_ADD,
    ROUTE_TOPIC_DELETE,
    ROUTE_SOURCES_LIST,
    ROUTE_SOURCE_ADD,
    ROUTE_SOURCE_EDIT,
    ROUTE_SOURCE_REMOVE,
    ROUTE_UI,
};

#define ROUTE_ALIAS_MAX 255

struct route {
    enum route_id id;
    char alias[ROUTE_ALIAS_MAX + 1]; /* "" when the path names none */
    char word_id[20];                /* a word's id; "" when none */
    char row_id[20];                 /* a dead letter's id; "" when none */
    char db[65], table[65];          /* a source table (ROUTE_SOURCE_TABLE_MAPPING) */
    const char *file;                /* ROUTE_DICT: "ext" or "stop"; ROUTE_LOGIN_PAGE:
                                        "html" or "js" */
    const char *allow;               /* ROUTE_BAD_METHOD: "GET, HEAD", "POST", ... */
    bool mutating;                   /* POST, PUT, DELETE: CSRF rules apply */
    bool public;                     /* no token or session needed */
};

void route_match(const char *method, const char *path, struct route *out);
bool route_alias_valid(const char *s, size_t n);

/* The body of POST .../reindex: empty, or a JSON object with optional
 * "buckets" (integer 1..4096) and "by_mod" (boolean); any other member is an
 * error. Fills *buckets (0 = [reindex] buckets) and *by_mod. Returns 0, or -1
 * with err naming the field and *field set to it ("" for the body itself). */
int route_parse_reindex_body(const char *body, size_t len, int *buckets, bool *by_mod,
                             const char **field, char *err, size_t errlen);

#endif
