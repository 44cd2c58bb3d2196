/* cmd_source: `searchsync source list|add|edit|remove` — the sources of the
 * metadata schema, and a source added at run time (the operations of
 * sync/ops/ops_sources.h, as /api/v1/sources). This front end turns options
 * into a struct source_spec and the outcome into lines and an exit code; the
 * password comes from a file, the environment or the terminal, never from
 * the command line (where `ps` and the shell's history would show it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "commands.h"
#include "jsonw.h"
#include "sync/ops/ops_sources.h"

#define PASSWORD_ENV "SEARCHSYNC_NEW_SOURCE_PASSWORD"

void usage_source(FILE *out) {
    fprintf(out,
            "usage: searchsync source list   --config FILE [--json]\n"
            "       searchsync source add    --config FILE NAME --host HOST [--port N] --user U\n"
            "                                [--password-file F] [--ssl-mode M] [--ssl-ca F]\n"
            "                                [--server-id N] [--admin-listen HOST:PORT|none]\n"
            "       searchsync source edit   --config FILE NAME [the options of add]\n"
            "                                [--password-prompt]\n"
            "       searchsync source remove --config FILE NAME [--force]\n\n"
            "The sources of the metadata schema FILE names (docs/cluster.md, \"Adding a\n"
            "source\"). list: each source, where it is, who reads it, up or down, its lag and\n"
            "the index configs it feeds. add: the server checked (binlog ROW and FULL, its\n"
            "server_id, the user's grants, the mapping's tables), recorded, and NAME.ini and\n"
            "NAME.password (mode 0600) written into [admin] sources_dir, derived from FILE;\n"
            "systemd's searchsync-sources.path starts searchsync@NAME, or run the command\n"
            "printed. edit: the values given changed, checked the same way (nothing changes\n"
            "when they fail); its process is restarted by the same unit. remove: refused\n"
            "while an index config lists it, unless --force.\n"
            "The password: --password-file F (its first line), else $" PASSWORD_ENV ",\n"
            "else asked on the terminal (edit: only with --password-prompt). Never on the\n"
            "command line.\n");
}

/* the password typed, echo off; NULL when there is no terminal */
static char *prompt_password(const char *name) {
    if (!isatty(STDIN_FILENO)) return NULL;
    struct termios old, quiet;
    if (tcgetattr(STDIN_FILENO, &old) != 0) return NULL;
    quiet = old;
    quiet.c_lflag &= ~(tcflag_t)ECHO;
    fprintf(stderr, "password of the user of source %s: ", name);
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    char line[1024];
    char *got = fgets(line, sizeof line, stdin);
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
    fputc('\n', stderr);
    if (!got) return NULL;
    line[strcspn(line, "\r\n")] = '\0';
    char *pw = xstrdup(line);
    memset(line, 0, sizeof line);
    return pw;
}

/* --password-file's first line; NULL with the reason said */
static char *password_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "searchsync source: --password-file %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char line[1024] = "";
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    if (!got || !*line) {
        fprintf(stderr, "searchsync source: --password-file %s: its first line is empty (the "
                        "password is the file's first line)\n", path);
        return NULL;
    }
    char *pw = xstrdup(line);
    memset(line, 0, sizeof line);
    return pw;
}

static void print_list(const struct source_list *l, bool json) {
    if (!json) {
        printf("%-16s %-24s %-10s %-6s %-20s %-8s %s\n", "SOURCE", "HOST:PORT", "MAPPING", "STATE",
               "READER", "LAG", "INDEX CONFIGS");
        for (size_t i = 0; i < l->n; i++) {
            const struct source_info *s = &l->v[i];
            char hp[300];
            if (s->host) snprintf(hp, sizeof hp, "%s:%u", s->host, s->port);
            else snprintf(hp, sizeof hp, "(not added here)");
            const char *state = s->reader == 0 ? "unread" : s->source_up == 0 ? "DOWN"
                                : s->source_up == 1                       ? "up"
                                                                          : "?";
            printf("%-16s %-24s %-10s %-6s %-20s %-8s %s\n", s->name, hp,
                   s->mapping ? s->mapping : "-", state, s->reader_node ? s->reader_node : "-",
                   s->lag_s ? s->lag_s : "-", *s->index_configs ? s->index_configs : "-");
            if (s->source_up == 0 && s->source_error)
                printf("    its reader cannot read its server: %s\n", s->source_error);
        }
        return;
    }
    sbuf out = SBUF_INIT;
    jsonw w;
    jw_init(&w, &out);
    jw_obj_open(&w);
    jw_key(&w, "sources");
    sources_json_array(l, &w);
    jw_obj_close(&w);
    printf("%s\n", out.data);
    sbuf_free(&out);
}

static int say_done(const char *verb, const struct source_done *d) {
    printf("source %s %s: %s:%d as %s, replica server id %u\n", d->name, verb, d->host, d->port,
           d->user, d->server_id);
    printf("configuration: %s (and its password beside it, mode 0600)\n", d->ini);
    printf("admin server: %s\n", d->admin_listen[0] ? d->admin_listen : "none");
    if (d->notes.len) fputs(d->notes.data, stdout);
    if (d->systemd)
        printf("systemd: searchsync-sources.path %s searchsync@%s (systemctl status "
               "searchsync@%s); without it: %s\n", strcmp(verb, "added") ? "restarts" : "starts",
               d->name, d->name, d->start);
    else
        printf("start it: %s\n", d->start);
    return EXIT_OK;
}

int cmd_source(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage_source(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const char *action = argv[1];
    bool list = !strcmp(action, "list"), add = !strcmp(action, "add"),
         edit = !strcmp(action, "edit"), rm = !strcmp(action, "remove");
    if (!list && !add && !edit && !rm) {
        fprintf(stderr, "searchsync source: unknown action \"%s\" (list, add, edit or remove)\n",
                action);
        usage_source(stderr);
        return EXIT_USAGE;
    }
    static const struct option own[] = {
        {"json", no_argument, NULL, 'j'},           {"host", required_argument, NULL, 'H'},
        {"port", required_argument, NULL, 'P'},     {"user", required_argument, NULL, 'u'},
        {"password-file", required_argument, NULL, 'w'}, {"ssl-mode", required_argument, NULL, 'm'},
        {"ssl-ca", required_argument, NULL, 'a'},   {"server-id", required_argument, NULL, 'i'},
        {"admin-listen", required_argument, NULL, 'l'}, {"force", no_argument, NULL, 'f'},
        {"password-prompt", no_argument, NULL, 'p'}, {NULL, 0, NULL, 0}};
    struct command c = {.name = "source", .usage = usage_source, .opts = own, .argc = argc,
                        .argv = argv, .first = 2};
    struct source_spec s = {0};
    const char *pwfile = NULL;
    bool json = false, force = false, ask = false, bad = false;
    int o;
    while ((o = command_opt(&c)) > 0) {
        switch (o) {
        case 'j': json = true; break;
        case 'H': s.host = optarg; break;
        case 'P': s.port = atoi(optarg); bad |= s.port < 1 || s.port > 65535; break;
        case 'u': s.user = optarg; break;
        case 'w': pwfile = optarg; break;
        case 'm': s.ssl_mode = optarg; break;
        case 'a': s.ssl_ca = optarg; break;
        case 'i': s.server_id = atoi(optarg); bad |= s.server_id < 1; break;
        case 'l': s.admin_listen = optarg; break;
        case 'f': force = true; break;
        case 'p': ask = true; break;
        }
    }
    if (o < 0) return c.rc;
    bool spec = s.host || s.port || s.user || pwfile || s.ssl_mode || s.ssl_ca || s.server_id ||
                s.admin_listen || ask;
    if (!c.config || bad || (list ? optind != argc : optind != argc - 1) || (json && !list) ||
        (force && !rm) || (spec && (list || rm)) || (ask && !edit))
        return command_usage(&c);
    if (!list) s.name = argv[optind];
    char *pw = NULL;
    if (add || edit) {
        if (pwfile && !(pw = password_file(pwfile))) return EXIT_USAGE;
        if (!pw && getenv(PASSWORD_ENV) && *getenv(PASSWORD_ENV)) pw = xstrdup(getenv(PASSWORD_ENV));
        if (!pw && (add || ask) && !(pw = prompt_password(s.name))) {
            fprintf(stderr, "searchsync source %s: no password: give --password-file FILE, or "
                            "set $" PASSWORD_ENV ", or run it on a terminal to be asked\n", action);
            return EXIT_USAGE;
        }
        s.password = pw;
    }
    int rc = command_begin(&c, 0);
    if (rc >= 0) {
        free(pw);
        return rc;
    }
    char by[64];
    snprintf(by, sizeof by, "source %s command", action);
    struct ops_env env = {.cfg = &c.cfg, .by = by};
    struct ops_err e = {0};
    if (list) {
        struct source_list l;
        rc = ops_exit(ops_source_list(&env, &l, &e));
        if (rc == EXIT_OK) print_list(&l, json);
        source_list_free(&l);
    } else if (rm) {
        sbuf fed = SBUF_INIT;
        rc = ops_exit(ops_source_remove(&env, s.name, force, &fed, &e));
        if (rc == EXIT_OK) {
            printf("source %s removed: its registry row, checkpoint and files are gone; "
                   "searchsync-sources.path stops searchsync@%s (without systemd, stop its "
                   "process)\n", s.name, s.name);
            if (fed.len)
                printf("it was still listed by %s: its documents stay there until their next "
                       "reindex, which waits for its part until it is listed no more\n",
                       fed.data);
        }
        sbuf_free(&fed);
    } else {
        struct source_done d;
        rc = ops_exit(add ? ops_source_add(&env, &s, &d, &e) : ops_source_edit(&env, &s, &d, &e));
        if (rc == EXIT_OK) say_done(add ? "added" : "changed", &d);
        source_done_free(&d);
    }
    if (rc != EXIT_OK) fprintf(stderr, "searchsync source %s: %s\n", action, e.msg);
    if (pw) memset(pw, 0, strlen(pw)), free(pw);
    return command_end(&c, rc);
}
