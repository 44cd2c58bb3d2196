/* ops_mapping: a mapping file imported, as an operation (sync/ops/ops.h):
 * checked against the source, planned against the stored configuration,
 * and stored when asked. The steps are sync/authoring/mapping_import.c's;
 * this owns the call: the metadata connection and the outcome. A running
 * daemon takes a stored mapping up by itself (sync/node/reload.c). */
#ifndef SS_OPS_MAPPING_H
#define SS_OPS_MAPPING_H
#include "sync/authoring/mapping_import.h"
#include "sync/ops/ops.h"

/* mi: the file (name, text, len, apply) in, the plan and problems out.
 * OPS_INVALID: the file or the mapping is wrong (mi->err, mi->problems);
 * OPS_DOWN at OPS_AT_METADATA: no metadata server (e->msg); OPS_FAILED: a
 * server failed, nothing was stored (mi->err, copied to e->msg). */
enum ops_status ops_mapping_import(const struct ops_env *env, struct mapping_import *mi,
                                   struct ops_err *e);

#endif
