# src/ foundations: buffers, JSON writer, logging, configuration.
libsearchsync_a_SOURCES += \
	src/sbuf.c src/sbuf.h \
	src/jsonw.c src/jsonw.h \
	src/log.c src/log.h \
	src/config.c src/config.h
searchsync_SOURCES += src/commands.h src/cmd_config.c

check_PROGRAMS += tests/unit/test_jsonw tests/unit/test_jsonw_asan \
	tests/unit/test_config tests/unit/test_config_asan
TESTS += tests/unit/test_jsonw tests/unit/test_jsonw_asan \
	tests/unit/test_config tests/unit/test_config_asan
tests_unit_test_jsonw_SOURCES = tests/unit/test_jsonw.c
tests_unit_test_jsonw_LDADD = $(UNIT_LDADD)
tests_unit_test_jsonw_asan_SOURCES = tests/unit/test_jsonw.c
tests_unit_test_jsonw_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_jsonw_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_jsonw_asan_LDADD = $(UNIT_ASAN_LDADD)
tests_unit_test_config_SOURCES = tests/unit/test_config.c
tests_unit_test_config_LDADD = $(UNIT_LDADD)
tests_unit_test_config_asan_SOURCES = tests/unit/test_config.c
tests_unit_test_config_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_config_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_config_asan_LDADD = $(UNIT_ASAN_LDADD)
