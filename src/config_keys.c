/* config_keys: every key of the configuration file — its section, name,
 * type, default, bounds or choices, environment variable and meaning — as
 * the table config.c parses and checks against, and the reference that
 * `searchsync config reference` prints from it (docs/configuration.md
 * embeds that output). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

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
    S("source", "mapping", source.mapping, NULL, NULL, false, false,
      "The mapping this source reads, by the name it is stored under in the metadata schema; "
      "empty = the source's name. Sources with the same mapping share its index configs, each "
      "feeding those whose `sources` list it (docs/cluster.md, Several sources, one index)"),
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
    I("source", "group_transactions", source.group_transactions, "1000", 1, 10000,
      "When the reader is behind (the next transaction already waiting), the documents of up "
      "to this many consecutive transactions (and at most 20,000 rows or 200 ms of them) are "
      "built together from one read snapshot, and the child copy lookups of parent/child "
      "indices are made together, at most a second apart. A read snapshot costs a MariaDB "
      "source about 1 ms of CPU whatever it reads, so a backlog of single-row transactions "
      "wants groups of hundreds; 1 = each transaction on its own"),
    I("source", "group_wait_ms", source.group_wait_ms, "10", 0, 200,
      "When the reader is caught up and a transaction's documents are read back from the "
      "source (not row images), its build waits up to this many ms for the next transaction "
      "if the last ones came less than half that far apart, and builds them together from one "
      "read snapshot (up to group_transactions): a stream of small transactions costs the "
      "source one snapshot a window, not one a transaction, for at most this much more lag "
      "before delivery, which spaces its requests by more than that anyway "
      "(linger_refresh_percent); 0 = build at each commit"),
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
    E("kafka", "security_protocol", kafka.security_protocol, "plaintext",
      "plaintext|ssl|sasl_plaintext|sasl_ssl",
      "How the brokers are reached: `ssl` is TLS, `sasl_plaintext` SASL credentials without "
      "TLS, `sasl_ssl` both (Amazon MSK's and Confluent Cloud's SASL listeners)"),
    E("kafka", "sasl_mechanism", kafka.sasl_mechanism, NULL, "PLAIN|SCRAM-SHA-256|SCRAM-SHA-512",
      "SASL mechanism, required with security_protocol sasl_*; another mechanism (OAUTHBEARER, "
      "GSSAPI): leave this empty and set sasl.mechanisms and its settings in client_properties"),
    S("kafka", "sasl_username", kafka.sasl_username, NULL, NULL, false, false,
      "SASL user name (PLAIN and SCRAM)"),
    S("kafka", "sasl_password", kafka.sasl_password, NULL, "SEARCHSYNC_KAFKA_PASSWORD", false,
      true, "Its password"),
    S("kafka", "sasl_password_file", kafka.sasl_password_file, NULL, NULL, false, false,
      "File whose first line is the SASL password, instead of `sasl_password`"),
    S("kafka", "ssl_ca", kafka.ssl_ca, NULL, NULL, false, false,
      "CA certificate(s) (PEM) that signed the brokers' certificates; empty: the system's CAs. "
      "The brokers' certificates must name the host in brokers"),
    S("kafka", "ssl_cert", kafka.ssl_cert, NULL, NULL, false, false,
      "Client certificate (PEM), for brokers that ask for one (ssl.client.auth=required)"),
    S("kafka", "ssl_key", kafka.ssl_key, NULL, NULL, false, false,
      "Its private key (PEM, not encrypted; an encrypted one: ssl.key.password in "
      "client_properties)"),
    S("kafka", "client_properties", kafka.client_properties, NULL, NULL, false, false,
      "File of more librdkafka consumer properties, one `name = value` a line (# comments), "
      "e.g. an encrypted key's ssl.key.password or fetch sizes; a property searchsync sets itself "
      "or one a [kafka] key sets is refused, naming that key (docs/kafka.md, Secured brokers)"),

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
      "(the end of a transaction does not cut it short; the daemon waiting for it, as a child "
      "copy lookup does, does): fewer, fuller requests at low rates, "
      "so less engine CPU per change, for up to this much more lag (below flush_interval_ms). "
      "0: a change goes as soon "
      "as a helper is free"),
    I("delivery", "linger_refresh_percent", delivery.linger_refresh_percent, "50", 0, 100,
      "With linger_ms 0: a live request to an index leaves no sooner than this percent of the "
      "index's refresh_interval (read from the engine), at most 100 ms, after the index's "
      "previous request; changes that come meanwhile wait and leave with it, unless "
      "linger_refresh_batch are waiting. A change finding the index without a request for that "
      "long goes at once. "
      "Fewer requests at low rates (less engine CPU per change) for at most that much more "
      "lag. 0: off (group commit alone)"),
    I("delivery", "linger_refresh_batch", delivery.linger_refresh_batch, "50", 0, 100000,
      "With linger_refresh_percent: a request leaves without waiting out the spacing once this "
      "many changes of the index wait (a request that full costs the engine little beyond its "
      "documents), so only slow streams are spaced and fast ones keep group commit's lag. "
      "Above batch_max it is batch_max. 0: batch_max"),
    B("delivery", "batch_to_refresh", delivery.batch_to_refresh, "false",
      "Live changes of an index wait until just before the engine's next refresh of it and "
      "leave together then: searchable no later than if sent at once, in a few bulk requests "
      "a refresh period instead of one a transaction (less engine CPU at low rates), for more "
      "acknowledged lag (up to the refresh interval). The next refresh is learnt from the "
      "index's refresh_interval (read every second) and a probe into each refresh that takes "
      "a request (a versioned delete of an unused id, refresh=wait_for; docs/delivery.md). "
      "Not for indices with refresh_interval -1 or above flush_interval_ms, nor with "
      "helpers = 1, nor while the engine answers slowly beside the interval; a change finding "
      "its index idle for a period, batch_max waiting and flush_interval_ms passed still go at "
      "once. Off by default: on a quiet box its searchable p99 was up to 120 ms above group "
      "commit's at 2,000 changes/s under a 1 s refresh (docs/delivery.md). false: group "
      "commit alone"),
    I("delivery", "refresh_pairing_ms", delivery.refresh_pairing_ms, "300", 0, 60000,
      "Under a short refresh interval: a slow live stream (linger_refresh_percent or "
      "batch_to_refresh) writes into every other refresh of an index only, when twice the "
      "index's refresh cycle (refresh_interval plus a refresh's time) is at most this many ms. "
      "Its changes leave together just before the refresh they aim at, the first request "
      "with refresh=wait_for, whose answer tells when that refresh ended (a probe as for "
      "batch_to_refresh until the first one). A refresh that writes a segment costs the engine "
      "much the same however few changes it takes: at a 100 ms interval and 500 changes/s "
      "this halves the refreshes with writes and the bulk requests, for about half an "
      "interval more searchable lag (docs/delivery.md). 0: off"),
    I("delivery", "refresh_pairing_changes", delivery.refresh_pairing_changes, "150", 1, 1000000,
      "With refresh_pairing_ms: a stream counts as slow while its changes come at fewer than "
      "this many a refresh cycle; a faster one writes into each refresh as before (its "
      "requests are larger, cost the engine less a change, and a refresh missed by one of "
      "them costs more lag)"),
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
    S("delivery", "replay_schedule", delivery.replay_schedule, NULL, NULL, false, false,
      "When the daemon that reads the source replays the source's dead letters (as "
      "`searchsync dead-letters replay`, docs/operations.md): `every DUR` (every 30m) or a "
      "daily time, UTC, as HH:MM; a change that fails again is a dead letter again; empty = "
      "off (replay them by hand once the cause is fixed)"),
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
    I("reindex", "index_parallel_jobs", reindex.index_parallel_jobs, "0", 0, 1024,
      "Jobs of one reindex that run at the same time across the daemons of every source of "
      "an index config with several sources (slots held on the metadata server; 0: "
      "parallel_jobs, so several sources' builds reach the engine as one source's would); "
      "not used in a cluster, where the rebalance places the jobs"),
    I("reindex", "page_size", reindex.page_size, "1000", 10, 100000,
      "Rows a job reads per keyset page (its first three pages are 1/8, 1/4 and 1/2 of it, so "
      "the engine gets work at once); a page leaves as soon as the job's page before it is "
      "acknowledged, whose cursor is saved meanwhile; the next page is read while one is "
      "delivered"),
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
    I("delayed", "buckets", delayed.buckets, "4", 1, 4096,
      "Jobs a delayed run splits each index config's ids into (MOD(key, N)), for the "
      "scheduled run and `searchsync delayed-run` (its --buckets wins): in a cluster, the "
      "most nodes that share one index config's run"),
    I("delayed", "page", delayed.page, "5000", 1, 100000,
      "Ids a delayed run reads per page and rebuilds per change set (--page wins)"),
    I("delayed", "max_attempts", delayed.max_attempts, "3", 1, 1000,
      "Runs a failing change snapshot is tried in before it is left in error, which "
      "`status` shows and exit code 3 reports (--max-attempts wins)"),

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
    S("admin", "sources_dir", admin.sources_dir, "/etc/searchsync", NULL, false, false,
      "Directory where `searchsync source add` and POST /api/v1/sources write a new source's "
      "NAME.ini and NAME.password (mode 0600), where the template unit searchsync@NAME reads "
      "them; the process adding a source must be able to write it"),

    E("log", "level", log.level, "info", "debug|info|warn|error", "Least severe level logged"),
    E("log", "format", log.format, "text", "text|json",
      "Line format: text, or JSON lines with the keys ts, level, area and msg"),
    S("log", "file", log.file, NULL, NULL, false, false,
      "Where lines go: empty = standard error; syslog = syslog (facility daemon, ident "
      "searchsync); anything else is a file, appended to and reopened on SIGHUP (write "
      "./syslog for a file of that name)"),
};
const size_t config_nkeys = sizeof config_keys / sizeof config_keys[0];

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
