/* row_filter_int: what the row filter's two files share (row_filter.c the
 * parse and the binding to the schema, row_filter_eval.c the values and the
 * evaluation) and nothing else includes: the interface is row_filter.h.
 *
 * A condition is a tree of nodes in one array (children by index); string
 * literals unescaped into one buffer. The comparison each pair of operands
 * gets (rf_plan_of) is decided from their kinds alone, so binding can refuse
 * a pair the evaluator would not compare as the server does, and evaluation
 * follows the same decision. */
#ifndef SS_ROW_FILTER_INT_H
#define SS_ROW_FILTER_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"
#include "sync/mapping/row_filter.h"

#define RF_MAX_COLS 64   /* columns one condition may read */
#define RF_MAX_DEPTH 64  /* nesting of parentheses and operators */

enum rf_op {
    N_COL, N_LIT, N_AND, N_OR, N_XOR, N_NOT, N_CMP, N_ISNULL, N_ISBOOL, N_IN, N_BETWEEN, N_LIKE
};
enum rf_cmp { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE, C_NSEQ };
enum rf_lit { L_NULL, L_INT, L_DEC, L_DBL, L_STR };

/* a column's type as far as comparisons go */
enum rf_kind {
    K_UNKNOWN, /* not bound to a schema */
    K_INT, K_YEAR, K_BIT, K_DECIMAL, K_FLOAT, K_DOUBLE,
    K_STRING,  /* CHAR, VARCHAR, TEXT: with a collation */
    K_BINARY,  /* BINARY, VARBINARY, BLOB: bytes */
    K_ENUM, K_SET, K_DATE, K_DATETIME, /* DATETIME and TIMESTAMP (read in UTC) */
    K_TIME, K_JSON, K_OTHER            /* compared with nothing here */
};

/* how strings compare: bytes, or ASCII letters folded (CI), or case kept
 * by a collation whose order is not the bytes' (CS), or not known */
enum rf_cmode { CM_BYTES, CM_CI, CM_CS, CM_UNKNOWN };
enum rf_pad { PAD_NO, PAD_SPACE, PAD_UNKNOWN };
struct rf_coll {
    unsigned char mode, pad;
    bool chars; /* LIKE's _ is one UTF-8 character (a byte for binary strings) */
};

/* a date and time, DATE with zero time */
struct rf_dt {
    int y, mo, d, h, mi, s, us;
};

struct rf_node {
    unsigned char op, cmp, lit;
    bool neg;         /* NOT IN / NOT BETWEEN / NOT LIKE / IS NOT */
    signed char isv;  /* N_ISBOOL: 1 TRUE, 0 FALSE, 2 UNKNOWN */
    int a, b, c;      /* operands (node indices), -1 none */
    int first, n;     /* N_IN: its list, args[first .. first + n) */
    int col;          /* N_COL: index in cols */
    size_t off, len;  /* N_LIT: its text in text (strings unescaped) */
    __int128 iv;      /* L_INT */
    bool dt_ok;       /* L_STR: reads as a date literal (dt) */
    struct rf_dt dt;
};

struct rf_col {
    char *name;
    unsigned char kind;
    struct rf_coll coll;
    char *collation; /* the schema's name, NULL: none or not bound */
};

struct row_filter {
    struct rf_node *nodes;
    size_t nnodes, capnodes;
    int *args;
    size_t nargs, capargs;
    struct rf_col cols[RF_MAX_COLS];
    size_t ncols;
    sbuf text;
    int root;
    bool bound;
};

/* the comparison two operands get */
enum rf_plan {
    P_NULL,     /* a NULL literal: the result is NULL */
    P_UNKNOWN,  /* a column not bound: undecided */
    P_INT, P_DEC, P_DBL, P_STR, P_TEMP,
    P_REFUSED   /* why names it */
};
/* The plan of comparing nodes a and b of f (the same for =, <, IN, BETWEEN).
 * P_REFUSED with the reason in why. */
enum rf_plan rf_plan_of(const struct row_filter *f, int a, int b, char *why, size_t whylen);
/* The collation a comparison of a and b uses (P_STR, LIKE). */
struct rf_coll rf_coll_of(const struct row_filter *f, int a, int b);
/* A column's kind from its COLUMN_TYPE, its collation class from its name. */
enum rf_kind rf_kind_of(const char *column_type);
struct rf_coll rf_coll_named(enum rf_kind kind, const char *collation);
/* text (n bytes) read as a date literal: 'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' */
bool rf_parse_dt(const char *s, size_t n, struct rf_dt *out);
/* a node that gives a number 1/0/NULL (a comparison, a logical operator) */
static inline bool rf_is_bool(const struct rf_node *x) {
    return x->op != N_COL && x->op != N_LIT;
}

#endif
