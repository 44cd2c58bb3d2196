#!/usr/bin/env bash
# tests/integration/long_delayed_run.sh — `make check-long`: t_delayed_run.sh
# at scale: a category used by 100k demo products (of
# 150k) renamed; no document changes until the run, then every one of them
# (the SQL oracle, document by document), documents of other categories not
# rewritten, a killed run resumed, a stopped run taken over, a live change
# during the run kept.
export DELAYED_PRODUCTS="${DELAYED_PRODUCTS:-150000}" DELAYED_BIG_CATEGORY="${DELAYED_BIG_CATEGORY:-100000}"
. "$(dirname "$0")/t_delayed_run.sh"
