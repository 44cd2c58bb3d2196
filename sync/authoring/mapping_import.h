/* mapping_import: one mapping file checked against the source, its plan
 * against the stored configuration, and (when asked) stored: what `searchsync
 * mapping import` does, shared with the admin API (POST /api/v1/mapping/...),
 * so both say the same thing in the same words.
 *
 * Steps: parse (the message names the file, line and JSON path); the source
 * must write a ROW binlog (before anything is queued); validate against the
 * source's information_schema, run each relation's `where`, check relation
 * tops; generate every index body (types some engine has); load the stored
 * mapping and write the plan (indices and tables added, changed, removed;
 * which need a reindex); with apply and changes, store it in one transaction
 * and note it in sync_log. A running daemon picks a stored mapping up by
 * itself (sync/node/reload.c). */
#ifndef SS_MAPPING_IMPORT_H
#define SS_MAPPING_IMPORT_H
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "sync/mapping/mapping.h"
#include "sbuf.h"

struct st_mysql;

enum mapping_import_rc {
    MI_OK = 0,        /* valid; planned (and stored, with apply and changes) */
    MI_INVALID = 1,   /* the file or the mapping is wrong: err (one line) and problems */
    MI_RUNTIME = -1,  /* a server failed: err */
};

struct mapping_import {
    const char *name;   /* the file's name in messages */
    const char *text;
    size_t len;
    bool apply;         /* store it when it changes something (after the plan) */
    /* results */
    int changes;        /* changes in the plan (0: "no changes") */
    bool applied;
    sbuf plan;          /* the plan, one line each ("+ index ...", "  ~ table ...") */
    sbuf problems;      /* validation problems, one line each (MI_INVALID) */
    int nproblems;
    char err[2048];
    char log_err[600];  /* stored, but not noted in sync_log: why ("" when noted) */
};

/* meta: the metadata schema (selected). The source is connected here. */
int mapping_import_run(const struct ss_config *cfg, struct st_mysql *meta,
                       struct mapping_import *mi);
void mapping_import_free(struct mapping_import *mi);

#endif
