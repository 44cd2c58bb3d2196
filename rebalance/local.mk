# rebalance/: ZooKeeper — the session, the lock recipe (also the binlog
# reader's election), the node registry. Stands alone: no daemon headers.
libsearchsync_a_SOURCES += rebalance/zk.c rebalance/zk.h rebalance/zlock.c rebalance/zlock.h \
	rebalance/registry.c rebalance/registry.h
