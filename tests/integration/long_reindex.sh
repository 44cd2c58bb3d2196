#!/usr/bin/env bash
# tests/integration/long_reindex.sh — `make check-long`: t_reindex.sh with
# 500k demo products (about 1.9M rows with reviews and replies): the reindex
# under a writer, the SIGKILL mid-reindex, the failure and the parent/child
# checks at the size issue 6 names.
# The document-by-document oracle comparison holds both sides in memory (about
# 20 GB at this size), so it is off here; counts, nested sums and every
# product's name and price are still compared with SQL.
export REINDEX_PRODUCTS="${REINDEX_PRODUCTS:-500000}" REINDEX_PAGE="${REINDEX_PAGE:-1000}"
export REINDEX_ORACLE="${REINDEX_ORACLE:-0}"
. "$(dirname "$0")/t_reindex.sh"
