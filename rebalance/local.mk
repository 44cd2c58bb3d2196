# rebalance/: ZooKeeper — the session, the lock recipe (also the binlog
# reader's election), the node registry, the rebalance protocol and the
# split of jobs over nodes, and the live node count. Stands alone: no daemon
# headers (sync/cluster/ is a node's side of it).
libsearchsync_a_SOURCES += rebalance/zk.c rebalance/zk.h rebalance/zlock.c rebalance/zlock.h \
	rebalance/registry.c rebalance/registry.h rebalance/rebalance.c rebalance/rebalance.h \
	rebalance/split.c rebalance/split.h

check_PROGRAMS += tests/unit/test_split tests/unit/test_split_asan
TESTS += tests/unit/test_split tests/unit/test_split_asan
tests_unit_test_split_SOURCES = tests/unit/test_split.c
tests_unit_test_split_LDADD = $(UNIT_LDADD)
tests_unit_test_split_asan_SOURCES = tests/unit/test_split.c
tests_unit_test_split_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_split_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_split_asan_LDADD = $(UNIT_ASAN_LDADD)
