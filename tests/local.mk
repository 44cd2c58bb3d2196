# tests/: the integration suite (real servers, started by tests/harness/),
# long runs and benchmarks. Unit tests are listed beside their modules.
TESTS += tests/cli/t_cli.sh tests/cli/t_demo.sh tests/cli/t_docs_config.sh tests/cli/t_docs_metrics.sh tests/cli/t_messages.sh tests/cli/t_install.sh \
	tests/cli/t_layers.sh tests/cli/t_code_size.sh \
	tests/cli/t_ci_skip.sh tests/cli/t_kafka_doc.sh \
	tests/integration/suite.sh
EXTRA_DIST += tests/cli tests/integration tests/harness tests/bench tests/fixtures tests/packaging debian \
	tests/no_skip_in_ci.sh tests/tools/fault_proxy.py tests/tools/debezium_capture.sh \
	tests/tools/maxwell_capture.sh tests/tools/canal_capture.sh
EXTRA_DIST += tests/README.md

# long runs: fuzzing, soak and fault loops, large scenarios
CHECK_LONG_TARGETS =
check-long: all $(check_PROGRAMS) $(CHECK_LONG_TARGETS)
	SEARCHSYNC_LONG=1 SEARCHSYNC_BIN=$(abs_top_builddir)/searchsync \
	  SUITE_TEST_TIMEOUT=$${SUITE_TEST_TIMEOUT:-5400} \
	  SEARCHSYNC_SRCDIR=$(abs_top_srcdir) bash $(srcdir)/tests/integration/suite.sh --long
	SEARCHSYNC_SRCDIR=$(abs_top_srcdir) bash $(srcdir)/tests/packaging/deb.sh

# the load tier: the randomized oracle tests on a busy box (CPU burners at
# twice the cores, the engine's bulk requests held by a proxy, the engine
# paused now and then: tests/harness/load.sh), each with LOAD_SEEDS fresh
# seeds (printed); LOAD_TESTS picks others (suite.sh FILTERs)
LOAD_TESTS_DEFAULT = t_run_random t_run_grouped t_reindex t_run_ddl t_run_drop_joined \
	t_run_schema_change t_run_truncate t_run_on_purged t_kafka_sync t_kafka_backlog t_kafka_debezium \
	t_kafka_maxwell t_kafka_canal t_kafka_visible t_cluster \
	t_run_online_schema_change t_source_outage t_run_shards t_run_root_filter t_multi_source
check-load: all $(check_PROGRAMS)
	SEARCHSYNC_BIN=$(abs_top_builddir)/searchsync SEARCHSYNC_SRCDIR=$(abs_top_srcdir) \
	  SUITE_TEST_TIMEOUT=$${SUITE_TEST_TIMEOUT:-2400} \
	  bash $(srcdir)/tests/integration/suite.sh --load --seeds $${LOAD_SEEDS:-3} \
	  $${LOAD_TESTS:-$(LOAD_TESTS_DEFAULT)}

# the integration suite against the daemon built with ASan + UBSan (any
# report ends the process, so the test fails): memory errors that a plain
# build survives most of the time, such as a callback that runs during a
# shutdown; leaks are left to the sanitized unit tests (a daemon killed by
# a test reports what it held). SUITE_ARGS picks tests (suite.sh FILTERs).
EXTRA_PROGRAMS = searchsync_san
searchsync_san_SOURCES = $(searchsync_SOURCES)
searchsync_san_CFLAGS = $(UNIT_ASAN_CFLAGS)
searchsync_san_LDFLAGS = $(SAN_FLAGS)
searchsync_san_LDADD = libsearchsync_asan.a $(DEP_LIBS)
CLEANFILES += searchsync_san
check-sanitized: all $(check_PROGRAMS) searchsync_san
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  SEARCHSYNC_BIN=$(abs_top_builddir)/searchsync_san SEARCHSYNC_SRCDIR=$(abs_top_srcdir) \
	  SUITE_TEST_TIMEOUT=$${SUITE_TEST_TIMEOUT:-2400} \
	  bash $(srcdir)/tests/integration/suite.sh $${SUITE_ARGS:-}

# benchmarks; figures go to docs/benchmarks.md
BENCH_TARGETS =
bench: all $(check_PROGRAMS) $(BENCH_TARGETS)
	SEARCHSYNC_BIN=$(abs_top_builddir)/searchsync SEARCHSYNC_SRCDIR=$(abs_top_srcdir) \
	  bash $(srcdir)/tests/bench/run.sh

.PHONY: check-long check-load check-sanitized bench

# whole directories are distributed (EXTRA_DIST above): what a build or a
# test run left in them in the source tree stays out of the tarball
dist-hook:
	find $(distdir)/tests $(distdir)/debian \( -name '*.o' -o -name '*.log' -o -name '*.trs' \
	  -o -name '.deps' -o -name '.dirstamp' -o -name 'fuzz_binlog_libfuzzer' \) -prune \
	  -exec rm -rf {} +
	rm -rf $(distdir)/debian/.debhelper $(distdir)/debian/searchsync $(distdir)/debian/files \
	  $(distdir)/debian/*.substvars $(distdir)/debian/*.log $(distdir)/debian/debhelper-build-stamp
