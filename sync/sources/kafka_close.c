/* kafka_close: a Kafka consumer closed within a bound (see kafka_close.h). */
#include "sync/sources/kafka_close.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "sbuf.h"

#define CLOSE_WAIT_S 5
struct kclose {
    rd_kafka_t *rk;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
};

static void *close_main(void *arg) {
    struct kclose *d = arg;
    rd_kafka_consumer_close(d->rk);
    rd_kafka_destroy(d->rk);
    pthread_mutex_lock(&d->mu);
    d->done = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

bool kafka_close_bounded(rd_kafka_t *rk) {
    struct kclose *d = xcalloc(1, sizeof *d);
    d->rk = rk;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, close_main, d) != 0) {
        close_main(d);
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += CLOSE_WAIT_S;
        pthread_mutex_lock(&d->mu);
        while (!d->done && pthread_cond_timedwait(&d->cv, &d->mu, &until) == 0) {}
        bool done = d->done;
        pthread_mutex_unlock(&d->mu);
        if (!done) {
            log_warn("run", "the Kafka client did not finish closing in %d s (librdkafka %s: a "
                     "consumer group join under way, or a subscribed topic deleted): left to "
                     "the process's exit; the checkpoint is saved, nothing is lost",
                     CLOSE_WAIT_S, rd_kafka_version_str());
            pthread_detach(t);
            return false; /* d stays with the thread */
        }
        pthread_join(t, NULL);
    }
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    free(d);
    return true;
}
