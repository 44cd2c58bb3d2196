/* config: the INI configuration file, described by one table.
 *
 * Every key is a row of config_keys[] (config.c): section, name, type, bounds,
 * default, offset into struct ss_config and a one-line meaning. The same table
 * parses the file, validates values, fills defaults, reads secrets from the
 * environment, prints `searchsync config --list` (docs/configuration.md is
 * generated from it and checked by a test) and, later, feeds the admin API.
 * Errors name the file, the line and the key, and the caller exits 2. */
#ifndef SS_CONFIG_H
#define SS_CONFIG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_ERR_LEN 512

struct ss_config {
    char *path; /* the file it came from */

    struct {
        char *kind;      /* binlog|kafka: where the changes are read */
        char *name;      /* source name: keys checkpoints and leadership */
        char *mapping;   /* the mapping's name (NULL: name): config_mapping_name */
        char *host;
        int port;
        char *socket;
        char *user;
        char *password;  /* or env SEARCHSYNC_SOURCE_PASSWORD, or password_file */
        char *password_file;
        char *ssl_mode;  /* disabled|preferred|required|verify_ca|verify_identity */
        char *ssl_ca, *ssl_cert, *ssl_key;
        int server_id;   /* our replica server id */
        char *databases; /* comma list of databases to follow; empty = those in the mapping */
        char *start;     /* where a source with no checkpoint starts: now|beginning */
        char *on_purged; /* the checkpoint's binlog purged: stop|rebuild */
        char *versions;  /* auto|position|gtid (config_gtid_versions) */
        int heartbeat_ms;
        int group_transactions;
        int group_wait_ms; /* sync/sources/binlog_source.c, group_defer */
        int xa_hold_max_s; /* sync/pipeline/xa_prepared.h */
        int schema_settle_ms; /* sync/node/schema_watch.c */
        int connect_timeout_ms;
        int read_timeout_ms;
    } source;

    struct {             /* [source] kind = kafka */
        char *brokers;   /* bootstrap host:port list */
        char *topics;    /* comma list of topic names */
        char *topic_regex; /* topics matching this regex (librdkafka's POSIX ERE) */
        char *group;     /* consumer group id */
        char *format;    /* auto|canal-json|debezium|maxwell */
        char *canal_tz_offset; /* "+HH:MM": the zone of canal's TIMESTAMP text */
        /* the Debezium connector's settings messages without schemas do not
         * carry (NULL: not stated) */
        char *dbz_decimal; /* decimal.handling.mode: precise|string|double */
        char *dbz_time;    /* time.precision.mode: adaptive_time_microseconds|connect */
        char *dbz_binary;  /* binary.handling.mode: bytes|base64|base64-url-safe|hex */
        /* how the brokers are reached (src/kafka_conf.c sets them) */
        char *security_protocol; /* plaintext|ssl|sasl_plaintext|sasl_ssl */
        char *sasl_mechanism;    /* PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 */
        char *sasl_username;
        char *sasl_password;
        char *sasl_password_file;
        char *ssl_ca, *ssl_cert, *ssl_key; /* PEM files */
        char *client_properties; /* file of more librdkafka properties */
    } kafka;

    struct {
        char *host; /* metadata schema server; defaults to the source's */
        int port;
        char *socket;
        char *user;
        char *password; /* or env SEARCHSYNC_METADATA_PASSWORD, or password_file */
        char *password_file;
        char *ssl_mode; /* NULL: the source's ssl_* keys */
        char *ssl_ca, *ssl_cert, *ssl_key;
        char *database;
        int reload_interval_ms; /* how often `run` looks for mapping edits */
    } metadata;

    struct {
        char *urls;     /* comma list of engine base URLs */
        char *user;
        char *password; /* or env SEARCHSYNC_SEARCH_PASSWORD, or password_file */
        char *password_file;
        char *api_key;  /* or env SEARCHSYNC_SEARCH_API_KEY */
        char *bearer_token; /* or env SEARCHSYNC_SEARCH_BEARER_TOKEN */
        bool aws_sigv4;     /* sign requests (Amazon OpenSearch Service / Serverless) */
        char *aws_region, *aws_service;
        char *aws_access_key_id, *aws_secret_access_key, *aws_session_token;
        char *ca_file;
        char *client_cert;
        char *client_key;
        bool tls_verify;
        int timeout_ms;
        int connect_timeout_ms;
        int max_connections;
        bool compress;
    } search;

    struct {
        char *zookeeper; /* host:port list; empty = standalone */
        char *name;
        char *node_id;   /* default: hostname-pid */
        int session_timeout_ms;
    } cluster;

    struct {
        int workers;
        int helpers;
        int batch_min;
        int batch_max;
        int batch_max_bytes;
        int flush_interval_ms;
        int linger_ms;
        int linger_refresh_percent;
        int linger_refresh_batch;
        bool batch_to_refresh;
        int refresh_pairing_ms;
        int refresh_pairing_changes;
        bool group_commit;
        int high_watermark;
        int fuse_failures;
        int fuse_interval_ms;
        int fuse_reset_ms;
        char *purge_strategy; /* off|purge_one|purge_index|purge_all */
        int drain_timeout_ms;
        int retry_initial_ms;
        int retry_max_ms;
        int checkpoint_interval_ms;
        int idle_checkpoint_interval_ms;
        int max_attempts_5xx;
        int stats_window_ms;
        char *replay_schedule; /* "HH:MM" UTC or "every DUR": the daemon's replay of dead
                                * letters; NULL = off */
    } delivery;

    struct {
        int buckets;        /* jobs per reindex */
        int parallel_jobs;  /* jobs one daemon runs at once */
        int index_parallel_jobs; /* ... and across the sources of one index (0: parallel_jobs) */
        int page_size;      /* rows per page (one keyset query, one acknowledged batch) */
        int poll_interval_ms; /* how often queued reindexes are looked for */
        int max_rejected;   /* rejected documents before a reindex fails */
        int keep_runs;      /* reindex runs kept per index config (bookkeeping) */
        int gc_deletes_s;   /* a version being built keeps deletes' versions this long */
    } reindex;

    struct {
        char *schedule;     /* "HH:MM" UTC or "every DUR": the daemon's delayed run; NULL = off */
        int buckets;        /* jobs per index config (delayed-run --buckets) */
        int page;           /* ids per page and per change set (--page) */
        int max_attempts;   /* runs a failing snapshot is tried in (--max-attempts) */
    } delayed;

    struct {
        char *schedule;     /* "HH:MM" UTC: the daemon's daily window check; NULL = off */
        char *since;        /* its window ("25h"), or "all" for the whole index */
        bool repair;        /* it repairs what it finds */
        int settle_s;       /* as `check --settle` */
    } check;

    struct {
        char *listen;      /* host:port; default 127.0.0.1:8089 */
        char *dict_listen; /* optional separate listener for /dict/ files */
        char *token;       /* or env SEARCHSYNC_ADMIN_TOKEN; required to serve */
        char *allowed_hosts;
        char *trusted_proxies; /* comma list of proxy addresses (X-Forwarded-For) */
        int session_ttl_s;
        char *sources_dir; /* where `source add` writes NAME.ini (sync/ops/ops_sources.h) */
    } admin;

    struct {
        char *level;
        char *format; /* text|json */
        char *file;   /* empty = stderr, "syslog", or a path */
    } log;
};

enum cfg_type { CFG_STR, CFG_INT, CFG_BOOL, CFG_ENUM };

struct config_key {
    const char *section;
    const char *name;
    enum cfg_type type;
    size_t offset;
    const char *def;     /* default as text; NULL = none (empty) */
    long min, max;       /* CFG_INT bounds */
    const char *choices; /* CFG_ENUM: "a|b|c" */
    const char *env;     /* environment variable that overrides (secrets) */
    bool required;
    bool secret;         /* never printed */
    const char *doc;
};

extern const struct config_key config_keys[];
extern const size_t config_nkeys;

/* Fill defaults only (no file). */
void config_defaults(struct ss_config *c);
/* Load and validate a file. Returns 0, or -1 with err set ("FILE:LINE: ..."). */
int config_load(struct ss_config *c, const char *path, char *err, size_t errlen);
/* Parse from a string (tests); name is used in messages. */
int config_load_string(struct ss_config *c, const char *name, const char *text, char *err,
                       size_t errlen);
void config_free(struct ss_config *c);
/* Do a and b hold the same value for key k? (a reload's comparison) */
bool config_key_equal(const struct ss_config *a, const struct ss_config *b,
                      const struct config_key *k);
/* Markdown table of every key (docs/configuration.md body). */

void config_print_reference(FILE *out);

/* "90", "90s", "15m", "24h", "7d" → seconds; -1 when malformed (or beyond
 * 400 days) */
long config_parse_duration(const char *s);
/* "HH:MM" → minutes after midnight; -1 when malformed */
int config_parse_hhmm(const char *s);
/* "+HH:MM" / "-HH:MM" / "UTC" → seconds east of UTC; -1 when malformed
 * (*secs untouched) */
int config_parse_tz_offset(const char *s, int32_t *secs);
/* [source] kind = kafka */
bool config_kafka_source(const struct ss_config *c);
/* [source] versions = gtid (auto and position: binlog positions) */
bool config_gtid_versions(const struct ss_config *c);
/* The name this source's mapping is stored under (index_configs.source):
 * [source] mapping, else [source] name. Sources with one mapping share its
 * index configs (docs/cluster.md, "Several sources, one index"). */
const char *config_mapping_name(const struct ss_config *c);

#endif
