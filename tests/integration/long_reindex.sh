#!/usr/bin/env bash
# tests/integration/long_reindex.sh — `make check-long`: t_reindex.sh with
# 500k demo products (about 1.9M rows with reviews and replies): the reindex
# under a writer, the SIGKILL mid-reindex, the failure and the parent/child
# checks at scale, each followed by the document-by-document
# comparison with the SQL oracle (compare_docs.py sorts both sides on disk, so
# its memory stays flat).
export REINDEX_PRODUCTS="${REINDEX_PRODUCTS:-500000}" REINDEX_PAGE="${REINDEX_PAGE:-1000}"
. "$(dirname "$0")/t_reindex.sh"
