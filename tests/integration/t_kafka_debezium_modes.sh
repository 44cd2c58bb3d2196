#!/usr/bin/env bash
# t_kafka_debezium_modes.sh — the real Debezium connector with its other
# modes (decimal.handling.mode double and string, time.precision.mode
# connect, binary.handling.mode base64-url-safe and hex,
# bigint.unsigned.handling.mode precise): t_kafka_debezium.sh with
# KAFKA_DBZ_MODES=other, which says what each worker runs with and what is
# checked.
KAFKA_DBZ_MODES=other
. "$(dirname "$0")/t_kafka_debezium.sh"
