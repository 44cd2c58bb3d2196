/* version.c: external versions (version_make and its parts) and the names
 * of change operations (deliver.h). */
#include "deliver/deliver.h"

#include <stdio.h>
#include <string.h>

/* ---------- versions ---------- */

uint64_t version_make(uint32_t epoch, uint32_t file_no, uint64_t pos) {
    if (epoch >= (1u << VERSION_EPOCH_BITS) || file_no >= (1u << VERSION_FILE_BITS) ||
        pos > 0xffffffffull)
        return 0;
    return ((uint64_t)epoch << (VERSION_FILE_BITS + VERSION_POS_BITS)) |
           ((uint64_t)file_no << VERSION_POS_BITS) | pos;
}
uint64_t version_make_gtid(uint32_t epoch, uint64_t ordinal, bool after) {
    const unsigned low = VERSION_FILE_BITS + VERSION_POS_BITS; /* 53: the epoch stays put */
    if (epoch >= (1u << VERSION_EPOCH_BITS) || ordinal >= (1ull << (low - 1)) - 1) return 0;
    return ((uint64_t)epoch << low) | (2 * ordinal + 1 + (after ? 1 : 0));
}
uint32_t version_epoch(uint64_t v) {
    return (uint32_t)(v >> (VERSION_FILE_BITS + VERSION_POS_BITS)) &
           ((1u << VERSION_EPOCH_BITS) - 1);
}
uint32_t version_file(uint64_t v) {
    return (uint32_t)(v >> VERSION_POS_BITS) & ((1u << VERSION_FILE_BITS) - 1);
}
uint32_t version_pos(uint64_t v) { return (uint32_t)(v & 0xffffffffull); }

static const char *const OP_NAMES[] = {"index", "delete", "update", "script"};
const char *change_op_name(enum change_op op) {
    return (unsigned)op < 4 ? OP_NAMES[op] : "?";
}
int change_op_parse(const char *s) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, OP_NAMES[i])) return i;
    return -1;
}

const char *version_describe(uint64_t v, char *buf, size_t len) {
    uint32_t e = version_epoch(v);
    if (e)
        snprintf(buf, len, "binlog %06u:%u epoch %u", version_file(v), version_pos(v), e);
    else
        snprintf(buf, len, "binlog %06u:%u", version_file(v), version_pos(v));
    return buf;
}
