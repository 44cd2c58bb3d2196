# src/binlog: the binlog reader and row decoder, `searchsync tail`, their
# unit tests (byte fixtures), the fuzz target and its corpus replay, the
# tail benchmark.
libsearchsync_a_SOURCES += \
	src/binlog/binlog.h src/binlog/internal.h \
	src/binlog/event.c src/binlog/table_map.c src/binlog/rows.c \
	src/binlog/value.c src/binlog/value_int.h src/binlog/value_text.c \
	src/binlog/value_charset.c src/binlog/value_decimal.c src/binlog/value_geometry.c \
	src/binlog/json_binary.c src/binlog/gtid.c \
	src/binlog/payload.c src/binlog/xa.c \
	src/binlog/schema.c src/binlog/schema.h \
	src/binlog/reader.c src/binlog/reader.h

check_PROGRAMS += \
	tests/unit/test_binlog_events tests/unit/test_binlog_events_asan \
	tests/unit/test_binlog_values tests/unit/test_binlog_values_asan \
	tests/unit/test_binlog_mysql8 tests/unit/test_binlog_mysql8_asan \
	tests/unit/test_value_text tests/unit/test_value_text_asan \
	tests/unit/test_gtid_version tests/unit/test_gtid_version_asan \
	tests/fuzz/replay_binlog tests/fuzz/replay_binlog_asan
TESTS += \
	tests/unit/test_binlog_events tests/unit/test_binlog_events_asan \
	tests/unit/test_binlog_values tests/unit/test_binlog_values_asan \
	tests/unit/test_binlog_mysql8 tests/unit/test_binlog_mysql8_asan \
	tests/unit/test_value_text tests/unit/test_value_text_asan \
	tests/unit/test_gtid_version tests/unit/test_gtid_version_asan \
	tests/fuzz/replay_binlog tests/fuzz/replay_binlog_asan

tests_unit_test_gtid_version_SOURCES = tests/unit/test_gtid_version.c
tests_unit_test_gtid_version_LDADD = $(UNIT_LDADD)
tests_unit_test_gtid_version_asan_SOURCES = tests/unit/test_gtid_version.c
tests_unit_test_gtid_version_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_gtid_version_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_gtid_version_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_binlog_events_SOURCES = tests/unit/test_binlog_events.c tests/unit/binlog_fixture.h
tests_unit_test_binlog_events_LDADD = $(UNIT_LDADD)
tests_unit_test_binlog_events_asan_SOURCES = $(tests_unit_test_binlog_events_SOURCES)
tests_unit_test_binlog_events_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_binlog_events_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_binlog_events_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_binlog_values_SOURCES = tests/unit/test_binlog_values.c tests/unit/binlog_fixture.h
tests_unit_test_binlog_values_LDADD = $(UNIT_LDADD)
tests_unit_test_binlog_values_asan_SOURCES = $(tests_unit_test_binlog_values_SOURCES)
tests_unit_test_binlog_values_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_binlog_values_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_binlog_values_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_binlog_mysql8_SOURCES = tests/unit/test_binlog_mysql8.c tests/unit/binlog_fixture.h
tests_unit_test_binlog_mysql8_LDADD = $(UNIT_LDADD)
tests_unit_test_binlog_mysql8_asan_SOURCES = $(tests_unit_test_binlog_mysql8_SOURCES)
tests_unit_test_binlog_mysql8_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_binlog_mysql8_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_binlog_mysql8_asan_LDADD = $(UNIT_ASAN_LDADD)

tests_unit_test_value_text_SOURCES = tests/unit/test_value_text.c tests/unit/binlog_fixture.h
tests_unit_test_value_text_LDADD = $(UNIT_LDADD)
tests_unit_test_value_text_asan_SOURCES = $(tests_unit_test_value_text_SOURCES)
tests_unit_test_value_text_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_value_text_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_value_text_asan_LDADD = $(UNIT_ASAN_LDADD)

# the fuzz corpus replayed by a plain-C driver (make check); the libFuzzer
# build of the same target runs under make check-long
tests_fuzz_replay_binlog_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_binlog.c
tests_fuzz_replay_binlog_LDADD = $(UNIT_LDADD)
tests_fuzz_replay_binlog_asan_SOURCES = $(tests_fuzz_replay_binlog_SOURCES)
tests_fuzz_replay_binlog_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_fuzz_replay_binlog_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_fuzz_replay_binlog_asan_LDADD = $(UNIT_ASAN_LDADD)
EXTRA_DIST += tests/fuzz docs/binlog.md

# libFuzzer run of the event parser (tests/local.mk defines check-long)
check-long: fuzz-binlog
FUZZ_SECONDS ?= 600
FUZZ_CC ?= clang
fuzz-binlog: $(libsearchsync_a_SOURCES)
	$(FUZZ_CC) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
	  -I$(srcdir)/src -I$(srcdir) $(MARIADB_CFLAGS) $(ZSTD_CFLAGS) $(CJSON_CFLAGS) \
	  -o tests/fuzz/fuzz_binlog_libfuzzer $(srcdir)/tests/fuzz/fuzz_binlog.c \
	  $(srcdir)/src/binlog/event.c $(srcdir)/src/binlog/table_map.c $(srcdir)/src/binlog/rows.c \
	  $(srcdir)/src/binlog/value.c $(srcdir)/src/binlog/value_text.c $(srcdir)/src/binlog/value_charset.c \
	  $(srcdir)/src/binlog/value_decimal.c $(srcdir)/src/binlog/value_geometry.c \
	  $(srcdir)/src/binlog/json_binary.c $(srcdir)/src/binlog/gtid.c \
	  $(srcdir)/src/binlog/payload.c $(srcdir)/src/binlog/xa.c $(srcdir)/src/sbuf.c $(srcdir)/src/jsonw.c $(srcdir)/src/json_exact.c \
	  $(CJSON_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS)
	mkdir -p tests/fuzz/corpus-new
	tests/fuzz/fuzz_binlog_libfuzzer -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	  tests/fuzz/corpus-new $(srcdir)/tests/fuzz/corpus
.PHONY: fuzz-binlog

# tests/bench/bench_tail.sh is run by tests/bench/run.sh (make bench); it
# uses tests/bench/bench_decode, built with the check programs.

check_PROGRAMS += tests/bench/bench_decode
tests_bench_bench_decode_SOURCES = tests/bench/bench_decode.c
tests_bench_bench_decode_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_bench_decode_LDADD = $(UNIT_LDADD)
