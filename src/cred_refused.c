/* cred_refused: the process-wide note that a server refused the configured
 * credentials (see cred_refused.h). */
#include "cred_refused.h"

#include <stdatomic.h>

static atomic_bool refused;

void cred_refused_note(void) { atomic_store(&refused, true); }

bool cred_refused(void) { return atomic_load(&refused); }

int cred_refused_exit(int rc) { return (rc == 1 || rc == 3) && cred_refused() ? 2 : rc; }
