# sync/: the pipelines: the mapping model, its file and metadata tables,
# generated index bodies, the document builder, the change router, the daemon.
libsearchsync_a_SOURCES += \
	sync/mapping.c sync/mapping.h sync/mapping_file.c sync/mapping_db.c \
	sync/mapping_gen.c sync/mapping_gen.h sync/node.c sync/node.h \
	sync/index_mapping.c sync/index_mapping.h \
	sync/mapping_import.c sync/mapping_import.h \
	sync/mapping_generate.c sync/mapping_generate.h
searchsync_SOURCES += sync/cmd_mapping.c
EXTRA_DIST += tests/fixtures/mapping sql/demo/mapping.json docs/mapping.md

check_PROGRAMS += tests/unit/test_mapping tests/unit/test_mapping_asan
TESTS += tests/unit/test_mapping tests/unit/test_mapping_asan
tests_unit_test_mapping_SOURCES = tests/unit/test_mapping.c
tests_unit_test_mapping_LDADD = $(UNIT_LDADD)
tests_unit_test_mapping_asan_SOURCES = tests/unit/test_mapping.c
tests_unit_test_mapping_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_mapping_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_mapping_asan_LDADD = $(UNIT_ASAN_LDADD)

# the document builder (issue 5): MySQL rows -> complete documents
libsearchsync_a_SOURCES += sync/docbuild.c sync/docbuild.h sync/docbuild_int.h sync/docbuild_level.c \
	sync/docbuild_sql.c sync/docbuild_value.c
check_PROGRAMS += tests/unit/test_docbuild tests/unit/test_docbuild_asan tests/tools/docbuild_dump \
	tests/tools/docbuild_dump_asan
TESTS += tests/unit/test_docbuild tests/unit/test_docbuild_asan
tests_unit_test_docbuild_SOURCES = tests/unit/test_docbuild.c
tests_unit_test_docbuild_LDADD = $(UNIT_LDADD)
tests_unit_test_docbuild_asan_SOURCES = tests/unit/test_docbuild.c
tests_unit_test_docbuild_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_docbuild_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_docbuild_asan_LDADD = $(UNIT_ASAN_LDADD)
tests_tools_docbuild_dump_SOURCES = tests/tools/docbuild_dump.c
tests_tools_docbuild_dump_LDADD = libsearchsync.a $(DEP_LIBS)
tests_tools_docbuild_dump_asan_SOURCES = tests/tools/docbuild_dump.c
tests_tools_docbuild_dump_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_tools_docbuild_dump_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_tools_docbuild_dump_asan_LDADD = libsearchsync_asan.a $(DEP_LIBS)

# the change router and the daemon (issue 5)
libsearchsync_a_SOURCES += sync/router.c sync/router.h
# where a source's sync stands: `searchsync status` and GET /api/v1/status
libsearchsync_a_SOURCES += sync/status.c sync/status.h
check_PROGRAMS += tests/unit/test_status tests/unit/test_status_asan
TESTS += tests/unit/test_status tests/unit/test_status_asan
tests_unit_test_status_SOURCES = tests/unit/test_status.c
tests_unit_test_status_LDADD = $(UNIT_LDADD)
tests_unit_test_status_asan_SOURCES = tests/unit/test_status.c
tests_unit_test_status_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_status_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_status_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_router tests/unit/test_router_asan
TESTS += tests/unit/test_router tests/unit/test_router_asan
tests_unit_test_router_SOURCES = tests/unit/test_router.c
tests_unit_test_router_LDADD = $(UNIT_LDADD)
tests_unit_test_router_asan_SOURCES = tests/unit/test_router.c
tests_unit_test_router_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_router_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_router_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/tools/route_dump
tests_tools_route_dump_SOURCES = tests/tools/route_dump.c
tests_tools_route_dump_LDADD = libsearchsync.a $(DEP_LIBS)
# the server behaviour behind wait_xa_engine_commit (sync/binlog_source.c)
check_PROGRAMS += tests/tools/xa_visibility
tests_tools_xa_visibility_SOURCES = tests/tools/xa_visibility.c
tests_tools_xa_visibility_LDADD = $(DEP_LIBS)
# the pipeline every producer of change sets shares (route -> build -> deliver)
libsearchsync_a_SOURCES += sync/changeset.c sync/changeset.h sync/pipeline.c sync/pipeline.h \
	sync/targets.c sync/gtid_version.c sync/gtid_version.h sync/image.c sync/row_image.c sync/change_snapshots.c sync/child_copies.c sync/area_update.c \
	sync/xa_prepared.c sync/xa_prepared.h
# `searchsync run`: the binlog producer, the supervisor, start-up and shutdown
searchsync_SOURCES += sync/daemon.c sync/daemon.h sync/binlog_source.c sync/kafka_source.c sync/kafka_source.h \
	sync/kafka_unassigned.c sync/kafka_unassigned.h sync/kafka_close.c sync/kafka_close.h \
	sync/supervisor.c sync/reload.c \
	sync/index_stop.c sync/index_stop.h sync/node_state.c sync/node_state.h \
	sync/leadership.c sync/leadership.h sync/ttl.c sync/ttl.h \
	sync/cluster_jobs.c sync/cluster_jobs.h sync/cluster_delayed.c sync/cluster_delayed.h \
	sync/cmd_rebalance.c \
	sync/daemon_builds.c sync/cmd_epoch.c sync/cmd_status.c

# full reindex into versioned indices, resync (issue 6)
libsearchsync_a_SOURCES += sync/reindex.c sync/reindex.h sync/reindex_int.h sync/reindex_runner.c \
	sync/reindex_runner_int.h sync/reindex_version.c
searchsync_SOURCES += sync/cmd_reindex.c sync/cmd_resync.c
libsearchsync_a_SOURCES += sync/producer.c sync/producer.h sync/resync.c sync/resync.h
# a cluster's rebalance in the metadata (the nodes' side is sync/cluster_jobs.c)
libsearchsync_a_SOURCES += sync/job_assign.c sync/job_assign.h

# the delayed run (issue 22): change snapshots -> relation tops -> bucketed jobs
libsearchsync_a_SOURCES += sync/delayed.h sync/relation_tops.c sync/delayed_run.c \
	sync/delayed_stats.c
searchsync_SOURCES += sync/cmd_delayed.c

# the consistency check and repair (issue 23)
libsearchsync_a_SOURCES += sync/check_diff.c sync/check_diff.h sync/check_versions.c sync/check_versions.h sync/ddl_truncate.c sync/ddl_truncate.h
searchsync_SOURCES += sync/check.c sync/check.h sync/check_report.c sync/check_settle.c sync/cmd_check.c sync/cmd_replay.c sync/check_schedule.c sync/check_schedule.h \
	sync/schedule.c sync/schedule.h sync/delayed_schedule.c sync/delayed_schedule.h \
	sync/retention.c sync/retention.h
check_PROGRAMS += tests/unit/test_check_diff tests/unit/test_check_diff_asan
TESTS += tests/unit/test_check_diff tests/unit/test_check_diff_asan
tests_unit_test_check_diff_SOURCES = tests/unit/test_check_diff.c
tests_unit_test_check_diff_LDADD = $(UNIT_LDADD)
tests_unit_test_check_diff_asan_SOURCES = tests/unit/test_check_diff.c
tests_unit_test_check_diff_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_check_diff_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_check_diff_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_ddl_truncate tests/unit/test_ddl_truncate_asan
TESTS += tests/unit/test_ddl_truncate tests/unit/test_ddl_truncate_asan
tests_unit_test_ddl_truncate_SOURCES = tests/unit/test_ddl_truncate.c
tests_unit_test_ddl_truncate_LDADD = $(UNIT_LDADD)
tests_unit_test_ddl_truncate_asan_SOURCES = tests/unit/test_ddl_truncate.c
tests_unit_test_ddl_truncate_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_ddl_truncate_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_ddl_truncate_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_reindex tests/unit/test_reindex_asan
TESTS += tests/unit/test_reindex tests/unit/test_reindex_asan
tests_unit_test_reindex_SOURCES = tests/unit/test_reindex.c
tests_unit_test_reindex_LDADD = $(UNIT_LDADD)
tests_unit_test_reindex_asan_SOURCES = tests/unit/test_reindex.c
tests_unit_test_reindex_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_reindex_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_reindex_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_xa_prepared tests/unit/test_xa_prepared_asan
TESTS += tests/unit/test_xa_prepared tests/unit/test_xa_prepared_asan
tests_unit_test_xa_prepared_SOURCES = tests/unit/test_xa_prepared.c
tests_unit_test_xa_prepared_LDADD = $(UNIT_LDADD)
tests_unit_test_xa_prepared_asan_SOURCES = tests/unit/test_xa_prepared.c
tests_unit_test_xa_prepared_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_xa_prepared_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_xa_prepared_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_changeset tests/unit/test_changeset_asan
TESTS += tests/unit/test_changeset tests/unit/test_changeset_asan
tests_unit_test_changeset_SOURCES = tests/unit/test_changeset.c
tests_unit_test_changeset_LDADD = $(UNIT_LDADD)
tests_unit_test_changeset_asan_SOURCES = tests/unit/test_changeset.c
tests_unit_test_changeset_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_changeset_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_changeset_asan_LDADD = $(UNIT_ASAN_LDADD)

# the binlog reader's figures for /metrics (web/metrics.c)
libsearchsync_a_SOURCES += sync/reader_stats.c sync/reader_stats.h sync/kafka_live.c sync/kafka_live.h
