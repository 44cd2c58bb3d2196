/* ops_words: the dynamic words of the IK analyzer, as operations
 * (docs/http-api.md, "Dynamic words" and "Dictionary files").
 *
 * A word (table dynamic_words) is an extension word (kind "ext") or a stop
 * word (kind "stop"), in state init or published. It can be changed while
 * in init only; publishing is one way; it can be deleted in either state.
 * Publishing a word, and deleting a published one, moves the Last-Modified
 * of its kind's dictionary file (dict_changes.changed_at) in the same
 * transaction. Values reach SQL only as bound parameters (src/stmt.h).
 *
 * A word's value is checked by the caller (web/words.c words_invalid):
 * these operations store what they are given. */
#ifndef SS_OPS_WORDS_H
#define SS_OPS_WORDS_H
#include <stddef.h>

#include "sbuf.h"
#include "sync/ops/ops.h"

/* One word as stored: its id, word, kind, status and its creation and last
 * change as ISO 8601 UTC text with milliseconds. */
struct ops_word {
    char *id, *word, *kind, *status, *created_at, *updated_at;
};
struct ops_words {
    struct ops_word *v;
    size_t n;
};
void ops_words_free(struct ops_words *w); /* NULL-safe, emptied */

/* The words of kind and status (NULL: any), by kind then id, into *out. */
enum ops_status ops_words_list(const struct ops_env *env, const char *kind, const char *status,
                               struct ops_words *out, struct ops_err *e);
/* Word id into *out (one word): OPS_UNKNOWN when there is none. */
enum ops_status ops_word_get(const struct ops_env *env, const char *id, struct ops_words *out,
                             struct ops_err *e);
/* A new word of kind, in state init, into *out (one word): OPS_REFUSED when
 * that word of that kind exists already. */
enum ops_status ops_word_create(const struct ops_env *env, const char *word, const char *kind,
                                struct ops_words *out, struct ops_err *e);

enum ops_word_act { OPS_WORD_UPDATE, OPS_WORD_PUBLISH, OPS_WORD_DELETE };
/* Why a change was refused (OPS_REFUSED). */
enum ops_word_refusal {
    OPS_WORD_NONE = 0,
    OPS_WORD_PUBLISHED, /* the word is published: no update, no second publish */
    OPS_WORD_DUPLICATE, /* the word and kind it would take exist already */
};
struct ops_word_change {
    enum ops_word_act act;
    const char *id;
    const char *word, *kind; /* OPS_WORD_UPDATE: the new ones, NULL: unchanged */
};
struct ops_word_changed {
    enum ops_word_refusal refusal;
    char status[16], kind[8]; /* the word's before the change */
};
/* Word rq->id updated, published or deleted, in one transaction:
 * OPS_UNKNOWN when there is none, OPS_REFUSED (res->refusal says why). */
enum ops_status ops_word_change(const struct ops_env *env, const struct ops_word_change *rq,
                                struct ops_word_changed *res, struct ops_err *e);

/* The dictionary file of kind: its published words one a line, in the
 * order they were added (text), how many (nwords), and when the published
 * list last changed (changed: unix time). */
struct ops_dict {
    sbuf text;
    size_t nwords;
    long long changed;
};
enum ops_status ops_dict_read(const struct ops_env *env, const char *kind, struct ops_dict *d,
                              struct ops_err *e);

#endif
