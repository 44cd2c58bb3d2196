# sync/: one fragment for every folder of the sync core
# (sync/README.md: pipeline/, sources/, mapping/, reindex/, delayed/, check/,
# cluster/, status/, node/). First the mapping model, its file and metadata tables,
# generated index bodies.
libsearchsync_a_SOURCES += sync/mapping/mapping.c sync/mapping/mapping.h sync/mapping/mapping_int.h \
	sync/mapping/mapping_types.c sync/mapping/mapping_validate.c \
	sync/mapping/mapping_file.c sync/mapping/mapping_db.c sync/mapping/mapping_schema.c sync/mapping/mapping_gen.c \
	sync/mapping/mapping_gen.h sync/node/node.c sync/node/node.h sync/mapping/index_mapping.c \
	sync/mapping/index_mapping.h sync/mapping/mapping_shard.c sync/mapping/mapping_shard.h \
	sync/mapping/mapping_source.c sync/mapping/mapping_source.h
# a mapping written: imported from a file (checked, planned, stored), or
# proposed from the live schema
libsearchsync_a_SOURCES += sync/authoring/mapping_import.c sync/authoring/mapping_import.h \
	sync/authoring/mapping_generate.c sync/authoring/mapping_generate.h \
	sync/authoring/source_tables.c sync/authoring/source_tables.h
# a document table's where as searchsync reads it (row-image mode decides it)
libsearchsync_a_SOURCES += sync/mapping/row_filter.c sync/mapping/row_filter_bind.c \
	sync/mapping/row_filter_eval.c sync/mapping/row_filter.h sync/mapping/row_filter_int.h
check_PROGRAMS += tests/unit/test_row_filter tests/unit/test_row_filter_asan
TESTS += tests/unit/test_row_filter tests/unit/test_row_filter_asan
tests_unit_test_row_filter_SOURCES = tests/unit/test_row_filter.c
tests_unit_test_row_filter_LDADD = $(UNIT_LDADD)
tests_unit_test_row_filter_asan_SOURCES = tests/unit/test_row_filter.c
tests_unit_test_row_filter_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_row_filter_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_row_filter_asan_LDADD = $(UNIT_ASAN_LDADD)
EXTRA_DIST += tests/fixtures/row_filter
EXTRA_DIST += tests/fixtures/mapping sql/demo/mapping.json docs/mapping.md

check_PROGRAMS += tests/unit/test_mapping_shard tests/unit/test_mapping_shard_asan
TESTS += tests/unit/test_mapping_shard tests/unit/test_mapping_shard_asan
tests_unit_test_mapping_shard_SOURCES = tests/unit/test_mapping_shard.c
tests_unit_test_mapping_shard_LDADD = $(UNIT_LDADD)
tests_unit_test_mapping_shard_asan_SOURCES = tests/unit/test_mapping_shard.c
tests_unit_test_mapping_shard_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_mapping_shard_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_mapping_shard_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_mapping_source tests/unit/test_mapping_source_asan
TESTS += tests/unit/test_mapping_source tests/unit/test_mapping_source_asan
tests_unit_test_mapping_source_SOURCES = tests/unit/test_mapping_source.c
tests_unit_test_mapping_source_LDADD = $(UNIT_LDADD)
tests_unit_test_mapping_source_asan_SOURCES = tests/unit/test_mapping_source.c
tests_unit_test_mapping_source_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_mapping_source_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_mapping_source_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_mapping tests/unit/test_mapping_asan
TESTS += tests/unit/test_mapping tests/unit/test_mapping_asan
tests_unit_test_mapping_SOURCES = tests/unit/test_mapping.c
tests_unit_test_mapping_LDADD = $(UNIT_LDADD)
tests_unit_test_mapping_asan_SOURCES = tests/unit/test_mapping.c
tests_unit_test_mapping_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_mapping_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_mapping_asan_LDADD = $(UNIT_ASAN_LDADD)

# the document builder: MySQL rows -> complete documents
libsearchsync_a_SOURCES += sync/pipeline/docbuild.c sync/pipeline/docbuild.h \
	sync/pipeline/docbuild_int.h sync/pipeline/docbuild_level.c sync/pipeline/docbuild_sql.c \
	sync/pipeline/docbuild_value.c sync/pipeline/docbuild_units.c
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

# the change router and the daemon
libsearchsync_a_SOURCES += sync/pipeline/router.c sync/pipeline/router.h sync/pipeline/router_int.h \
	sync/pipeline/router_sql.c
# where a source's sync stands: `searchsync status` and GET /api/v1/status
libsearchsync_a_SOURCES += sync/status/status.c sync/status/status_json.c sync/status/status_figures.c \
	sync/status/status_figures.h sync/status/status.h sync/status/status_sources.c \
	sync/status/status_sources.h sync/status/status_lists.c sync/status/status_lists.h \
	sync/status/status_indices.c sync/status/status_indices.h
# the node's subsystems and request thread
check_PROGRAMS += tests/unit/test_node tests/unit/test_node_asan
TESTS += tests/unit/test_node tests/unit/test_node_asan
tests_unit_test_node_SOURCES = tests/unit/test_node.c
tests_unit_test_node_LDADD = $(UNIT_LDADD)
tests_unit_test_node_asan_SOURCES = tests/unit/test_node.c
tests_unit_test_node_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_node_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_node_asan_LDADD = $(UNIT_ASAN_LDADD)
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
# row-image documents of rows with values a message could not give with certainty
check_PROGRAMS += tests/unit/test_row_image tests/unit/test_row_image_asan
TESTS += tests/unit/test_row_image tests/unit/test_row_image_asan
tests_unit_test_row_image_SOURCES = tests/unit/test_row_image.c
tests_unit_test_row_image_LDADD = $(UNIT_LDADD)
tests_unit_test_row_image_asan_SOURCES = tests/unit/test_row_image.c
tests_unit_test_row_image_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_row_image_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_row_image_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/tools/route_dump
tests_tools_route_dump_SOURCES = tests/tools/route_dump.c
tests_tools_route_dump_LDADD = libsearchsync.a $(DEP_LIBS)
# the server behaviour behind binlog_wait_xa_engine_commit (sync/sources/binlog_visible.c)
check_PROGRAMS += tests/tools/xa_visibility
tests_tools_xa_visibility_SOURCES = tests/tools/xa_visibility.c
tests_tools_xa_visibility_LDADD = $(DEP_LIBS)
# the pipeline every producer of change sets shares (route -> build -> deliver)
libsearchsync_a_SOURCES += sync/pipeline/changeset.c sync/pipeline/changeset.h \
	sync/pipeline/pipeline.c sync/pipeline/pipeline.h sync/pipeline/targets.c \
	sync/pipeline/gtid_version.c sync/pipeline/gtid_version.h sync/pipeline/image.c \
	sync/pipeline/row_image.c sync/pipeline/change_snapshots.c sync/pipeline/child_copies.c \
	sync/pipeline/area_update.c sync/pipeline/xa_prepared.c sync/pipeline/xa_prepared.h \
	sync/pipeline/read_view.c sync/pipeline/read_view.h
# `searchsync run`: the binlog producer, the supervisor, start-up and shutdown
searchsync_SOURCES += sync/node/daemon.c sync/node/daemon.h sync/node/daemon_subsystems.c \
	sync/node/daemon_reader.c sync/node/daemon_source.c sync/node/replay_schedule.c \
	sync/sources/source.h sync/sources/binlog_source.c sync/sources/binlog_source.h \
	sync/sources/binlog_start.c sync/sources/binlog_visible.c \
	sync/sources/kafka_source.c sync/sources/kafka_source.h sync/sources/kafka_source_int.h \
	sync/sources/kafka_subscribe.c sync/sources/kafka_unassigned.c sync/sources/kafka_visible.c \
	sync/sources/kafka_unassigned.h sync/sources/kafka_close.c sync/sources/kafka_close.h \
	sync/node/supervisor.c sync/node/supervisor_mapping.c sync/node/supervisor.h sync/node/reload.c sync/node/reload.h \
	sync/node/index_stop.c sync/node/index_stop.h sync/node/schema_watch.c sync/node/schema_watch.h \
	sync/node/node_state.c sync/node/node_state.h sync/cluster/leadership.c \
	sync/cluster/leadership.h sync/pipeline/ttl.c sync/pipeline/ttl.h \
	sync/cluster/cluster_jobs.c sync/cluster/cluster_jobs.h \
	sync/cluster/cluster_delayed.c sync/cluster/cluster_delayed.h \
	sync/node/daemon_builds.c sync/node/build_table.c sync/node/build_table.h \
	sync/node/index_ensure.c sync/node/index_ensure.h

# full reindex into versioned indices, resync
libsearchsync_a_SOURCES += sync/reindex/reindex.c sync/reindex/reindex.h sync/reindex/reindex_end.c \
	sync/reindex/reindex_buckets.c \
	sync/reindex/reindex_int.h sync/reindex/reindex_runner.c sync/reindex/reindex_runner_int.h \
	sync/reindex/reindex_runner_load.c sync/reindex/reindex_page_read.c \
	sync/reindex/reindex_slots.c \
	sync/reindex/reindex_version.c sync/reindex/reindex_health.c \
	sync/reindex/reindex_read_from.c
# a shard that joins read into the live version (in the library: its health is unit-tested)
libsearchsync_a_SOURCES += sync/node/shard_join.c sync/node/shard_join.h \
	sync/node/emptied_store.c sync/node/emptied_store.h
libsearchsync_a_SOURCES += sync/pipeline/producer.c sync/pipeline/producer.h \
	sync/pipeline/resync.c sync/pipeline/resync.h \
	sync/pipeline/streams.c sync/pipeline/streams.h
# a cluster's rebalance in the metadata (the nodes' side is sync/cluster/cluster_jobs.c)
libsearchsync_a_SOURCES += sync/cluster/job_assign.c sync/cluster/job_assign.h
# the node's operations, typed: called by the admin API (web/) and the commands
libsearchsync_a_SOURCES += sync/ops/ops.c sync/ops/ops.h sync/ops/ops_reindex.c \
	sync/ops/ops_reindex.h sync/ops/ops_resync.c sync/ops/ops_resync.h sync/ops/ops_mapping.c \
	sync/ops/ops_mapping.h sync/ops/ops_assign.c sync/ops/ops_assign.h sync/ops/ops_replay.c \
	sync/ops/ops_replay.h sync/ops/ops_sources.c sync/ops/ops_sources.h \
	sync/ops/ops_source_check.c sync/ops/ops_source_ini.c sync/ops/ops_source_list.c

# the analyzer's dynamic words, as operations (web/words.c translates them)
libsearchsync_a_SOURCES += sync/ops/ops_words.c sync/ops/ops_words.h

# the delayed run: change snapshots -> relation tops -> bucketed jobs
libsearchsync_a_SOURCES += sync/delayed/delayed.h sync/delayed/relation_tops.c \
	sync/delayed/delayed_run.c sync/delayed/delayed_resolve.c sync/delayed/delayed_run_int.h sync/delayed/delayed_job.c sync/delayed/delayed_stats.c

# the consistency check and repair (in the library: resync, an operation,
# writes over versions raised by hand as the repair does)
libsearchsync_a_SOURCES += sync/check/check_diff.c sync/check/check_diff.h \
	sync/check/check_versions.c sync/check/check_versions.h sync/pipeline/ddl_tables.c \
	sync/pipeline/ddl_tables.h \
	sync/check/check.c sync/check/check.h sync/check/check_int.h \
	sync/check/check_run.c sync/check/check_engine.c sync/check/check_verify.c \
	sync/check/check_repair.c sync/check/check_report.c sync/check/check_settle.c
searchsync_SOURCES += \
	sync/check/check_schedule.c sync/check/check_schedule.h \
	sync/delayed/delayed_schedule.c sync/delayed/delayed_schedule.h \
	sync/node/retention.c sync/node/retention.h
check_PROGRAMS += tests/unit/test_check_diff tests/unit/test_check_diff_asan
TESTS += tests/unit/test_check_diff tests/unit/test_check_diff_asan
tests_unit_test_check_diff_SOURCES = tests/unit/test_check_diff.c
tests_unit_test_check_diff_LDADD = $(UNIT_LDADD)
tests_unit_test_check_diff_asan_SOURCES = tests/unit/test_check_diff.c
tests_unit_test_check_diff_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_check_diff_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_check_diff_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_ddl_tables tests/unit/test_ddl_tables_asan
TESTS += tests/unit/test_ddl_tables tests/unit/test_ddl_tables_asan
tests_unit_test_ddl_tables_SOURCES = tests/unit/test_ddl_tables.c
tests_unit_test_ddl_tables_LDADD = $(UNIT_LDADD)
tests_unit_test_ddl_tables_asan_SOURCES = tests/unit/test_ddl_tables.c
tests_unit_test_ddl_tables_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_ddl_tables_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_ddl_tables_asan_LDADD = $(UNIT_ASAN_LDADD)
check_PROGRAMS += tests/unit/test_read_view tests/unit/test_read_view_asan
TESTS += tests/unit/test_read_view tests/unit/test_read_view_asan
tests_unit_test_read_view_SOURCES = tests/unit/test_read_view.c
tests_unit_test_read_view_LDADD = $(UNIT_LDADD)
tests_unit_test_read_view_asan_SOURCES = tests/unit/test_read_view.c
tests_unit_test_read_view_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_read_view_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_read_view_asan_LDADD = $(UNIT_ASAN_LDADD)
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
libsearchsync_a_SOURCES += sync/sources/reader_stats.c sync/sources/reader_stats.h \
	sync/sources/kafka_live.c sync/sources/kafka_live.h

# what each folder of sync/ owns and may include
EXTRA_DIST += \
	sync/README.md \
	sync/check/README.md \
	sync/authoring/README.md \
	sync/cluster/README.md \
	sync/delayed/README.md \
	sync/mapping/README.md \
	sync/node/README.md \
	sync/ops/README.md \
	sync/status/README.md \
	sync/pipeline/README.md \
	sync/reindex/README.md \
	sync/sources/README.md

# a source added at run time: its configuration derived from the adder's
check_PROGRAMS += tests/unit/test_source_ini tests/unit/test_source_ini_asan
TESTS += tests/unit/test_source_ini tests/unit/test_source_ini_asan
tests_unit_test_source_ini_SOURCES = tests/unit/test_source_ini.c
tests_unit_test_source_ini_LDADD = $(UNIT_LDADD)
tests_unit_test_source_ini_asan_SOURCES = tests/unit/test_source_ini.c
tests_unit_test_source_ini_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_source_ini_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_source_ini_asan_LDADD = $(UNIT_ASAN_LDADD)
