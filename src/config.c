/* config: the INI configuration file (see config.h for the design).
 *
 * Format: `[section]` headers, `key = value` lines, `#` or `;` comments on
 * their own line, values may be wrapped in double quotes (then `\"`, `\\`
 * and `\n` escapes apply and `#` is literal). No packaged INI library in
 * Debian validates against a schema and reports line numbers the way we
 * need, and the format is small, so the parser is ours and tested
 * (tests/unit/test_config.c). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sbuf.h"

#define O(field) offsetof(struct ss_config, field)
#define S(sec, name, field, def, env, req, secret, doc) \
    {sec, name, CFG_STR, O(field), def, 0, 0, NULL, env, req, secret, doc}
#define I(sec, name, field, def, lo, hi, doc) \
    {sec, name, CFG_INT, O(field), def, lo, hi, NULL, NULL, false, false, doc}
#define B(sec, name, field, def, doc) \
    {sec, name, CFG_BOOL, O(field), def, 0, 0, NULL, NULL, false, false, doc}
#define E(sec, name, field, def, choices, doc) \
    {sec, name, CFG_ENUM, O(field), def, 0, 0, choices, NULL, false, false, doc}

const struct config_key config_keys[] = {
    E("source", "kind", source.kind, "binlog", "binlog|kafka",
      "Where the changes are read: `binlog`, the server's binary log as a replica; `kafka`, "
      "change events (canal-json, Debezium, Maxwell) from the topics of [kafka] (see "
      "docs/kafka.md; `run` syncs them, `searchsync kafka-tail` prints them). With `kafka` "
      "the server keys below are still where documents are rebuilt from and the column "
      "types read (`run` needs user; `kafka-tail` uses it when set)"),
    S("source", "name", source.name, "default", NULL, false, false,
      "Name of this source; keys its checkpoint, its metadata rows and its reader leadership"),
    S("source", "host", source.host, "127.0.0.1", NULL, false, false,
      "MySQL/MariaDB server whose binlog is read"),
    I("source", "port", source.port, "3306", 1, 65535, "Its TCP port"),
    S("source", "socket", source.socket, NULL, NULL, false, false,
      "Unix socket path; used instead of host/port when set"),
    S("source", "user", source.user, NULL, NULL, true, false,
      "Account with REPLICATION SLAVE, REPLICATION CLIENT and SELECT (kind = kafka: SELECT; "
      "optional for kafka-tail only)"),
    S("source", "password", source.password, NULL, "SEARCHSYNC_SOURCE_PASSWORD", false, true,
      "Its password"),
    S("source", "password_file", source.password_file, NULL, NULL, false, false,
      "File whose first line is the password, instead of `password`"),
    E("source", "ssl_mode", source.ssl_mode, "preferred",
      "disabled|preferred|required|verify_ca|verify_identity",
      "TLS to the server (replica and query connections): `preferred` uses it when the server "
      "offers it, `required` refuses a server without it, `verify_ca` also checks the server's "
      "certificate against ssl_ca (the system's CAs when empty), `verify_identity` also that it "
      "names host. When ssl_ca is set, every TLS mode checks the certificate against it"),
    S("source", "ssl_ca", source.ssl_ca, NULL, NULL, false, false,
      "CA certificate(s) (PEM) that signed the server's certificate"),
    S("source", "ssl_cert", source.ssl_cert, NULL, NULL, false, false,
      "Client certificate (PEM), for an account created REQUIRE X509 / SUBJECT"),
    S("source", "ssl_key", source.ssl_key, NULL, NULL, false, false,
      "Its private key (PEM)"),
    I("source", "server_id", source.server_id, "4012", 1, 2147483647,
      "Server id this replica announces; unique among the source's replicas"),
    S("source", "databases", source.databases, NULL, NULL, false, false,
      "Comma list of databases to follow; empty = those named in the mapping"),
    E("source", "start", source.start, "now", "now|beginning",
      "Where a source without a checkpoint starts reading"),
    E("source", "on_purged", source.on_purged, "stop", "stop|rebuild",
      "When the binlog after the checkpoint is no longer on the source (purged while the "
      "daemon was stopped or far behind; in GTID mode, a purged GTID range): `stop` exits "
      "with the error (recover with `searchsync run --from-current`); `rebuild` does that by "
      "itself, at a start or a reconnect: reading goes on at the binlog's end, the stretch "
      "skipped is logged, and every index config is rebuilt from MySQL into a new version "
      "(live changes written to it meanwhile), said in `searchsync status` and /metrics"),
    E("source", "versions", source.versions, "auto", "auto|position|gtid",
      "What document versions are made of. `position`: the transaction's binlog file and "
      "position (a failover to another server needs `searchsync epoch bump`). `gtid`: its "
      "GTID ordinal (MariaDB domain-server-seq, MySQL uuid:n with gtid_mode=ON), the same on "
      "every server of one replication topology: [source] may be pointed at a promoted "
      "replica and the daemon restarted, with nothing else; the checkpoint holds the GTID set "
      "and the reader resumes by it. `auto` = position. Changing it on a running install "
      "needs `searchsync epoch bump --reset-checkpoint` once (the daemon refuses to start "
      "until then); see docs/operations.md"),
    I("source", "heartbeat_ms", source.heartbeat_ms, "5000", 100, 600000,
      "Heartbeat period asked of the server while the binlog is idle (searchsync run asks for "
      "at most 100 ms: on heartbeats it looks for queued reindexes)"),
    I("source", "group_transactions", source.group_transactions, "64", 1, 10000,
      "When the reader is behind (the next transaction already waiting), the documents of up "
      "to this many consecutive transactions are built together from one read snapshot; 1 = "
      "each transaction on its own"),
    I("source", "xa_hold_max_s", source.xa_hold_max_s, "3600", 0, 31536000,
      "A two-phase XA transaction between its XA PREPARE and its XA COMMIT holds the checkpoint "
      "before the PREPARE (a restart reads it again and still rebuilds its documents at the "
      "commit) for at most this long; then a warning names it and the checkpoint moves on. "
      "0 = for as long as it stays prepared"),
    I("source", "schema_settle_ms", source.schema_settle_ms, "30000", 0, 3600000,
      "How long a table or column of the mapping may be missing from the source before the "
      "index configs reading it are stopped: a RENAME read from the binlog that takes a mapped "
      "table away (gh-ost's two-step cut-over renames it back a moment later), or a query of "
      "the mapping the source refuses while it is ahead of the reader (a swap under way). "
      "Meanwhile the index config goes on, and a transaction whose documents need the table is "
      "read again until it is back"),
    I("source", "connect_timeout_ms", source.connect_timeout_ms, "5000", 100, 600000,
      "Connect timeout"),
    I("source", "read_timeout_ms", source.read_timeout_ms, "30000", 1000, 3600000,
      "A read with no data (not even a heartbeat) for this long reconnects"),

    S("kafka", "brokers", kafka.brokers, NULL, NULL, false, false,
      "Bootstrap brokers, a comma list of host:port (required with [source] kind = kafka)"),
    S("kafka", "topics", kafka.topics, NULL, NULL, false, false,
      "Comma list of the topics to read (this or topic_regex is required with kind = kafka)"),
    S("kafka", "topic_regex", kafka.topic_regex, NULL, NULL, false, false,
      "Also every topic whose name matches this POSIX extended regular expression (anchored "
      "with ^ when it is not)"),
    S("kafka", "group", kafka.group, "searchsync", NULL, false, false,
      "Consumer group id. `run` commits to it the offsets saved with its checkpoint (once "
      "the engine acknowledged everything before them) and resumes from the saved ones; the "
      "group's committed offsets only for partitions the checkpoint does not name"),
    E("kafka", "format", kafka.format, "auto", "auto|canal-json|debezium|maxwell",
      "Message format; `auto` detects each message by the keys only one format has"),
    S("kafka", "canal_tz_offset", kafka.canal_tz_offset, "+00:00", NULL, false, false,
      "Offset from UTC (+HH:MM or -HH:MM) of canal's JVM time zone, in which canal writes "
      "TIMESTAMP values as text"),
    E("kafka", "debezium_decimal_handling_mode", kafka.dbz_decimal, NULL, "precise|string|double",
      "The Debezium connector's decimal.handling.mode, for messages without schemas (the JSON "
      "converter's schemas.enable=false; with schemas the message says it). Empty: a DECIMAL "
      "value is read only when it can be one thing; one whose base64 is all digits is not "
      "decoded (docs/kafka.md, Debezium)"),
    E("kafka", "debezium_time_precision_mode", kafka.dbz_time, NULL,
      "adaptive_time_microseconds|connect",
      "The Debezium connector's time.precision.mode, for messages without schemas: whether "
      "TIME and DATETIME(4-6) numbers are microseconds or milliseconds. Empty: such values "
      "are not decoded (docs/kafka.md, Debezium)"),
    E("kafka", "debezium_binary_handling_mode", kafka.dbz_binary, NULL,
      "bytes|base64|base64-url-safe|hex",
      "The Debezium connector's binary.handling.mode, for binary values sent as text. Empty: "
      "base64, unless the value is hex digits and not base64; one that is both is not decoded "
      "(docs/kafka.md, Debezium)"),

    S("metadata", "host", metadata.host, NULL, NULL, false, false,
      "Server holding the metadata schema; default: the source's host"),
    I("metadata", "port", metadata.port, "0", 0, 65535, "Its port; 0 = the source's port"),
    S("metadata", "socket", metadata.socket, NULL, NULL, false, false, "Its Unix socket"),
    S("metadata", "user", metadata.user, NULL, NULL, false, false,
      "Account owning the metadata schema; default: the source's user"),
    S("metadata", "password", metadata.password, NULL, "SEARCHSYNC_METADATA_PASSWORD", false,
      true, "Its password; default: the source's"),
    S("metadata", "password_file", metadata.password_file, NULL, NULL, false, false,
      "File whose first line is the password, instead of `password`"),
    E("metadata", "ssl_mode", metadata.ssl_mode, NULL,
      "disabled|preferred|required|verify_ca|verify_identity",
      "TLS to the metadata server, as [source] ssl_mode; empty = [source]'s ssl_mode, ssl_ca, "
      "ssl_cert and ssl_key"),
    S("metadata", "ssl_ca", metadata.ssl_ca, NULL, NULL, false, false,
      "CA certificate(s) (PEM) for the metadata server (with ssl_mode set here)"),
    S("metadata", "ssl_cert", metadata.ssl_cert, NULL, NULL, false, false,
      "Client certificate (PEM) (with ssl_mode set here)"),
    S("metadata", "ssl_key", metadata.ssl_key, NULL, NULL, false, false,
      "Its private key (PEM)"),
    S("metadata", "database", metadata.database, "searchsync", NULL, false, false,
      "Database of the metadata schema (created and migrated on start)"),
    I("metadata", "reload_interval_ms", metadata.reload_interval_ms, "2000", 200, 3600000,
      "How often the daemon looks for edits of the mapping in the metadata tables and applies "
      "them without a restart"),

    S("search", "urls", search.urls, "http://127.0.0.1:9200", NULL, false, false,
      "Comma list of engine base URLs; failover in order"),
    S("search", "user", search.user, NULL, "SEARCHSYNC_SEARCH_USER", false, false,
      "Basic auth user"),
    S("search", "password", search.password, NULL, "SEARCHSYNC_SEARCH_PASSWORD", false, true,
      "Basic auth password"),
    S("search", "password_file", search.password_file, NULL, NULL, false, false,
      "File whose first line is the basic auth password, instead of `password`"),
    S("search", "api_key", search.api_key, NULL, "SEARCHSYNC_SEARCH_API_KEY", false, true,
      "Elasticsearch API key, the base64 `encoded` value (sent as `Authorization: ApiKey "
      "...`); instead of user/password"),
    S("search", "bearer_token", search.bearer_token, NULL, "SEARCHSYNC_SEARCH_BEARER_TOKEN",
      false, true, "Bearer token (sent as `Authorization: Bearer ...`), e.g. an Elasticsearch "
      "service account token; instead of user/password"),
    B("search", "aws_sigv4", search.aws_sigv4, "false",
      "Sign every request with AWS Signature Version 4 (Amazon OpenSearch Service or "
      "Serverless); instead of user/password"),
    S("search", "aws_region", search.aws_region, NULL, "AWS_REGION", false, false,
      "AWS region of the domain or collection, e.g. eu-west-1"),
    E("search", "aws_service", search.aws_service, "es", "es|aoss",
      "`es` for an Amazon OpenSearch Service domain, `aoss` for an OpenSearch Serverless "
      "collection"),
    S("search", "aws_access_key_id", search.aws_access_key_id, NULL, "AWS_ACCESS_KEY_ID", false,
      false, "AWS access key id"),
    S("search", "aws_secret_access_key", search.aws_secret_access_key, NULL,
      "AWS_SECRET_ACCESS_KEY", false, true, "AWS secret access key"),
    S("search", "aws_session_token", search.aws_session_token, NULL, "AWS_SESSION_TOKEN", false,
      true, "Session token of temporary credentials (an assumed role)"),
    S("search", "ca_file", search.ca_file, NULL, NULL, false, false,
      "CA certificate(s) (PEM) that signed the engine's TLS certificate; empty = the system's "
      "CAs"),
    S("search", "client_cert", search.client_cert, NULL, NULL, false, false,
      "Client certificate (PEM) for TLS client authentication"),
    S("search", "client_key", search.client_key, NULL, NULL, false, false,
      "Its private key (PEM)"),
    B("search", "tls_verify", search.tls_verify, "true",
      "Verify the engine's certificate and host name"),
    I("search", "timeout_ms", search.timeout_ms, "60000", 100, 3600000,
      "Time limit of one request"),
    I("search", "connect_timeout_ms", search.connect_timeout_ms, "5000", 100, 600000,
      "Connect time limit"),
    I("search", "max_connections", search.max_connections, "4", 1, 256,
      "Concurrent bulk requests (kept-alive connections)"),
    B("search", "compress", search.compress, "false",
      "gzip request bodies and accept gzip responses: worth it over slow links, costs throughput on a fast LAN"),

    S("cluster", "zookeeper", cluster.zookeeper, NULL, NULL, false, false,
      "ZooKeeper host:port list; empty = standalone (a second daemon on the source stands by "
      "behind a lock of the metadata server; docs/cluster.md)"),
    S("cluster", "name", cluster.name, "default", NULL, false, false,
      "Cluster name: the ZooKeeper path is /searchsync/<name>"),
    S("cluster", "node_id", cluster.node_id, NULL, NULL, false, false,
      "This node's id; default: <hostname>-<pid>"),
    I("cluster", "session_timeout_ms", cluster.session_timeout_ms, "15000", 4000, 120000,
      "ZooKeeper session timeout (a node gone is rebalanced away after it); a reader that "
      "cannot confirm its lock (cut off from ZooKeeper, or standalone the metadata server "
      "down) waits, sending what it read for 2/3 of it, then holding that too; a rebalance "
      "waits twice this (at least 10 s) for nodes to stop their jobs"),

    I("delivery", "workers", delivery.workers, "8", 1, 256,
      "Queue workers; a change goes to hash(index, doc id) mod workers"),
    I("delivery", "helpers", delivery.helpers, "4", 1, 256,
      "Helpers that take batches from the workers and send them: the bulk requests in flight "
      "to the engine (a reindex's jobs share them, at least one each)"),
    I("delivery", "batch_min", delivery.batch_min, "1", 1, 100000,
      "A batch is sent once this many changes wait (or the flush interval passes)"),
    I("delivery", "batch_max", delivery.batch_max, "500", 1, 100000,
      "Most changes in one bulk request"),
    I("delivery", "batch_max_bytes", delivery.batch_max_bytes, "10485760", 1024, 1073741824,
      "Most bytes in one bulk request body"),
    I("delivery", "flush_interval_ms", delivery.flush_interval_ms, "1000", 1, 600000,
      "Longest time a change waits for its batch to fill"),
    I("delivery", "linger_ms", delivery.linger_ms, "0", 0, 60000,
      "Time a change waits for others before its request goes, unless batch_max are waiting "
      "(the end of a transaction does not cut it short): fewer, fuller requests at low rates, "
      "so less engine CPU per change, for up to this much more lag (below flush_interval_ms). "
      "0: a change goes as soon "
      "as a helper is free"),
    B("delivery", "batch_to_refresh", delivery.batch_to_refresh, "false",
      "Live changes of an index wait until just before the engine's next refresh of it and "
      "leave together then: searchable no later than if sent at once, in about three bulk "
      "requests a refresh period instead of one a transaction (less engine CPU at low rates), "
      "for more acknowledged lag (up to the refresh interval). The next refresh is learnt from "
      "the index's refresh_interval and one probe a period (a versioned delete of an unused id "
      "through the alias, refresh=wait_for; docs/delivery.md). Not for indices with "
      "refresh_interval -1 or above flush_interval_ms, nor with helpers = 1, nor while the "
      "engine answers slowly beside the interval; a change finding "
      "its index idle for a period, batch_max waiting and flush_interval_ms passed still go at "
      "once. Off by default: measured only on an overloaded engine so far, where it cost "
      "searchable lag (docs/delivery.md). false: group commit alone"),
    B("delivery", "group_commit", delivery.group_commit, "true",
      "A transaction's changes leave together when the producer ends it (one request, "
      "whatever partitions they hash to), and while a bulk request to an index is in flight, "
      "that index's next changes wait for it "
      "and leave together when it returns: the engine's own latency sets the batch, so a "
      "busy engine gets fewer, fuller requests and an idle one gets each change at once "
      "(batch_max waiting or flush_interval_ms passed still go at once). false: up to "
      "helpers requests of one index in flight"),
    I("delivery", "high_watermark", delivery.high_watermark, "10000", 1, 100000000,
      "Queued changes above which the binlog reader blocks"),
    I("delivery", "fuse_failures", delivery.fuse_failures, "3", 1, 1000000,
      "Failures within fuse_interval_ms that blow an index's fuse"),
    I("delivery", "fuse_interval_ms", delivery.fuse_interval_ms, "5000", 1, 3600000,
      "Window in which failures are counted"),
    I("delivery", "fuse_reset_ms", delivery.fuse_reset_ms, "30000", 1, 3600000,
      "Time a blown fuse stays blown before deliveries are tried again"),
    E("delivery", "purge_strategy", delivery.purge_strategy, "off",
      "off|purge_one|purge_index|purge_all",
      "What to drop when the high-water mark is reached and a fuse is blown; every "
      "purged change is recorded as a dead letter"),
    I("delivery", "drain_timeout_ms", delivery.drain_timeout_ms, "60000", 1, 3600000,
      "Longest a drain (on demand or on SIGTERM) waits"),
    I("delivery", "retry_initial_ms", delivery.retry_initial_ms, "100", 1, 600000,
      "First retry delay of a transient failure (doubles, with jitter)"),
    I("delivery", "retry_max_ms", delivery.retry_max_ms, "30000", 1, 3600000,
      "Longest retry delay"),
    I("delivery", "checkpoint_interval_ms", delivery.checkpoint_interval_ms, "1000", 10,
      600000, "How often the acknowledged low-water mark is saved"),
    I("delivery", "idle_checkpoint_interval_ms", delivery.idle_checkpoint_interval_ms, "60000",
      10, 3600000,
      "How often it is saved when all it moved past are checkpoint saves: with the metadata "
      "on the source each save is a binlog transaction, which an idle daemon reads back "
      "(never more often than checkpoint_interval_ms)"),
    I("delivery", "max_attempts_5xx", delivery.max_attempts_5xx, "10", 1, 1000000,
      "Attempts of one item the engine keeps failing with HTTP 500 (not 502/503/504, "
      "which retry forever) before it becomes a dead letter"),
    I("delivery", "stats_window_ms", delivery.stats_window_ms, "60000", 1000, 3600000,
      "Window of the windowed counters (the *_one statistics of status and /metrics)"),

    I("reindex", "buckets", reindex.buckets, "4", 1, 4096,
      "Jobs a reindex is split into (ranges of the key, or MOD(bucket_column, buckets) with "
      "reindex --by-mod); a crash resumes each job from its cursor"),
    I("reindex", "parallel_jobs", reindex.parallel_jobs, "4", 1, 64,
      "Jobs of one reindex a daemon runs at the same time"),
    I("reindex", "page_size", reindex.page_size, "1000", 10, 100000,
      "Rows a job reads per keyset page (its first three pages are 1/8, 1/4 and 1/2 of it, so "
      "the engine gets work at once); the next page is read while one is delivered, and a "
      "page's cursor is saved once the engine acknowledged it"),
    I("reindex", "poll_interval_ms", reindex.poll_interval_ms, "100", 10, 600000,
      "How often the daemon looks for queued reindexes (one indexed query of the build table); "
      "a build starts within this time of its request"),
    I("reindex", "max_rejected", reindex.max_rejected, "100", 0, 1000000000,
      "Documents the engine may reject (kept in job_errors) before a reindex fails and is "
      "rolled back"),
    I("reindex", "keep_runs", reindex.keep_runs, "10", 1, 10000,
      "Reindex runs whose bookkeeping (per-job counts, errors) is kept per index config"),
    I("reindex", "gc_deletes_s", reindex.gc_deletes_s, "3600", 10, 604800,
      "How long a version being built keeps the version of a deleted document "
      "(index.gc_deletes, 60 s by default, restored at the switch): a page read before a "
      "delete but acknowledged after it loses to it within this time, and a page "
      "acknowledged later than 90% of it after its read fails the build, which is queued "
      "again (the engine's memory: one entry per document deleted during the build)"),

    S("delayed", "schedule", delayed.schedule, NULL, NULL, false, false,
      "When the daemon that reads the source runs the delayed refresh of change snapshots "
      "(as `searchsync delayed-run`, docs/operations.md): `every DUR` (every 5m) or a daily "
      "time, UTC, as HH:MM; empty = off (run `searchsync delayed-run` from cron)"),

    S("check", "schedule", check.schedule, NULL, NULL, false, false,
      "When the daemon that reads the source checks every index config (docs/check.md): a "
      "daily time, UTC, as HH:MM, or `every DUR` (every 6h); empty = off (run `searchsync "
      "check` from cron)"),
    S("check", "since", check.since, "25h", NULL, false, false,
      "The scheduled check's window, as `check --since` (90s, 15m, 25h, 7d); `all` = the whole "
      "index"),
    B("check", "repair", check.repair, "true", "The scheduled check repairs what it finds"),
    I("check", "settle_s", check.settle_s, "30", 0, 3600,
      "How long a check waits for the daemon's checkpoint before a difference is believed"),

    S("admin", "listen", admin.listen, "127.0.0.1:8089", NULL, false, false,
      "Admin HTTP address (API, UI, /metrics); empty = no admin server"),
    S("admin", "dict_listen", admin.dict_listen, NULL, NULL, false, false,
      "Separate address serving only the public /dict/ files for the engine's nodes"),
    S("admin", "token", admin.token, NULL, "SEARCHSYNC_ADMIN_TOKEN", false, true,
      "API token (at least 32 hex characters); the admin server refuses to start without"),
    S("admin", "allowed_hosts", admin.allowed_hosts, "127.0.0.1,localhost", NULL, false, false,
      "Host header values accepted (DNS rebinding protection)"),
    S("admin", "trusted_proxies", admin.trusted_proxies, NULL, NULL, false, false,
      "Addresses of reverse proxies in front of the admin server: from them, the last "
      "X-Forwarded-For address that is not one of them is the client (the failed-login "
      "limit counts per client, the log names it); empty = the peer's address"),
    I("admin", "session_ttl_s", admin.session_ttl_s, "43200", 5, 2592000,
      "Lifetime of a UI login session"),

    E("log", "level", log.level, "info", "debug|info|warn|error", "Least severe level logged"),
    E("log", "format", log.format, "text", "text|json",
      "Line format: text, or JSON lines with the keys ts, level, area and msg"),
    S("log", "file", log.file, NULL, NULL, false, false,
      "Where lines go: empty = standard error; syslog = syslog (facility daemon, ident "
      "searchsync); anything else is a file, appended to and reopened on SIGHUP (write "
      "./syslog for a file of that name)"),
};
const size_t config_nkeys = sizeof config_keys / sizeof config_keys[0];

static char **str_at(struct ss_config *c, const struct config_key *k) {
    return (char **)((char *)c + k->offset);
}
static int *int_at(struct ss_config *c, const struct config_key *k) {
    return (int *)((char *)c + k->offset);
}
static bool *bool_at(struct ss_config *c, const struct config_key *k) {
    return (bool *)((char *)c + k->offset);
}

static int parse_bool(const char *v, bool *out) {
    static const char *t[] = {"true", "yes", "on", "1"}, *f[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, t[i]) == 0) return *out = true, 0;
        if (strcasecmp(v, f[i]) == 0) return *out = false, 0;
    }
    return -1;
}

static bool enum_has(const char *choices, const char *v) {
    size_t n = strlen(v);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return true;
        if (!bar) break;
        p = bar + 1;
    }
    return false;
}

/* Set one key from text. where = "FILE:LINE" or "default" for messages. */
static int set_value(struct ss_config *c, const struct config_key *k, const char *v,
                     const char *where, char *err, size_t errlen) {
    switch (k->type) {
    case CFG_STR:
    case CFG_ENUM: {
        if (k->type == CFG_ENUM && !enum_has(k->choices, v)) {
            errf(err, errlen, "%s: [%s] %s = \"%s\" is not one of %s", where, k->section,
                   k->name, v, k->choices);
            return -1;
        }
        char **s = str_at(c, k);
        free(*s);
        *s = *v ? xstrdup(v) : NULL;
        return 0;
    }
    case CFG_INT: {
        char *end;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (errno || end == v || *end || n < k->min || n > k->max) {
            errf(err, errlen, "%s: [%s] %s = \"%s\" must be an integer from %ld to %ld", where,
                   k->section, k->name, v, k->min, k->max);
            return -1;
        }
        *int_at(c, k) = (int)n;
        return 0;
    }
    case CFG_BOOL:
        if (parse_bool(v, bool_at(c, k)) < 0) {
            errf(err, errlen, "%s: [%s] %s = \"%s\" must be true or false", where, k->section,
                   k->name, v);
            return -1;
        }
        return 0;
    }
    return -1;
}

bool config_key_equal(const struct ss_config *a, const struct ss_config *b,
                      const struct config_key *k) {
    struct ss_config *ma = (struct ss_config *)a, *mb = (struct ss_config *)b;
    switch (k->type) {
    case CFG_STR:
    case CFG_ENUM: {
        const char *x = *str_at(ma, k), *y = *str_at(mb, k);
        return x == y || (x && y && strcmp(x, y) == 0);
    }
    case CFG_INT: return *int_at(ma, k) == *int_at(mb, k);
    case CFG_BOOL: return *bool_at(ma, k) == *bool_at(mb, k);
    }
    return false;
}

void config_defaults(struct ss_config *c) {
    char err[CONFIG_ERR_LEN];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->def) set_value(c, k, k->def, "default", err, sizeof err);
    }
}

void config_free(struct ss_config *c) {
    if (!c) return;
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->type == CFG_STR || k->type == CFG_ENUM) {
            free(*str_at(c, k));
            *str_at(c, k) = NULL;
        }
    }
    free(c->path);
    c->path = NULL;
}

static const struct config_key *find_key(const char *section, const char *name) {
    for (size_t i = 0; i < config_nkeys; i++)
        if (strcmp(config_keys[i].section, section) == 0 && strcmp(config_keys[i].name, name) == 0)
            return &config_keys[i];
    return NULL;
}

static bool section_known(const char *section) {
    for (size_t i = 0; i < config_nkeys; i++)
        if (strcmp(config_keys[i].section, section) == 0) return true;
    return false;
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

/* An inline comment ends an unquoted value, as in my.cnf: `#` anywhere, `;`
 * after a space or tab (`token = abc  # note` is "abc"). A value holding
 * either is written in double quotes. */
static void strip_comment(char *v) {
    for (char *p = v; *p; p++)
        if (*p == '#' || (*p == ';' && (p == v || p[-1] == ' ' || p[-1] == '\t'))) {
            *p = '\0';
            break;
        }
    char *e = v + strlen(v);
    while (e > v && isspace((unsigned char)e[-1])) *--e = '\0';
}

/* "host:port", "[v6]:port" or ":port" with a port from 1 to 65535; "" is off */
static int check_listen(const char *key, const char *v, const char *name, char *err,
                        size_t errlen) {
    if (!v || !*v) return 0;
    const char *colon = strrchr(v, ':');
    char *end = NULL;
    long port = colon && colon[1] && isdigit((unsigned char)colon[1]) ? strtol(colon + 1, &end, 10)
                                                                       : -1;
    if (port < 1 || port > 65535 || (end && *end)) {
        errf(err, errlen, "%s: [admin] %s = \"%s\": not host:port with a port from 1 to 65535 "
             "(e.g. 127.0.0.1:8089; \"\" turns it off)", name, key, v);
        return -1;
    }
    return 0;
}

/* Unquote a "..." value in place. Returns -1 on an unterminated string. */
static int unquote(char *v) {
    char *r = v + 1, *w = v;
    while (*r && *r != '"') {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
            r++;
        } else {
            *w++ = *r++;
        }
    }
    if (*r != '"') return -1;
    const char *after = trim(r + 1); /* only a comment may follow the closing quote */
    if (*after && *after != '#' && *after != ';') return -1;
    *w = '\0';
    return 0;
}

/* a URL for messages: user:password@ left out */
static void url_shown(char *out, size_t n, const char *u, size_t len) {
    const char *host = u;
    for (size_t i = 0; i + 3 <= len; i++)
        if (!strncmp(u + i, "://", 3)) {
            host = u + i + 3;
            break;
        }
    size_t hostlen = len - (size_t)(host - u);
    const char *slash = memchr(host, '/', hostlen);
    size_t authlen = slash ? (size_t)(slash - host) : hostlen;
    const char *at = NULL;
    for (size_t i = 0; i < authlen; i++)
        if (host[i] == '@') at = host + i;
    if (!at) {
        snprintf(out, n, "%.*s", (int)len, u);
        return;
    }
    snprintf(out, n, "%.*s%.*s", (int)(host - u), u, (int)(len - (size_t)(at + 1 - u)), at + 1);
}

/* password_file: its first line (without the line end) becomes the password,
 * unless the environment variable gave one. Both `password` and
 * `password_file` in the file is a mistake. */
static int password_from_file(struct ss_config *c, const char *section, char **password,
                              const char *file, bool password_in_file, const char *env,
                              const char *name, char *err, size_t errlen) {
    if (!file) return 0;
    if (password_in_file)
        return errf(err, errlen, "%s: [%s] sets both password and password_file: keep one",
                    name, section);
    if (env && getenv(env) && *getenv(env)) return 0; /* the environment wins */
    FILE *f = fopen(file, "r");
    if (!f)
        return errf(err, errlen, "%s: [%s] password_file: cannot read %s: %s; give a file "
                    "readable by this user whose first line is the password", name, section,
                    file, strerror(errno));
    sbuf line = SBUF_INIT;
    sbuf_read_fp(&line, f);
    fclose(f);
    size_t n = line.data ? strcspn(line.data, "\r\n") : 0;
    if (n == 0) {
        sbuf_free(&line);
        return errf(err, errlen, "%s: [%s] password_file: %s is empty (its first line is "
                    "the password)", name, section, file);
    }
    free(*password);
    *password = xstrndup(line.data, n);
    sbuf_free(&line);
    (void)c;
    return 0;
}

long config_parse_duration(const char *s) {
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || v <= 0 || *s == '-' || *s == '+' || *s == ' ') return -1;
    long mul = !*e ? 1 : !strcmp(e, "s") ? 1 : !strcmp(e, "m") ? 60 : !strcmp(e, "h") ? 3600
               : !strcmp(e, "d") ? 86400 : -1;
    if (mul < 0 || v > 400L * 86400 / mul) return -1;
    return v * mul;
}

int config_parse_tz_offset(const char *s, int32_t *secs) {
    if (!strcmp(s, "UTC") || !strcmp(s, "Z")) {
        *secs = 0;
        return 0;
    }
    if (strlen(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':') return -1;
    for (int i = 1; i < 6; i++)
        if (i != 3 && (s[i] < '0' || s[i] > '9')) return -1;
    int h = (s[1] - '0') * 10 + (s[2] - '0'), m = (s[4] - '0') * 10 + (s[5] - '0');
    if (h > 14 || m > 59) return -1;
    *secs = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return 0;
}

bool config_kafka_source(const struct ss_config *c) {
    return c->source.kind && !strcmp(c->source.kind, "kafka");
}

bool config_gtid_versions(const struct ss_config *c) {
    return !config_kafka_source(c) && c->source.versions && !strcmp(c->source.versions, "gtid");
}

int config_parse_hhmm(const char *s) {
    if (strlen(s) != 5 || s[2] != ':') return -1;
    for (int i = 0; i < 5; i++)
        if (i != 2 && (s[i] < '0' || s[i] > '9')) return -1;
    int h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
    return h < 24 && m < 60 ? h * 60 + m : -1;
}

/* [source] kind = kafka: where to read and how; [kafka] keys set for a
 * binlog source are a mistake worth saying */
static int check_kafka(const struct ss_config *c, const char *name, char *err, size_t errlen) {
    int32_t off;
    if (config_parse_tz_offset(c->kafka.canal_tz_offset, &off) < 0)
        return errf(err, errlen, "%s: [kafka] canal_tz_offset = \"%s\": give an offset from UTC "
                    "as +HH:MM or -HH:MM (e.g. +08:00 for a canal server in Asia/Shanghai)",
                    name, c->kafka.canal_tz_offset);
    if (!config_kafka_source(c)) {
        if (c->kafka.brokers || c->kafka.topics || c->kafka.topic_regex)
            return errf(err, errlen, "%s: [kafka] is set but [source] kind is binlog: set "
                        "[source] kind = kafka to read the topics, or remove [kafka]", name);
        return 0;
    }
    if (!c->kafka.brokers || !*c->kafka.brokers)
        return errf(err, errlen, "%s: [source] kind = kafka needs [kafka] brokers: the bootstrap "
                    "brokers as host:port, comma separated (e.g. 127.0.0.1:9092)", name);
    bool any = false;
    for (const char *t = c->kafka.topics ? c->kafka.topics : ""; *t && !any; t++)
        any = *t != ',' && *t != ' ' && *t != '\t';
    if (!any && !(c->kafka.topic_regex && *c->kafka.topic_regex))
        return errf(err, errlen, "%s: [source] kind = kafka needs [kafka] topics (a comma list of "
                    "topic names) or [kafka] topic_regex", name);
    if (!c->kafka.group || !*c->kafka.group)
        return errf(err, errlen, "%s: [kafka] group is empty: give the consumer group id (or "
                    "leave the key out for `searchsync`)", name);
    return 0;
}

/* the scheduled check's keys, parsed now so a typo stops the start */
static int check_check(const struct ss_config *c, const char *name, char *err, size_t errlen) {
    const char *const specs[][2] = {{"check", c->check.schedule},
                                    {"delayed", c->delayed.schedule}};
    for (size_t i = 0; i < 2; i++) {
        const char *sc = specs[i][1];
        if (sc && *sc && config_parse_hhmm(sc) < 0 &&
            (strncmp(sc, "every ", 6) || config_parse_duration(sc + 6) < 0))
            return errf(err, errlen, "%s: [%s] schedule = \"%s\": give a time of day, UTC, as "
                        "HH:MM (e.g. 03:15), or an interval as `every DUR` (every 6h), or leave "
                        "it empty to run it from cron", name, specs[i][0], sc);
    }
    if (c->check.since && strcmp(c->check.since, "all") &&
        config_parse_duration(c->check.since) < 0)
        return errf(err, errlen, "%s: [check] since = \"%s\": give a duration such as 90s, 15m, "
                    "25h or 7d, or `all` for the whole index", name, c->check.since);
    return 0;
}

/* a certificate or key file named by a key must be readable now, not at the
 * first connection */
static int check_readable(const char *section, const char *key, const char *file,
                          const char *name, char *err, size_t errlen) {
    if (!file || access(file, R_OK) == 0) return 0;
    return errf(err, errlen, "%s: [%s] %s: cannot read %s: %s", name, section, key, file,
                strerror(errno));
}

/* the TLS, credential and signing keys, checked together */
static int check_secured(struct ss_config *c, const bool *seen, const char *name, char *err,
                         size_t errlen) {
    const struct config_key *kp;
#define SEEN_IN_FILE(sec, key) ((kp = find_key(sec, key)) && seen[kp - config_keys] && \
                                !(kp->env && getenv(kp->env) && *getenv(kp->env)))
    if (password_from_file(c, "source", &c->source.password, c->source.password_file,
                           SEEN_IN_FILE("source", "password"), "SEARCHSYNC_SOURCE_PASSWORD",
                           name, err, errlen) < 0 ||
        password_from_file(c, "metadata", &c->metadata.password, c->metadata.password_file,
                           SEEN_IN_FILE("metadata", "password"), "SEARCHSYNC_METADATA_PASSWORD",
                           name, err, errlen) < 0 ||
        password_from_file(c, "search", &c->search.password, c->search.password_file,
                           SEEN_IN_FILE("search", "password"), "SEARCHSYNC_SEARCH_PASSWORD",
                           name, err, errlen) < 0)
        return -1;
#undef SEEN_IN_FILE
    if (!c->metadata.ssl_mode && (c->metadata.ssl_ca || c->metadata.ssl_cert || c->metadata.ssl_key))
        return errf(err, errlen, "%s: [metadata] ssl_ca/ssl_cert/ssl_key are set but ssl_mode is "
                    "not: set [metadata] ssl_mode too (without it the metadata connection uses "
                    "[source]'s TLS settings)", name);
    if ((c->source.ssl_cert != NULL) != (c->source.ssl_key != NULL))
        return errf(err, errlen, "%s: [source] ssl_cert and ssl_key go together: set both or "
                    "neither", name);
    if ((c->metadata.ssl_cert != NULL) != (c->metadata.ssl_key != NULL))
        return errf(err, errlen, "%s: [metadata] ssl_cert and ssl_key go together: set both or "
                    "neither", name);
    if (check_readable("source", "ssl_ca", c->source.ssl_ca, name, err, errlen) < 0 ||
        check_readable("source", "ssl_cert", c->source.ssl_cert, name, err, errlen) < 0 ||
        check_readable("source", "ssl_key", c->source.ssl_key, name, err, errlen) < 0 ||
        check_readable("metadata", "ssl_ca", c->metadata.ssl_ca, name, err, errlen) < 0 ||
        check_readable("metadata", "ssl_cert", c->metadata.ssl_cert, name, err, errlen) < 0 ||
        check_readable("metadata", "ssl_key", c->metadata.ssl_key, name, err, errlen) < 0 ||
        check_readable("search", "ca_file", c->search.ca_file, name, err, errlen) < 0 ||
        check_readable("search", "client_cert", c->search.client_cert, name, err, errlen) < 0 ||
        check_readable("search", "client_key", c->search.client_key, name, err, errlen) < 0)
        return -1;
    /* one way to authenticate to the engine */
    const char *ways[4];
    int nways = 0;
    if (c->search.user) ways[nways++] = "user/password";
    if (c->search.api_key) ways[nways++] = "api_key";
    if (c->search.bearer_token) ways[nways++] = "bearer_token";
    if (c->search.aws_sigv4) ways[nways++] = "aws_sigv4";
    if (nways > 1)
        return errf(err, errlen, "%s: [search] sets both %s and %s: the engine takes one way "
                    "to authenticate, keep one (mind the environment variables too)", name,
                    ways[0], ways[1]);
    if (c->search.password && !c->search.user && !nways)
        return errf(err, errlen, "%s: [search] password is set without user: set [search] user "
                    "(or SEARCHSYNC_SEARCH_USER)", name);
    if (c->search.aws_sigv4) {
        const char *missing = !c->search.aws_region ? "aws_region (or AWS_REGION)"
                              : !c->search.aws_access_key_id
                                  ? "aws_access_key_id (or AWS_ACCESS_KEY_ID)"
                              : !c->search.aws_secret_access_key
                                  ? "aws_secret_access_key (or AWS_SECRET_ACCESS_KEY)"
                                  : NULL;
        if (missing)
            return errf(err, errlen, "%s: [search] aws_sigv4 = true needs %s", name, missing);
        for (const char *p = c->search.aws_region; *p; p++)
            if (!(isalnum((unsigned char)*p) || *p == '-'))
                return errf(err, errlen, "%s: [search] aws_region = \"%s\" is not a region name "
                            "(like eu-west-1)", name, c->search.aws_region);
    }
    return 0;
}

/* The lines of text into c (every key at most once, seen[] marks those set);
 * 0, or -1 with err naming the file and line. */
static int parse_lines(struct ss_config *c, const char *name, const char *text, bool *seen,
                       char *err, size_t errlen) {
    char where[PATH_MAX + 32];
    char section[64] = "";
    int lineno = 0;
    const char *p = text;
    sbuf line = SBUF_INIT;
    int rc = 0;
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sbuf_reset(&line);
        sbuf_add(&line, p, len);
        p += len + (nl ? 1 : 0);
        lineno++;
        snprintf(where, sizeof where, "%s:%d", name, lineno);
        char *s = trim(line.data);
        if (!*s || *s == '#' || *s == ';') continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close || *trim(close + 1)) {
                errf(err, errlen, "%s: malformed section header \"%s\"", where, s);
                rc = -1;
                break;
            }
            *close = '\0';
            char *sec = trim(s + 1);
            if (!section_known(sec)) {
                errf(err, errlen,
                       "%s: unknown section [%s] (known: source, kafka, metadata, search, "
                       "cluster, delivery, reindex, delayed, check, admin, log)",
                       where, sec);
                rc = -1;
                break;
            }
            snprintf(section, sizeof section, "%s", sec);
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            errf(err, errlen, "%s: expected \"key = value\", got \"%s\"", where, s);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        if (*val != '"') strip_comment(val);
        if (!*section) {
            errf(err, errlen, "%s: key \"%s\" before any [section]", where, key);
            rc = -1;
            break;
        }
        const struct config_key *k = find_key(section, key);
        if (!k) {
            errf(err, errlen, "%s: unknown key \"%s\" in section [%s]; see docs/configuration.md",
                   where, key, section);
            rc = -1;
            break;
        }
        size_t idx = (size_t)(k - config_keys);
        if (seen[idx]) {
            errf(err, errlen, "%s: [%s] %s is set twice", where, section, key);
            rc = -1;
            break;
        }
        seen[idx] = true;
        if (*val == '"' && unquote(val) < 0) {
            errf(err, errlen, "%s: [%s] %s: unterminated or trailing text after quoted value",
                   where, section, key);
            rc = -1;
            break;
        }
        rc = set_value(c, k, val, where, err, errlen);
    }
    sbuf_free(&line);
    return rc < 0 ? -1 : 0;
}

/* What no single key says: required keys present, values consistent with
 * each other. 0, or -1 with err. */
static int check_loaded(struct ss_config *c, const bool *seen, const char *name, char *err,
                        size_t errlen) {
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->required && !seen[i] &&
            !(config_kafka_source(c) && !strcmp(k->section, "source") && !strcmp(k->name, "user"))) {
            errf(err, errlen, "%s: required key [%s] %s is missing (%s)", name, k->section,
                   k->name, k->doc);
            return -1;
        }
    }
    if (c->delivery.batch_min > c->delivery.batch_max) {
        errf(err, errlen, "%s: [delivery] batch_min (%d) is larger than batch_max (%d)", name,
               c->delivery.batch_min, c->delivery.batch_max);
        return -1;
    }
    if (c->delivery.linger_ms >= c->delivery.flush_interval_ms) {
        errf(err, errlen, "%s: [delivery] linger_ms (%d) is not below flush_interval_ms (%d), "
             "the longest a change may wait; lower linger_ms", name, c->delivery.linger_ms,
             c->delivery.flush_interval_ms);
        return -1;
    }
    if (check_listen("listen", c->admin.listen, name, err, errlen) < 0 ||
        check_listen("dict_listen", c->admin.dict_listen, name, err, errlen) < 0)
        return -1;
    /* every address in [search] urls is a http:// or https:// URL (the
     * engine client's own rule, checked here so that `config check` says it) */
    int nurls = 0;
    for (const char *u = c->search.urls ? c->search.urls : ""; *u;) {
        size_t n = strcspn(u, ", \t");
        nurls += n > 0;
        if (n && strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
            char shown[512];
            url_shown(shown, sizeof shown, u, n);
            errf(err, errlen, "%s: [search] urls: \"%s\" must start with http:// or https://",
                 name, shown);
            return -1;
        }
        if (n && c->search.aws_sigv4 && strncmp(u, "https://", 8)) {
            char shown[512];
            url_shown(shown, sizeof shown, u, n);
            errf(err, errlen, "%s: [search] urls: \"%s\": with aws_sigv4 the engine is an "
                 "https:// endpoint", name, shown);
            return -1;
        }
        u += n;
        u += strspn(u, ", \t");
    }
    if (!nurls) {
        errf(err, errlen, "%s: [search] urls is empty: give at least one engine address "
             "(e.g. http://127.0.0.1:9200)", name);
        return -1;
    }
    if (check_secured(c, seen, name, err, errlen) < 0) return -1;
    if (check_kafka(c, name, err, errlen) < 0) return -1;
    if (check_check(c, name, err, errlen) < 0) return -1;
    if (c->admin.token && strlen(c->admin.token) < 32) {
        errf(err, errlen,
               "%s: [admin] token is too short: use at least 32 hex characters (128 bits), "
               "e.g. from `openssl rand -hex 16`",
               name);
        return -1;
    }
    return 0;
}


int config_load_string(struct ss_config *c, const char *name, const char *text, char *err,
                       size_t errlen) {
    config_defaults(c);
    c->path = xstrdup(name);
    bool seen[sizeof config_keys / sizeof config_keys[0]] = {0};
    if (parse_lines(c, name, text, seen, err, errlen) < 0) return -1;
    char where[PATH_MAX + 32];
    /* secrets from the environment win over the file */
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        const char *ev = k->env ? getenv(k->env) : NULL;
        if (ev && *ev) {
            snprintf(where, sizeof where, "environment %s", k->env);
            if (set_value(c, k, ev, where, err, errlen) < 0) return -1;
            seen[i] = true;
        }
    }
    return check_loaded(c, seen, name, err, errlen);
}

int config_load(struct ss_config *c, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno; /* (config_defaults may change errno) */
        config_defaults(c);
        errf(err, errlen, "%s: cannot open configuration file: %s%s", path, strerror(e),
             e == ENOENT ? " (give the path of an INI file to --config; searchsync.ini in "
                           "the source tree is a commented sample)"
                         : "");
        return -1;
    }
    sbuf text = SBUF_INIT;
    sbuf_read_fp(&text, f);
    fclose(f);
    if (text.len && memchr(text.data, '\0', text.len)) {
        config_defaults(c);
        sbuf_free(&text);
        errf(err, errlen, "%s: not a text file (NUL byte)", path);
        return -1;
    }
    int rc = config_load_string(c, path, text.data ? text.data : "", err, errlen);
    sbuf_free(&text);
    return rc;
}

void config_print_reference(FILE *out) {
    const char *section = "";
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (strcmp(section, k->section) != 0) {
            section = k->section;
            fprintf(out, "\n### [%s]\n\n| key | type | default | meaning |\n|---|---|---|---|\n",
                    section);
        }
        char type[96];
        if (k->type == CFG_INT)
            snprintf(type, sizeof type, "integer %ld..%ld", k->min, k->max);
        else if (k->type == CFG_ENUM) {
            /* "a|b" would split a Markdown table cell: list the choices */
            size_t n = (size_t)snprintf(type, sizeof type, "one of: ");
            for (const char *p = k->choices; *p && n < sizeof type - 3; p++) {
                if (*p == '|') type[n++] = ',', type[n++] = ' ';
                else type[n++] = *p;
            }
            type[n] = '\0';
        } else
            snprintf(type, sizeof type, "%s", k->type == CFG_BOOL ? "boolean" : "string");
        char def[128];
        if (k->def)
            snprintf(def, sizeof def, "`%s`", k->def);
        else
            snprintf(def, sizeof def, "%s", k->required ? "(required)" : "(empty)");
        fprintf(out, "| `%s` | %s | %s | %s", k->name, type, def, k->doc);
        if (k->env) fprintf(out, ". Environment variable `%s` overrides the file", k->env);
        fprintf(out, " |\n");
    }
}
