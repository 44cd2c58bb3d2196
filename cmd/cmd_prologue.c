/* cmd_prologue: what every subcommand does first (struct command in
 * commands.h): --config FILE and --help parsed beside the subcommand's own
 * options, the configuration loaded, the log set from it, the metadata
 * schema connected and migrated where needed, and all of it ended again. */
#include <stdarg.h>
#include <string.h>

#include "commands.h"
#include "db.h"
#include "log.h"

__attribute__((format(printf, 2, 3))) static void say(const struct command *c, const char *fmt,
                                                      ...) {
    if (c->name)
        fprintf(stderr, "searchsync %s: ", c->name);
    else
        fputs("searchsync: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* --config first and --help last around the subcommand's own options, as
 * every subcommand's table had them */
static void merge(struct command *c) {
    size_t n = 0;
    c->all[n++] = (struct option){"config", required_argument, NULL, 'c'};
    for (const struct option *o = c->opts; o && o->name && n < COMMAND_MAX_OPTS - 2; o++)
        c->all[n++] = *o;
    c->all[n++] = (struct option){"help", no_argument, NULL, 'h'};
    c->all[n] = (struct option){NULL, 0, NULL, 0};
    snprintf(c->shorts, sizeof c->shorts, "c:%sh", c->shortopts ? c->shortopts : "");
}

int command_opt(struct command *c) {
    if (!c->parsing) {
        merge(c);
        c->parsing = true;
        optind = c->first > 0 ? c->first : 1;
        if (c->own_errors) opterr = 0;
    }
    for (;;) {
        int o = getopt_long(c->argc, c->argv, c->shorts, c->all, NULL);
        switch (o) {
        case -1: return 0;
        case 'c': c->config = optarg; continue;
        case 'h':
            c->usage(stdout);
            c->rc = EXIT_OK;
            return -1;
        case '?':
        case ':':
            if (c->own_errors)
                say(c, "unknown or incomplete option '%s'", c->argv[optind - 1]);
            c->rc = command_usage(c);
            return -1;
        default: return o;
        }
    }
}

int command_usage(const struct command *c) {
    c->usage(stderr);
    return EXIT_USAGE;
}

int command_begin(struct command *c, unsigned flags) {
    char err[1024];
    if (config_load(&c->cfg, c->config, err, sizeof err) < 0) {
        say(c, "%s", err);
        config_free(&c->cfg);
        return EXIT_USAGE;
    }
    if (c->name && !strcmp(c->name, "run") && config_kafka_source(&c->cfg) &&
        !(c->cfg.source.user && *c->cfg.source.user)) {
        /* documents with nested parts are rebuilt from MySQL, the mapping is
         * checked against its schema, and the column types come from there */
        say(c, "%s: [source] kind = kafka: `run` needs [source] user (with host, port and "
            "password): documents are rebuilt from the source's tables and the messages' "
            "column types read from its information_schema", c->config);
        config_free(&c->cfg);
        return EXIT_USAGE;
    }
    log_set_level(log_parse_level(c->cfg.log.level));
    log_set_format(!strcmp(c->cfg.log.format, "json"));
    if ((flags & COMMAND_LOG_FILE) && log_set_target(c->cfg.log.file, err, (int)sizeof err) < 0) {
        say(c, "%s", err); /* stderr, a file or syslog */
        config_free(&c->cfg);
        return EXIT_USAGE;
    }
    c->loaded = true;
    return -1;
}

int command_meta(struct command *c, const char *what) {
    char err[1024];
    c->meta = metadb_open(&c->cfg, err, sizeof err);
    if (c->meta) return -1;
    say(c, "%s%s", what, err);
    return EXIT_RUNTIME;
}

int command_end(struct command *c, int rc) {
    db_close(c->meta);
    c->meta = NULL;
    if (c->loaded) config_free(&c->cfg);
    c->loaded = false;
    mysql_library_end();
    return rc;
}
