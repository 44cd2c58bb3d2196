# sync/router: row change -> affected documents (issue 5)
libsearchsync_a_SOURCES += sync/router.c sync/router.h
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
