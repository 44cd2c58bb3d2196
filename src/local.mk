# src/ foundations: buffers, JSON writer, logging, configuration.
libsearchsync_a_SOURCES += \
	src/sbuf.c src/sbuf.h \
	src/strset.c src/strset.h \
	src/jsonw.c src/jsonw.h \
	src/json_exact.c src/json_exact.h \
	src/log.c src/log.h src/log_syslog.c src/log_syslog.h \
	src/signals.c src/signals.h src/monotime.h \
	src/invariant.c src/invariant.h src/exit_codes.h src/liveness.c src/liveness.h \
	src/service_notify.c src/service_notify.h \
	src/config.c src/config.h src/config_keys.c src/cred_refused.c src/cred_refused.h \
	src/search_auth.c src/search/sha256.c src/search/sha256.h \
	src/search/index_version.c src/search/index_version.h
# a task on a timetable of its own (the scheduled check, the scheduled delayed run)
libsearchsync_a_SOURCES += src/schedule.c src/schedule.h

check_PROGRAMS += tests/unit/test_jsonw tests/unit/test_jsonw_asan \
	tests/unit/test_config tests/unit/test_config_asan \
	tests/unit/test_log tests/unit/test_log_asan
TESTS += tests/unit/test_jsonw tests/unit/test_jsonw_asan \
	tests/unit/test_config tests/unit/test_config_asan \
	tests/unit/test_log tests/unit/test_log_asan
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
tests_unit_test_log_SOURCES = tests/unit/test_log.c
tests_unit_test_log_LDADD = $(UNIT_LDADD)
tests_unit_test_log_asan_SOURCES = tests/unit/test_log.c
tests_unit_test_log_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_log_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_log_asan_LDADD = $(UNIT_ASAN_LDADD)

# query connections and the metadata schema; migrations are embedded
libsearchsync_a_SOURCES += src/db.c src/db.h src/stmt_binds.c src/stmt_binds.h src/stmt.c src/stmt.h src/db_tls.c src/db_tls.h src/source_grants.c src/source_grants.h
nodist_libsearchsync_a_SOURCES = src/migrations.c
nodist_libsearchsync_asan_a_SOURCES = src/migrations.c
BUILT_SOURCES = src/migrations.c
CLEANFILES += src/migrations.c
MIGRATION_FILES = $(sort $(wildcard $(srcdir)/sql/migrations/*.sql))
EXTRA_DIST += sql/embed.sh sql/migrations
src/migrations.c: $(MIGRATION_FILES) $(srcdir)/sql/embed.sh
	$(AM_V_GEN)$(MKDIR_P) src && sh $(srcdir)/sql/embed.sh $@ $(MIGRATION_FILES)

check_PROGRAMS += tests/unit/test_db tests/unit/test_db_asan
TESTS += tests/unit/test_db tests/unit/test_db_asan
tests_unit_test_db_SOURCES = tests/unit/test_db.c
tests_unit_test_db_LDADD = $(UNIT_LDADD)
tests_unit_test_db_asan_SOURCES = tests/unit/test_db.c
tests_unit_test_db_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_db_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_db_asan_LDADD = $(UNIT_ASAN_LDADD)

check_PROGRAMS += tests/unit/test_json_exact tests/unit/test_json_exact_asan
TESTS += tests/unit/test_json_exact tests/unit/test_json_exact_asan
tests_unit_test_json_exact_SOURCES = tests/unit/test_json_exact.c
tests_unit_test_json_exact_LDADD = $(UNIT_LDADD)
tests_unit_test_json_exact_asan_SOURCES = tests/unit/test_json_exact.c
tests_unit_test_json_exact_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_json_exact_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_json_exact_asan_LDADD = $(UNIT_ASAN_LDADD)

# systemd's notify protocol (src/service_notify.c)
check_PROGRAMS += tests/unit/test_service_notify tests/unit/test_service_notify_asan
TESTS += tests/unit/test_service_notify tests/unit/test_service_notify_asan
tests_unit_test_service_notify_SOURCES = tests/unit/test_service_notify.c
tests_unit_test_service_notify_LDADD = $(UNIT_LDADD)
tests_unit_test_service_notify_asan_SOURCES = tests/unit/test_service_notify.c
tests_unit_test_service_notify_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_service_notify_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_service_notify_asan_LDADD = $(UNIT_ASAN_LDADD)

# src/mq: decoders of Kafka change messages (canal-json, Debezium, Maxwell)
# into the binlog decoder's tables and row images
libsearchsync_a_SOURCES += \
	src/mq/mq.h src/mq/msg.c src/mq/detect.c src/mq/coltype.c src/mq/cell.c \
	src/mq/canal.c src/mq/debezium.c src/mq/debezium_int.h src/mq/debezium_encode.c \
	src/mq/debezium_value.c src/mq/maxwell.c src/mq/absent.c
EXTRA_DIST += tests/fixtures/mq docs/kafka.md
# `searchsync kafka-tail`: the topics read with librdkafka, decoded, printed
libsearchsync_a_SOURCES += src/mq_schema.c src/mq_schema.h src/mq_config.c src/mq_config.h \
	src/kafka_conf.c src/kafka_conf.h \
	src/kafka_token.c src/kafka_token.h src/kafka_topics.c src/kafka_topics.h

# the resume token of a Kafka source (src/kafka_token.c)
check_PROGRAMS += tests/unit/test_kafka_token tests/unit/test_kafka_token_asan
TESTS += tests/unit/test_kafka_token tests/unit/test_kafka_token_asan
tests_unit_test_kafka_token_SOURCES = tests/unit/test_kafka_token.c
tests_unit_test_kafka_token_LDADD = $(UNIT_LDADD)
tests_unit_test_kafka_token_asan_SOURCES = tests/unit/test_kafka_token.c
tests_unit_test_kafka_token_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_kafka_token_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_kafka_token_asan_LDADD = $(UNIT_ASAN_LDADD)

# a Kafka source's client settings: [kafka]'s security keys, client_properties
check_PROGRAMS += tests/unit/test_kafka_conf tests/unit/test_kafka_conf_asan
TESTS += tests/unit/test_kafka_conf tests/unit/test_kafka_conf_asan
tests_unit_test_kafka_conf_SOURCES = tests/unit/test_kafka_conf.c
tests_unit_test_kafka_conf_LDADD = $(UNIT_LDADD)
tests_unit_test_kafka_conf_asan_SOURCES = tests/unit/test_kafka_conf.c
tests_unit_test_kafka_conf_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_kafka_conf_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_kafka_conf_asan_LDADD = $(UNIT_ASAN_LDADD)

check_PROGRAMS += tests/unit/test_mq tests/unit/test_mq_asan
TESTS += tests/unit/test_mq tests/unit/test_mq_asan
tests_unit_test_mq_SOURCES = tests/unit/test_mq.c
tests_unit_test_mq_LDADD = $(UNIT_LDADD)
tests_unit_test_mq_asan_SOURCES = tests/unit/test_mq.c
tests_unit_test_mq_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_mq_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_mq_asan_LDADD = $(UNIT_ASAN_LDADD)

# the node's health: a thread's beats and named waits (src/liveness.c), a
# schedule's, the node's requests, the admin server's reaper, the reader's
check_PROGRAMS += tests/unit/test_health tests/unit/test_health_asan
TESTS += tests/unit/test_health tests/unit/test_health_asan
tests_unit_test_health_SOURCES = tests/unit/test_health.c
tests_unit_test_health_LDADD = $(UNIT_LDADD)
tests_unit_test_health_asan_SOURCES = tests/unit/test_health.c
tests_unit_test_health_asan_CFLAGS = $(UNIT_ASAN_CFLAGS)
tests_unit_test_health_asan_LDFLAGS = $(UNIT_ASAN_LDFLAGS)
tests_unit_test_health_asan_LDADD = $(UNIT_ASAN_LDADD)
