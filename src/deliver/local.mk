# src/deliver + src/search: delivery to the search engine.
# The engine client lives in src/search/ but is listed here (one fragment).
libsearchsync_a_SOURCES += \
	src/search/search.h src/search/jscan.h src/search/jscan.c \
	src/search/dialect.c src/search/bulk.c src/search/client.c \
	src/search/wait.h src/search/wait.c \
	src/search/content_hash.h src/search/content_hash.c \
	src/search/replicas.h src/search/replicas.c \
	src/deliver/deliver.h src/deliver/deliver_int.h src/deliver/deliver.c src/deliver/stream.c \
	src/deliver/version.c src/deliver/queue.c src/deliver/txn.c \
	src/deliver/helper.c src/deliver/fuse.c src/deliver/purge.c src/deliver/engine.c \
	src/deliver/stats.c src/deliver/refresh.c src/deliver/linger.c \
	src/deliver/health.c \
	src/deliver/hist.h src/deliver/hist.c \
	src/deliver/store.h src/deliver/store.c

check_PROGRAMS += \
	tests/unit/test_search_bulk tests/unit/test_search_bulk_asan \
	tests/unit/test_search_dialect tests/unit/test_search_dialect_asan \
	tests/unit/test_search_client tests/unit/test_search_client_asan \
	tests/unit/test_deliver_queue tests/unit/test_deliver_queue_asan \
	tests/unit/test_deliver_streams tests/unit/test_deliver_streams_asan \
	tests/unit/test_deliver_group_commit tests/unit/test_deliver_group_commit_asan \
	tests/unit/test_deliver_refresh tests/unit/test_deliver_refresh_asan \
	tests/unit/test_deliver_linger tests/unit/test_deliver_linger_asan \
	tests/unit/test_deliver_store tests/unit/test_deliver_store_asan \
	tests/tools/deliver_driver
TESTS += \
	tests/unit/test_search_bulk tests/unit/test_search_bulk_asan \
	tests/unit/test_search_dialect tests/unit/test_search_dialect_asan \
	tests/unit/test_search_client tests/unit/test_search_client_asan \
	tests/unit/test_deliver_queue tests/unit/test_deliver_queue_asan \
	tests/unit/test_deliver_streams tests/unit/test_deliver_streams_asan \
	tests/unit/test_deliver_group_commit tests/unit/test_deliver_group_commit_asan \
	tests/unit/test_deliver_refresh tests/unit/test_deliver_refresh_asan \
	tests/unit/test_deliver_linger tests/unit/test_deliver_linger_asan \
	tests/unit/test_deliver_store tests/unit/test_deliver_store_asan

tests_unit_test_search_bulk_SOURCES = tests/unit/test_search_bulk.c
tests_unit_test_search_bulk_LDADD = $(UNIT_LDADD)
tests_unit_test_search_bulk_asan_SOURCES = tests/unit/test_search_bulk.c
tests_unit_test_search_bulk_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_search_bulk_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_search_bulk_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_search_dialect_SOURCES = tests/unit/test_search_dialect.c
tests_unit_test_search_dialect_LDADD = $(UNIT_LDADD)
tests_unit_test_search_dialect_asan_SOURCES = tests/unit/test_search_dialect.c
tests_unit_test_search_dialect_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_search_dialect_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_search_dialect_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_search_client_SOURCES = tests/unit/test_search_client.c
tests_unit_test_search_client_LDADD = $(UNIT_LDADD)
tests_unit_test_search_client_asan_SOURCES = tests/unit/test_search_client.c
tests_unit_test_search_client_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_search_client_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_search_client_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_deliver_queue_SOURCES = tests/unit/test_deliver_queue.c tests/unit/deliver_fake.h
tests_unit_test_deliver_queue_LDADD = $(UNIT_LDADD)
tests_unit_test_deliver_queue_asan_SOURCES = tests/unit/test_deliver_queue.c tests/unit/deliver_fake.h
tests_unit_test_deliver_queue_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_deliver_queue_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_deliver_queue_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_deliver_store_SOURCES = tests/unit/test_deliver_store.c
tests_unit_test_deliver_store_LDADD = $(UNIT_LDADD)
tests_unit_test_deliver_store_asan_SOURCES = tests/unit/test_deliver_store.c
tests_unit_test_deliver_store_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_deliver_store_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_deliver_store_asan_LDADD = $(UNIT_ASAN_LDADD)

# feeds synthetic changes through the real pipeline into a real engine and
# checks every document (tests/integration/t_deliver_*.sh, tests/bench)
tests_tools_deliver_driver_SOURCES = tests/tools/deliver_driver.c
tests_tools_deliver_driver_LDADD = libsearchsync.a $(DEP_LIBS)

EXTRA_DIST += tests/fixtures/search
tests_unit_test_deliver_streams_SOURCES = tests/unit/test_deliver_streams.c tests/unit/deliver_fake.h
tests_unit_test_deliver_streams_LDADD = $(UNIT_LDADD)
tests_unit_test_deliver_streams_asan_SOURCES = tests/unit/test_deliver_streams.c tests/unit/deliver_fake.h
tests_unit_test_deliver_streams_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_deliver_streams_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_deliver_streams_asan_LDADD = $(UNIT_ASAN_LDADD)
tests_unit_test_deliver_group_commit_SOURCES = tests/unit/test_deliver_group_commit.c tests/unit/deliver_fake.h
tests_unit_test_deliver_group_commit_LDADD = $(UNIT_LDADD)
tests_unit_test_deliver_group_commit_asan_SOURCES = tests/unit/test_deliver_group_commit.c tests/unit/deliver_fake.h
tests_unit_test_deliver_group_commit_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_deliver_group_commit_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_deliver_group_commit_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_deliver_refresh_SOURCES = tests/unit/test_deliver_refresh.c tests/unit/deliver_fake.h
tests_unit_test_deliver_refresh_LDADD = $(UNIT_LDADD)
tests_unit_test_deliver_refresh_asan_SOURCES = tests/unit/test_deliver_refresh.c tests/unit/deliver_fake.h
tests_unit_test_deliver_refresh_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_deliver_refresh_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_deliver_refresh_asan_LDADD = $(UNIT_ASAN_LDADD)
tests_unit_test_deliver_linger_SOURCES = tests/unit/test_deliver_linger.c tests/unit/deliver_fake.h
tests_unit_test_deliver_linger_LDADD = $(UNIT_LDADD)
tests_unit_test_deliver_linger_asan_SOURCES = tests/unit/test_deliver_linger.c tests/unit/deliver_fake.h
tests_unit_test_deliver_linger_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_deliver_linger_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_deliver_linger_asan_LDADD = $(UNIT_ASAN_LDADD)
