# sync/: the mapping model, its file and metadata tables, generated index
# bodies (issue 5, first slice), and `searchsync mapping`.
libsearchsync_a_SOURCES += \
	sync/mapping.c sync/mapping.h sync/mapping_file.c sync/mapping_db.c \
	sync/index_mapping.c sync/index_mapping.h
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
