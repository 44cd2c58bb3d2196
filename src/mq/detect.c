/* detect: which format a message is, by the keys only that format has.
 *
 *   canal-json  "isDdl", or "data" an array with "database"/"table"/"type"
 *               (upper case) beside it, or "mysqlType"/"sqlType"/"pkNames"
 *   Debezium    "payload" (the envelope with a schema: {"schema":..,"payload":..})
 *               or "op" with "source"/"before"/"after" (without a schema), or a
 *               schema change ("ddl" with "databaseName"), a transaction
 *               marker ("status" BEGIN/END with "id"), a heartbeat (an object
 *               of "ts_ms" alone) or a notification ("aggregate_type" with
 *               "type" and "id")
 *   Maxwell     "data" an object or "type" lower case (insert, update, delete,
 *               bootstrap-*, table-*, database-*) with "database", plus
 *               Maxwell's "xid", "commit", "position", "ts" or "old"
 *
 * A message matching none, or more than one, is an error naming the keys
 * it has; the caller can name the format in the configuration instead. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mq/mq.h"

static const cJSON *key(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static bool lower_type(const char *t) {
    static const char *const p[] = {"insert", "update", "delete", "bootstrap-", "table-", "database-"};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (!strncmp(t, p[i], strlen(p[i]))) return true;
    return false;
}

int mq_detect(const cJSON *root, char *err, size_t errlen) {
    const cJSON *type = key(root, "type"), *data = key(root, "data");
    bool canal = cJSON_IsBool(key(root, "isDdl")) || key(root, "mysqlType") || key(root, "sqlType") ||
                 key(root, "pkNames") ||
                 (cJSON_IsArray(data) && key(root, "database") && cJSON_IsString(type));
    const cJSON *payload = key(root, "payload");
    bool debezium = (cJSON_IsObject(payload) || (payload && cJSON_IsNull(payload) && key(root, "schema"))) ||
                    (cJSON_IsString(key(root, "op")) &&
                     (key(root, "source") || key(root, "before") || key(root, "after"))) ||
                    (cJSON_IsString(key(root, "ddl")) && key(root, "databaseName")) ||
                    (cJSON_IsString(key(root, "status")) && key(root, "id") && key(root, "event_count")) ||
                    (cJSON_GetArraySize(root) == 1 && key(root, "ts_ms")) ||
                    (cJSON_IsString(key(root, "aggregate_type")) && cJSON_IsString(type) &&
                     key(root, "id") && !key(root, "database"));
    bool maxwell = key(root, "database") && cJSON_IsString(type) && lower_type(type->valuestring) &&
                   (cJSON_IsObject(data) || key(root, "xid") || key(root, "commit") ||
                    key(root, "position") || key(root, "ts") || key(root, "old") || key(root, "def"));
    int n = canal + debezium + maxwell;
    if (n == 1) return canal ? MQ_CANAL : debezium ? MQ_DEBEZIUM : MQ_MAXWELL;
    /* name what was seen */
    char keys[200];
    size_t l = 0;
    keys[0] = '\0';
    const cJSON *f;
    int shown = 0;
    cJSON_ArrayForEach(f, root) {
        if (shown == 12) {
            snprintf(keys + l, sizeof keys - l, ", ...");
            break;
        }
        int w = snprintf(keys + l, sizeof keys - l, "%s\"%.20s\"", shown ? ", " : "", f->string);
        if (w < 0 || (size_t)w >= sizeof keys - l) break;
        l += (size_t)w;
        shown++;
    }
    if (n == 0)
        errf(err, errlen, "the message is none of canal-json, Debezium or Maxwell (its keys: %s); "
             "set the source's format if it is one of them", keys);
    else
        errf(err, errlen, "the message could be %s%s%s%s%s (its keys: %s); set the source's format",
             canal ? "canal-json" : "", canal && (debezium || maxwell) ? " or " : "",
             debezium ? "Debezium" : "", debezium && maxwell ? " or " : "", maxwell ? "Maxwell" : "", keys);
    return MQ_AUTO;
}
