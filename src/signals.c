/* signals: one thread handles every signal of the process (see signals.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "log.h"
#include "signals.h"

static volatile sig_atomic_t *_Atomic stop_flag;
static void (*_Atomic stop_fn)(int sig);
static void (*_Atomic hup_fn)(void);
static void (*_Atomic usr1_fn)(void);
static pthread_once_t started = PTHREAD_ONCE_INIT;
static int start_rc;

static void async_set(sigset_t *s) {
    sigfillset(s);
    /* synchronous faults must reach the faulting thread */
    sigdelset(s, SIGSEGV);
    sigdelset(s, SIGBUS);
    sigdelset(s, SIGFPE);
    sigdelset(s, SIGILL);
    sigdelset(s, SIGABRT);
    sigdelset(s, SIGTRAP);
}

void signals_block_all(void) {
    sigset_t s;
    async_set(&s);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
}

/* the default action of sig, as if it had never been blocked */
static void default_action(int sig) {
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
}

static void *signal_main(void *arg) {
    (void)arg;
    sigset_t wait;
    sigemptyset(&wait);
    sigaddset(&wait, SIGTERM);
    sigaddset(&wait, SIGINT);
    sigaddset(&wait, SIGHUP);
    sigaddset(&wait, SIGUSR1);
    for (;;) {
        int sig = 0;
        if (sigwait(&wait, &sig) != 0) continue;
        if (sig == SIGTERM || sig == SIGINT) {
            volatile sig_atomic_t *flag = atomic_load(&stop_flag);
            void (*fn)(int) = atomic_load(&stop_fn);
            if (!flag && !fn) default_action(sig);
            if (flag) *flag = 1;
            if (fn) fn(sig);
        } else if (sig == SIGHUP || sig == SIGUSR1) {
            void (*fn)(void) = atomic_load(sig == SIGHUP ? &hup_fn : &usr1_fn);
            if (fn) fn();
            else log_info("signals", "%s ignored: nothing in this command uses it",
                          sig == SIGHUP ? "SIGHUP" : "SIGUSR1");
        }
    }
    return NULL;
}

static void start_once(void) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    start_rc = pthread_create(&t, &a, signal_main, NULL) == 0 ? 0 : -1;
    pthread_attr_destroy(&a);
}

int signals_start(void) {
    pthread_once(&started, start_once);
    return start_rc;
}

void signals_on_stop(volatile sig_atomic_t *flag, void (*fn)(int sig)) {
    atomic_store(&stop_fn, fn);
    atomic_store(&stop_flag, flag);
}

void signals_on_hup(void (*fn)(void)) { atomic_store(&hup_fn, fn); }
void signals_on_usr1(void (*fn)(void)) { atomic_store(&usr1_fn, fn); }
