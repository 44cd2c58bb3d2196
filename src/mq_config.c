/* mq_config: mq_opts from [kafka] (see mq_config.h). */
#include "mq_config.h"

#include <string.h>

/* the index of value in the |-list choices, plus one; 0 when unset */
static int pick(const char *value, const char *const *choices, const int *codes) {
    if (!value || !*value) return 0;
    for (int i = 0; choices[i]; i++)
        if (!strcmp(value, choices[i])) return codes[i];
    return 0;
}

void mq_config_opts(const struct ss_config *cfg, mq_opts *o) {
    for (int f = 0; f < 4; f++)
        if (cfg->kafka.format && !strcmp(cfg->kafka.format, mq_format_name[f])) o->format = f;
    config_parse_tz_offset(cfg->kafka.canal_tz_offset, &o->canal_tz_offset);
    static const char *const dec[] = {"precise", "string", "double", NULL};
    static const int dec_codes[] = {MQ_DBZ_DEC_PRECISE, MQ_DBZ_DEC_STRING, MQ_DBZ_DEC_DOUBLE};
    static const char *const tm[] = {"adaptive_time_microseconds", "connect", NULL};
    static const int tm_codes[] = {MQ_DBZ_TIME_MICROS, MQ_DBZ_TIME_CONNECT};
    /* bytes, base64 and base64-url-safe all come as base64 text in JSON */
    static const char *const bin[] = {"bytes", "base64", "base64-url-safe", "hex", NULL};
    static const int bin_codes[] = {MQ_DBZ_BIN_BASE64, MQ_DBZ_BIN_BASE64, MQ_DBZ_BIN_BASE64,
                                    MQ_DBZ_BIN_HEX};
    o->dbz_decimal = pick(cfg->kafka.dbz_decimal, dec, dec_codes);
    o->dbz_time = pick(cfg->kafka.dbz_time, tm, tm_codes);
    o->dbz_binary = pick(cfg->kafka.dbz_binary, bin, bin_codes);
}
