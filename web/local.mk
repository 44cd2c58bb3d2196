# web/: the admin HTTP server inside `searchsync run` (libmicrohttpd: the
# server http_server.c, its answers http_response.c, the checks a request
# passes http_checks.c, its sockets http_bind.c), its request guards and
# routing (pure, unit-tested) and the JSON API handlers. Below cmd/ only:
# it includes src/, rebalance/ and sync/, nothing includes it but cmd/main.c.
libsearchsync_a_SOURCES += \
	web/guard.c web/guard.h \
	web/route.c web/route.h \
	web/stmt.c web/stmt.h \
	web/api.c web/api.h \
	web/metrics.c web/metrics.h \
	web/admission.c web/admission.h \
	web/session.c web/session.h \
	web/ratelimit.c web/ratelimit.h \
	web/words.c web/words.h \
	web/dead_letters_api.c web/dead_letters_api.h \
	web/mapping_api.c web/mapping_api.h \
	web/table_ops_api.c web/table_ops_api.h \
	web/topics_api.c web/topics_api.h \
	web/sources_api.c web/sources_api.h \
	web/login_page.c web/login_page.h \
	web/ui_assets.c web/ui_assets.h \
	web/http_server.c web/http_server.h web/http_int.h web/http_response.c web/http_checks.c \
	web/http_bind.c
EXTRA_DIST += docs/http-api.md

# the web UI (web/ui/: HTML, CSS, one ES module per screen) compiled into
# the binary: web/ui_files.c is generated from the files by web/ui/embed.sh
nodist_libsearchsync_a_SOURCES += web/ui_files.c
nodist_libsearchsync_asan_a_SOURCES += web/ui_files.c
BUILT_SOURCES += web/ui_files.c
CLEANFILES += web/ui_files.c
UI_FILES = $(sort $(wildcard $(srcdir)/web/ui/*.html $(srcdir)/web/ui/*.css \
	$(srcdir)/web/ui/*.js $(srcdir)/web/ui/*.svg $(srcdir)/web/ui/screens/*.js))
EXTRA_DIST += web/ui
web/ui_files.c: $(UI_FILES) $(srcdir)/web/ui/embed.sh
	$(AM_V_GEN)$(MKDIR_P) web && sh $(srcdir)/web/ui/embed.sh $@ $(srcdir)/web/ui $(UI_FILES)

check_PROGRAMS += tests/unit/test_web tests/unit/test_web_asan
TESTS += tests/unit/test_web tests/unit/test_web_asan
tests_unit_test_web_SOURCES = tests/unit/test_web.c
tests_unit_test_web_LDADD = $(UNIT_LDADD)
tests_unit_test_web_asan_SOURCES = tests/unit/test_web.c
tests_unit_test_web_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_web_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_web_asan_LDADD = $(UNIT_ASAN_LDADD)
