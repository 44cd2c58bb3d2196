/* cred_refused: whether a server the configuration names refused its
 * credentials in this process — a MySQL login refused (the source, the
 * metadata server, the binlog connection), the search engine's 401 (or 403
 * to GET /). That is a configuration error the user fixes in the file, not a
 * runtime failure: a command that fails after one exits 2, as a misspelt key
 * does (cmd/main.c), whichever command it is. */
#ifndef SS_CRED_REFUSED_H
#define SS_CRED_REFUSED_H
#include <stdbool.h>

/* Note a refusal (thread-safe; the message naming the section is the
 * caller's). */
void cred_refused_note(void);
bool cred_refused(void);
/* The exit code of a command that returned rc: 2 for a failure (1 or 3)
 * after a refusal, rc otherwise. */
int cred_refused_exit(int rc);

#endif
