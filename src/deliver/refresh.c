/* refresh.c: the refresh-aware hold ([delivery] batch_to_refresh): live
 * changes of a target wait for company until just before the engine's next
 * refresh of it, and go then, as one request; and refresh pairing
 * ([delivery] refresh_pairing_ms): under a short refresh interval a slow
 * live stream's changes go into every other refresh only.
 *
 * Why: a change is searchable at the first refresh after it landed, so
 * between two refreshes sending at once buys acknowledged lag, never
 * searchable lag, and every request costs the engine CPU of its own beyond
 * its documents (about 2 ms on OpenSearch 2.19). At 500 changes/s in 10 ms
 * transactions group commit alone sent 100 requests a second; held to the
 * refresh it sends three a refresh period.
 *
 * How the next refresh is known: the engine refreshes an index
 * refresh_interval after its last refresh *ended*. While a target is busy,
 * a helper sends a probe once a period, just before the refresh predicted:
 * a versioned delete of a document id no change uses, with
 * refresh=wait_for (default_refresh_probe). The engine answers it right after the
 * refresh that took it in, which gives that refresh's end (the phase) and,
 * against the start predicted, how long a refresh takes. The probe holds no
 * change: a late answer costs nothing but a helper's wait. The next starts
 * are extrapolated from the last end seen (interval + a refresh's time
 * each); with no answer for REFRESH_STALE_PERIODS periods the phase is
 * unknown and nothing is held until the next probe comes back.
 *
 * Each period, with s the predicted start of the next refresh:
 *   - a change that came before s - far waits until s - far, then leaves
 *     with everything queued for the target;
 *   - what came after that waits until s - near (a request of a few
 *     changes, indexed within near);
 *   - a change that finds the target idle for a whole period (nothing of it
 *     pending in the engine) goes at once: its request costs the same
 *     whenever it goes, and it is acknowledged sooner.
 * So a change is never held past the point where it could still make the
 * next refresh. near grows when a probe missed its refresh (it came back a
 * period late) and shrinks back while none does; far is near plus twice
 * the target's requests' round trip, or more once a held request came back
 * well after the start it aimed at (refresh_answered): a held request
 * carries a period's changes, and takes longer than the average one.
 * Probes go only into refreshes that take a request anyway: a probe's
 * tombstone alone would make a refresh write a segment.
 *
 * Pairing: a refresh that takes writes builds a segment, which costs the
 * engine much the same for 5 changes as for 100, and one with nothing to
 * take ends at once. When twice the refresh cycle fits refresh_pairing_ms
 * and the stream is slow (fewer than refresh_pairing_changes a cycle,
 * measured from its requests: a fast one is never probed for it), the
 * refresh right after the last one written is left empty (its start kept
 * in skips, so the prediction steps over it by an interval alone) and the
 * changes aim at the next. Such a stream (linger_refresh_percent's too)
 * is held here, not spaced by linger.c. The first request aimed at each
 * refresh goes with refresh=wait_for (transport bulk_wait): its answer
 * marks that refresh's end, as a probe's would, so no probe goes beside
 * it once the phase is known.
 *
 * Not held while the engine does not keep up: a request's round trip
 * (twice, plus near) over a third of the interval, a refresh longer than
 * half of it, or near at its cap (engine_keeps_up); a starved engine
 * refreshing for seconds made held changes miss refresh after refresh.
 *
 * Not held, as for group commit (queue.c): a full batch_max, the hub at its
 * high-water mark, a change that waited flush_interval_ms, a drain, streams
 * that are not live (reindex pages, replays, repairs) or turned it off.
 * Not used for an index whose refresh_interval is -1 or longer than
 * flush_interval_ms (the hold would be flush_interval_ms's anyway), nor
 * with a single helper (the probe takes one). The
 * interval is read again every REFRESH_READ_MS while the index gets
 * requests (not once it had none for REFRESH_IDLE_MS), and at once when the
 * refreshes seen come faster than it says. The same reading serves the
 * requests spaced by the refresh (linger.c), which need the interval only:
 * a target only they send to is read, never probed. */
#include "deliver/deliver_int.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include "json_exact.h"
#include "log.h"
#include "search/search.h"

#define REFRESH_READ_MS 1000     /* the interval is read again this often */
#define REFRESH_IDLE_MS 10000    /* ... while the index had a request this recently */
#define REFRESH_STALE_PERIODS 3 /* no refresh seen for this many periods: phase unknown */
#define NEAR_MIN_NS (5 * NS_PER_MS)
#define EMPTY_REFRESH_NS (1 * NS_PER_MS) /* a refresh with nothing to write */

static bool policy_on(const struct deliver_hub *d, const struct fuse *f) {
    return d->tr.refresh_probe && d->tr.refresh_interval && f->rf.period_ns > 0 &&
           f->rf.period_ns <= (int64_t)f->rf.flush_ms * NS_PER_MS;
}

static bool stream_holds(const struct deliver *s) {
    return s->batch_to_refresh && s->cls == DELIVER_LIVE && !s->flush_on_txn_end;
}

/* a stream that may write into every other refresh only */
static bool pair_stream(const struct deliver *s) {
    return s->refresh_pairing_ms > 0 && (stream_holds(s) || linger_refresh_on(s));
}

/* twice the refresh cycle within refresh_pairing_ms (a refresh's time is
 * 0 until a probe measured it) */
static bool pairing_fits(const struct refresh_state *r) {
    return r->pairs && r->period_ns > 0 &&
           2 * (r->period_ns + r->took_ns) <= (int64_t)r->pair_ms * NS_PER_MS;
}

/* a slow stream: fewer than refresh_pairing_changes a cycle, as measured */
static bool slow_stream(const struct refresh_state *r) {
    return r->cycle_changes >= 0 && r->cycle_changes < r->pair_changes;
}

/* ... pairing now */
static bool pairs_now(const struct refresh_state *r) {
    return pairing_fits(r) && slow_stream(r);
}

/* the target is worth probing: a stream holds to its refreshes, or pairs
 * them while its requests come back quickly beside the interval (a probe
 * is a write of its own: against a slow or irregular link it lands in
 * refreshes that would have taken none, and the hold would be off anyway) */
static bool probed(const struct refresh_state *r) {
    return r->live || (pairs_now(r) && 2 * r->rtt_ns <= r->period_ns / 3);
}

/* Pairing kept off by a refresh's time alone (over half the interval, or
 * making twice the cycle longer than refresh_pairing_ms) for a slow stream
 * under an interval that pairs. Only a refresh seen against its predicted
 * start measures that time, and with pairing off nothing is probed or aimed
 * at a refresh: a few slow refreshes (the first ones after the interval
 * was shortened take in what the longer one left) kept a stream out of
 * pairing for good. So a probe measures it again once every RETAKE_PERIODS
 * periods, and while it keeps pairing off a measure weighs half. */
#define RETAKE_PERIODS 4

static bool took_blocks(const struct refresh_state *r) {
    return r->pairs && r->period_ns > 0 && r->took_ns > 0 &&
           2 * r->period_ns <= (int64_t)r->pair_ms * NS_PER_MS &&
           (r->took_ns > r->period_ns / 2 || !pairing_fits(r)) && slow_stream(r) &&
           2 * r->rtt_ns <= r->period_ns / 3;
}

static bool retake_due(const struct refresh_state *r, int64_t now) {
    return took_blocks(r) && now >= r->retake_not_before_ns;
}

static bool phase_known(const struct refresh_state *r, int64_t now) {
    return r->end_ns > 0 &&
           now - r->end_ns <= REFRESH_STALE_PERIODS * (r->period_ns + r->took_ns);
}

/* two predictions of one refresh's start */
static bool same_refresh(const struct refresh_state *r, int64_t a, int64_t b) {
    int64_t d = a - b;
    return a && b && (d < 0 ? -d : d) <= r->took_ns / 2 + NEAR_MIN_NS;
}

/* from a refresh predicted to start at s to the next: a refresh left
 * without writes ends at once, so the next starts an interval later */
static int64_t step_from(const struct refresh_state *r, int64_t s) {
    for (int i = 0; i < r->nskips; i++)
        if (same_refresh(r, s, r->skips[i])) return r->period_ns + EMPTY_REFRESH_NS;
    return r->period_ns + r->took_ns;
}

/* the first predicted refresh start after t */
static int64_t next_start(const struct refresh_state *r, int64_t t) {
    int64_t s = r->end_ns + r->period_ns;
    for (int i = 0; s <= t; i++) {
        if (i == 2 * REFRESH_SKIPS) { /* past the refreshes skipped: every one writes */
            int64_t step = r->period_ns + r->took_ns;
            return s + ((t - s) / step + 1) * step;
        }
        s += step_from(r, s);
    }
    return s;
}

static void note_skip(struct refresh_state *r, int64_t s) {
    for (int i = 0; i < r->nskips; i++)
        if (same_refresh(r, s, r->skips[i])) return;
    if (r->nskips == REFRESH_SKIPS) {
        memmove(r->skips, r->skips + 1, sizeof r->skips[0] * (REFRESH_SKIPS - 1));
        r->nskips--;
    }
    r->skips[r->nskips++] = s;
}

/* How long before a predicted start the last part leaves. The start is
 * predicted from a probe's answer, which comes after the refresh ended by
 * however long the engine took to answer, so the prediction runs late by
 * up to that: near is at least half a refresh's time as seen (which
 * includes it). Leaving early costs the changes of that last stretch a
 * refresh each; leaving late costs every change held for it a whole
 * period. */
static int64_t near_of(const struct refresh_state *r) {
    int64_t near = r->near_ns;
    if (near < r->took_ns / 2) near = r->took_ns / 2;
    if (near > r->period_ns / 4) near = r->period_ns / 4;
    return near;
}

static int64_t far_of(const struct refresh_state *r) {
    int64_t near = near_of(r);
    int64_t far = near + 2 * r->rtt_ns;
    if (far < 2 * near) far = 2 * near;
    if (far < r->far_ns) far = r->far_ns;
    if (far > r->period_ns / 3) far = r->period_ns / 3;
    return far;
}

/* The hold pays only while a request is short beside the period: a held
 * batch must land before the refresh it aims at, and a refresh missed costs
 * a whole period (and the refresh's time) more. An engine that answers
 * slowly, refreshes for longer than the interval, or made the probe miss
 * its refresh again and again (near at its cap) gets group commit alone,
 * which sends while the engine works and never waits for a prediction. */
static bool engine_keeps_up(const struct refresh_state *r) {
    return r->near_ns + 2 * r->rtt_ns <= r->period_ns / 3 && r->took_ns <= r->period_ns / 2 &&
           r->near_ns < r->period_ns / 4;
}

/* What the log says of pairing: an operator who set a short interval reads
 * at start that a slow stream pairs, and must learn when the engine turns
 * out too slow for it (a refresh of a few documents took 25-85 ms on a
 * quiet 2-core box, about 200 beside a busy core) and why. A change of
 * state is said at most once every PAIR_SAY_NS an index: a state flapping
 * with the engine's load costs a line a minute, and the state it settles
 * in is said once the minute is up. The first pairing is said too (the
 * start's line is a promise); between pairing and a stream too fast to
 * pair (its rate) only at debug: that is the design, not a problem. */
enum { PAIR_UNSAID, PAIR_ON, PAIR_FAST, PAIR_ASIDE };
#define PAIR_SAY_NS (60000 * NS_PER_MS)

/* (why NULL: the state alone, as each answer asks; it is worded only to be
 * said) */
static int pair_state(const struct refresh_state *r, char *why, size_t n) {
    long long period = r->period_ns / NS_PER_MS, took = r->took_ns / NS_PER_MS;
    if (r->took_ns > r->period_ns / 2) {
        if (why)
            snprintf(why, n, "a refresh takes %lld ms, over half of the %lld ms interval", took,
                     period);
        return PAIR_ASIDE;
    }
    if (!pairing_fits(r)) {
        if (why)
            snprintf(why, n, "twice the refresh cycle (%lld ms with a refresh's time) is over "
                     "refresh_pairing_ms = %d", 2 * (period + took), r->pair_ms);
        return PAIR_ASIDE;
    }
    if (r->near_ns >= r->period_ns / 4) {
        if (why)
            snprintf(why, n, "requests aimed at a refresh came back after the next one again "
                     "and again (the engine answers over an interval late)");
        return PAIR_ASIDE;
    }
    if (!engine_keeps_up(r)) {
        /* (the first requests of a start come back slowly: a cold
         * connection, a backlog) */
        if (r->rtt_samples < 16) return PAIR_UNSAID;
        if (why)
            snprintf(why, n, "a request's round trip, %lld ms, is long beside the %lld ms "
                     "interval", (long long)(r->rtt_ns / NS_PER_MS), period);
        return PAIR_ASIDE;
    }
    /* nothing more is said before a refresh's time was measured (which
     * needs the phase seen) */
    if (r->cycle_changes < 0 || !r->took_ns || !r->end_ns) return PAIR_UNSAID;
    if (r->cycle_changes >= r->pair_changes) {
        if (why)
            snprintf(why, n, "%ld changes a refresh cycle, refresh_pairing_changes = %d",
                     r->cycle_changes, r->pair_changes);
        return PAIR_FAST;
    }
    if (why)
        snprintf(why, n, "%ld changes a refresh cycle, a refresh about %lld ms",
                 r->cycle_changes, took);
    return PAIR_ON;
}

static void pair_watch(struct fuse *f, int64_t now) {
    struct refresh_state *r = &f->rf;
    /* only where the start said it pairs (stepping aside for requests
     * slow beside the interval is said with the phase never seen: nothing
     * is probed then) */
    if (!r->pairs || r->period_ns <= 0 || 2 * r->period_ns > (int64_t)r->pair_ms * NS_PER_MS)
        return;
    int st = pair_state(r, NULL, 0);
    if (st == PAIR_UNSAID || st == r->pair_said) return;
    if (r->pair_said_ns && now - r->pair_said_ns < PAIR_SAY_NS) return;
    char why[200];
    pair_state(r, why, sizeof why);
    /* the first pairing, and any change from or to stepping aside */
    bool info = st == PAIR_ASIDE || r->pair_said == PAIR_ASIDE ||
                (st == PAIR_ON && !r->pair_said_ns);
    long long period = r->period_ns / NS_PER_MS;
    if (st == PAIR_ASIDE)
        log_info("deliver", "%s: a slow live stream's changes go into every refresh "
                 "for now, not every other: %s ([delivery] refresh_pairing_ms)", f->index, why);
    else if (info)
        log_info("deliver", "%s: a slow live stream's changes go into every other "
                 "refresh of the %lld ms%s (%s)", f->index, period,
                 r->pair_said == PAIR_ASIDE ? " again" : "", why);
    else
        log_debug("deliver", "%s: %s (%s)", f->index,
                  st == PAIR_ON ? "the stream pairs refreshes"
                                : "the stream is too fast to pair refreshes",
                  why);
    r->pair_said = st;
    if (info) r->pair_said_ns = now;
}

void refresh_note_live(struct fuse *f, const struct deliver *s) {
    if (stream_holds(s)) {
        f->rf.live = true;
        if (s->flush_interval_ms > f->rf.flush_ms) f->rf.flush_ms = s->flush_interval_ms;
    }
    if (pair_stream(s)) {
        f->rf.pairs = true;
        if (s->refresh_pairing_ms > f->rf.pair_ms) f->rf.pair_ms = s->refresh_pairing_ms;
        if (s->refresh_pairing_changes > f->rf.pair_changes)
            f->rf.pair_changes = s->refresh_pairing_changes;
        if (s->flush_interval_ms > f->rf.flush_ms) f->rf.flush_ms = s->flush_interval_ms;
    }
    if (linger_refresh_on(s)) { /* linger.c: the interval read, no probe */
        f->rf.lingers = true;
        if (s->linger_refresh_percent > f->rf.linger_pct)
            f->rf.linger_pct = s->linger_refresh_percent;
    }
}

bool refresh_pairs(const struct deliver_hub *d, const struct fuse *f, int64_t now) {
    const struct refresh_state *r = &f->rf;
    return d->o.group_commit && policy_on(d, f) && pairs_now(r) && phase_known(r, now) &&
           engine_keeps_up(r);
}

bool refresh_holds(struct deliver_hub *d, const struct indexq *q, const struct deliver *hs,
                   const struct item *head, int64_t now, int64_t *wake) {
    struct refresh_state *r = &q->fuse->rf;
    bool pairs = pair_stream(hs) && pairs_now(r);
    if (!d->o.group_commit || !(stream_holds(hs) || pairs) || !policy_on(d, q->fuse)) return false;
    if (!phase_known(r, now)) return false;
    if (r->last_send_ns == 0) return false;
    /* idle: nothing sent for a period (a pair of them when pairing, judged
     * when the change came: the hold itself outlasts a period) */
    if (pairs ? head->enq_ns - r->last_send_ns >= 2 * r->period_ns + r->took_ns
              : now - r->last_send_ns >= r->period_ns)
        return false;
    if (!engine_keeps_up(r)) return false;
    if (hub_pressed(d, hs)) return false;
    int64_t due = head->enq_ns + (int64_t)hs->flush_interval_ms * NS_PER_MS;
    if (now >= due) return false;
    if (index_idle_queued(d, q->fuse) >= d->o.batch_max) return false;
    /* the refresh the head can still make: the first whose near point is
     * after it came */
    int64_t near = near_of(r), far = far_of(r);
    int64_t s = next_start(r, head->enq_ns + near);
    if (pairs && r->written_ns && !same_refresh(r, s, r->written_ns) &&
        same_refresh(r, s, r->written_ns + step_from(r, r->written_ns))) {
        /* the refresh right after the last one written: left without
         * writes, the changes go into the next */
        note_skip(r, s);
        s += step_from(r, s);
    }
    int64_t release = head->enq_ns < s - far ? s - far : s - near;
    if (release > due) release = due;
    if (now >= release) return false;
    if (release < *wake) *wake = release;
    return true;
}

#define RATE_WINDOW_CYCLES 4

/* The stream's changes a refresh cycle, over windows of a few cycles, say
 * whether it is slow enough to pair; measured from the requests alone, so
 * a fast stream is never probed for it. A stream back after a pause of
 * three cycles is measured again before it pairs. */
static void note_rate(struct refresh_state *r, long n, int64_t gap, int64_t now) {
    int64_t cycle = r->period_ns + r->took_ns;
    if (gap > 3 * cycle || !r->rate_t0_ns) { /* (the first window starts here) */
        r->rate_t0_ns = now;
        r->rate_n = 0;
        r->cycle_changes = -1;
        return;
    }
    r->rate_n += n;
    if (now - r->rate_t0_ns >= RATE_WINDOW_CYCLES * cycle) {
        r->cycle_changes =
            (long)((double)r->rate_n * (double)cycle / (double)(now - r->rate_t0_ns));
        r->rate_t0_ns = now;
        r->rate_n = 0;
    }
}

int64_t refresh_sent(struct fuse *f, long changes, bool can_wait, int64_t now, bool *wait) {
    struct refresh_state *r = &f->rf;
    *wait = false;
    int64_t gap = r->last_send_ns ? now - r->last_send_ns : INT64_MAX;
    r->last_send_ns = now;
    if (r->pairs && r->period_ns > 0) note_rate(r, changes, gap, now);
    if (!probed(r) || r->period_ns <= 0 || !phase_known(r, now)) return 0;
    /* only a request that left in the last stretch before a refresh aims
     * at it (a held one, or one that happened to) */
    int64_t s = next_start(r, now);
    r->written_ns = s;
    if (s - now > far_of(r) + near_of(r)) return 0;
    /* pairing: the first request aimed at a refresh is answered after it,
     * which tells its end as a probe would (one request fewer each) */
    if (can_wait && pairs_now(r) && !same_refresh(r, s, r->wait_aim_ns)) {
        *wait = true;
        r->wait_aim_ns = s;
    }
    return s;
}

static void refresh_seen(struct fuse *f, int64_t aim, int64_t now);

void refresh_answered(struct fuse *f, bool ok, int64_t sent, int64_t aim, bool waited,
                      int64_t now) {
    struct refresh_state *r = &f->rf;
    if (!ok) return;
    if (waited) { /* answered after the refresh: its end, not a round trip */
        refresh_seen(f, aim, now);
        pair_watch(f, now);
        return;
    }
    /* the round trip of a request: how early the held batch goes */
    r->rtt_ns = r->rtt_ns ? (3 * r->rtt_ns + (now - sent)) / 4 : now - sent;
    if (r->rtt_samples < 16) r->rtt_samples++;
    if (!aim || r->period_ns <= 0) {
        pair_watch(f, now); /* (a round trip too long beside the interval) */
        return;
    }
    /* A request that left for a refresh and came back after it began may
     * have missed it, and then every change in it waits a whole period
     * more. The round trip of a held request grows with its size (a
     * period's changes in one), which the average of all requests hides:
     * the next leave earlier, by that request's own round trip and more.
     * The start predicted is known to within the refresh's own time (the
     * probe sees its end), so only an answer later than half of that
     * counts. */
    int64_t took = now - sent;
    if (now > aim + r->took_ns / 2) {
        int64_t far = r->far_ns ? 2 * r->far_ns : took + 2 * near_of(r);
        if (far < took + 2 * near_of(r)) far = took + 2 * near_of(r);
        r->far_ns = far < r->period_ns / 3 ? far : r->period_ns / 3;
        log_debug("deliver", "%s: a request aimed at a refresh came back %lld ms after it "
                  "began (round trip %lld ms): held ones leave %lld ms before",
                  f->index, (long long)((now - aim) / NS_PER_MS),
                  (long long)(took / NS_PER_MS), (long long)(r->far_ns / NS_PER_MS));
    } else if (r->far_ns > took + 2 * near_of(r)) {
        r->far_ns -= r->far_ns / 16; /* back towards what the requests take */
    }
    pair_watch(f, now);
}

struct fuse *refresh_probe_due(struct deliver_hub *d, int64_t now, int64_t *wake) {
    if (!d->tr.refresh_probe) return NULL;
    int probing = 0;
    for (struct fuse *f = d->fuses; f; f = f->next) probing += f->rf.probe_sent_ns != 0;
    /* at least one helper is always left for the changes */
    if (probing >= d->o.helpers - 1) return NULL;
    for (struct fuse *f = d->fuses; f; f = f->next) {
        struct refresh_state *r = &f->rf;
        if (!(probed(r) || retake_due(r, now)) || r->probe_sent_ns || !policy_on(d, f) ||
            now < r->probe_not_before_ns)
            continue;
        /* pairing: the held requests are answered after their refresh */
        if (d->tr.bulk_wait && pairs_now(r) && phase_known(r, now)) continue;
        /* its settings read through it of late: it still names an index */
        if (now - r->read_ns > 2 * (int64_t)REFRESH_READ_MS * NS_PER_MS) continue;
        /* only for a target with changes of late: an idle one sends at once */
        if (!r->last_send_ns || now - r->last_send_ns > 2 * r->period_ns) continue;
        /* only into a refresh that takes a request anyway (one sent since
         * the last refresh began): a probe's tombstone alone would make a
         * refresh with no change write a segment all the same */
        if (phase_known(r, now) &&
            r->last_send_ns <= next_start(r, now) - r->period_ns - r->took_ns)
            continue;
        /* ... and with the phase unknown, right behind a request, which
         * it most likely lands beside (on a slow or irregular link one
         * sent at any time put writes into refreshes that had none) */
        if (!phase_known(r, now) && now - r->last_send_ns > 2 * NEAR_MIN_NS) continue;
        /* the next refresh after the last one seen (or now, to learn it) */
        int64_t at = phase_known(r, now) ? next_start(r, now) - near_of(r) : now;
        if (now < at) {
            if (at < *wake) *wake = at;
            continue;
        }
        r->probe_sent_ns = now;
        r->probe_aim_ns = phase_known(r, now) ? next_start(r, now) : 0;
        return f;
    }
    return NULL;
}

void refresh_probed(struct fuse *f, bool ok, int64_t now) {
    struct refresh_state *r = &f->rf;
    int64_t aim = r->probe_aim_ns;
    r->probe_sent_ns = 0;
    r->probe_aim_ns = 0;
    if (!ok || r->period_ns <= 0) {
        /* (a conflict, a failed request: not a refresh's end) */
        int64_t again = REFRESH_STALE_PERIODS * r->period_ns;
        r->probe_not_before_ns = now + (again > NS_PER_MS * 1000 ? again : NS_PER_MS * 1000);
        return;
    }
    bool retake = took_blocks(r);
    refresh_seen(f, aim, now);
    /* a measure (aimed at a start) that still keeps pairing off: the next
     * in RETAKE_PERIODS; the phase alone learnt (no aim): the measure next */
    if (retake && aim && took_blocks(r))
        r->retake_not_before_ns = now + RETAKE_PERIODS * r->period_ns;
    pair_watch(f, now);
}

/* a refresh ended now: a probe's answer, or a request's aimed at the
 * refresh starting at aim (0: none predicted) */
static void refresh_seen(struct fuse *f, int64_t aim, int64_t now) {
    struct refresh_state *r = &f->rf;
    if (r->period_ns <= 0) return;
    if (aim) {
        int64_t late = now - aim;
        /* A write that made the refresh starting at aim is answered when
         * it ends, a refresh's time (and the answer's way) after aim; one
         * that missed it, after the next: an interval and two refreshes
         * after aim. So only an answer an interval late is a miss: with a
         * bound of half an interval past the refresh's time as known (0
         * at first), a refresh of over half the interval was never
         * measured, every answer taken for a miss. */
        if (late < 0 || late > r->period_ns) {
            /* it came back a refresh later (or the refresh came early):
             * send the last part earlier */
            r->near_ns *= 2;
            if (r->near_ns > r->period_ns / 4) r->near_ns = r->period_ns / 4;
        } else {
            r->took_ns = !r->took_ns       ? late
                         : took_blocks(r) ? (r->took_ns + late) / 2
                                          : (7 * r->took_ns + late) / 8;
            r->near_ns -= r->near_ns / 4;
            if (r->near_ns < NEAR_MIN_NS) r->near_ns = NEAR_MIN_NS;
        }
    }
    /* refreshes closer together than the interval read: it changed */
    if (r->end_ns && now - r->end_ns < r->period_ns * 3 / 4) r->read_ns = 0;
    log_debug("deliver", "%s: a refresh ended %lld ms after the one aimed at began (%s); "
              "near %lld ms, far %lld ms, a refresh %lld ms", f->index,
              aim ? (long long)((now - aim) / NS_PER_MS) : -1LL, aim ? "predicted" : "learnt",
              (long long)(near_of(r) / NS_PER_MS), (long long)(far_of(r) / NS_PER_MS),
              (long long)(r->took_ns / NS_PER_MS));
    r->end_ns = now;
}

struct fuse *refresh_read_due(struct deliver_hub *d, int64_t now) {
    if (!d->tr.refresh_interval) return NULL;
    for (struct fuse *f = d->fuses; f; f = f->next) {
        struct refresh_state *r = &f->rf;
        if (!(r->live || r->lingers) || r->reading) continue;
        if (r->read_ns && now - r->read_ns < (int64_t)REFRESH_READ_MS * NS_PER_MS) continue;
        /* an index without requests is not read each second: on by default,
         * the spacing would otherwise cost every index ever written a read a
         * second for good. Its next request goes at once (idle for the
         * spacing) and the read follows it */
        if (r->last_send_ns && now - r->last_send_ns > (int64_t)REFRESH_IDLE_MS * NS_PER_MS)
            continue;
        r->reading = true;
        return f;
    }
    return NULL;
}

void refresh_read_done(struct fuse *f, long ms, int64_t now) {
    struct refresh_state *r = &f->rf;
    r->reading = false;
    r->read_ns = now;
    int64_t p = ms > 0 ? (int64_t)ms * NS_PER_MS : -1;
    int64_t was = r->period_ns;
    r->period_ns = p;
    if (p != was) { /* a new interval: its phase is learnt again */
        if (p > 0 && r->pairs && 2 * p <= (int64_t)r->pair_ms * NS_PER_MS)
            log_info("deliver", "%s refreshes every %ld ms: a slow live stream's changes go "
                     "into every other refresh, just before it, while the engine keeps up "
                     "([delivery] refresh_pairing_ms)", f->index, ms);
        else if (p > 0 && r->live)
            log_info("deliver", "%s refreshes every %ld ms: its live changes leave just before "
                     "each refresh ([delivery] batch_to_refresh)", f->index, ms);
        else if (p > 0 && r->lingers)
            log_info("deliver", "%s refreshes every %ld ms: its live requests leave at least "
                     "%ld ms apart ([delivery] linger_refresh_percent)", f->index, ms,
                     (long)(linger_refresh_ns(f) / NS_PER_MS));
        r->end_ns = 0;
        r->took_ns = 0;
        r->far_ns = 0;
        r->written_ns = r->wait_aim_ns = r->rate_t0_ns = 0;
        r->rate_n = 0;
        r->cycle_changes = -1;
        r->nskips = 0;
        r->near_ns = NEAR_MIN_NS;
        r->retake_not_before_ns = 0;
        r->pair_said = PAIR_UNSAID;
        r->pair_said_ns = 0;
    }
    if (r->near_ns < NEAR_MIN_NS) r->near_ns = NEAR_MIN_NS;
}

/* ---------- the engine side (the search client's transport) ---------- */

/* A versioned delete (external_gte version 1) of an id no change uses,
 * through the target, answered after the refresh that took it in. It never
 * removes a document: every version searchsync writes is larger, so a
 * document of that id (were there one) makes it a conflict (409), answered
 * at once, and not taken as a refresh. Where there is none the engine keeps
 * a tombstone of version 1, which the next probe's version 1 does not
 * conflict with (external_gte; with external every probe after the first
 * was a 409 for index.gc_deletes). A delete does not honour require_alias
 * (Elasticsearch 7.10 auto-creates its index): the target is probed only
 * while its settings were read through it within twice REFRESH_READ_MS. */
int default_refresh_probe(void *ud, int helper, const char *target) {
    struct deliver_hub *d = ud;
    struct search_resp *resp = &d->helpers[helper].resp;
    char body[700];
    int n = snprintf(body, sizeof body,
                     "{\"delete\":{\"_index\":\"%s\",\"_id\":\"%s\",\"version\":1,"
                     "\"version_type\":\"external_gte\"}}\n",
                     target, REFRESH_PROBE_ID);
    if (n <= 0 || (size_t)n >= sizeof body) return -1;
    if (search_request(d->helpers[helper].conn, "POST",
                       "/_bulk?refresh=wait_for&filter_path=errors,items.*.status",
                       "application/x-ndjson", body, (size_t)n, resp) != SEARCH_OK ||
        resp->status != 200 || !resp->body.data)
        return -1;
    /* 404 without an error: no such document, the tombstone waited for the
     * refresh (a conflict is an error, answered at once) */
    return strstr(resp->body.data, "\"errors\":false") &&
                   (strstr(resp->body.data, "\"status\":404") ||
                    strstr(resp->body.data, "\"status\":200"))
               ? 0
               : -1;
}

/* an Elasticsearch time value in ms: "1s", "100ms", "2m"; -1 = never */
static long time_value_ms(const char *s) {
    char *e;
    double v = strtod(s, &e);
    if (e == s || v < 0) return -1;
    double mul = !*e || !strcmp(e, "ms") ? 1 : !strcmp(e, "s") ? 1000 : !strcmp(e, "m") ? 60000
                 : !strcmp(e, "h") ? 3600000 : !strcmp(e, "d") ? 86400000
                 : !strcmp(e, "micros") ? 0.001 : !strcmp(e, "nanos") ? 0.000001 : -1;
    if (mul < 0) return -1;
    double ms = v * mul;
    return ms > 86400000.0 ? 86400000 : (long)ms;
}

static const char *interval_of(const cJSON *ix, const char *part) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(ix, part);
    o = cJSON_GetObjectItemCaseSensitive(o, "index");
    o = cJSON_GetObjectItemCaseSensitive(o, "refresh_interval");
    return cJSON_IsString(o) ? o->valuestring : NULL;
}

/* the shortest refresh interval of the indices `target` names (an alias may
 * name several); 0 when one has none (-1) or it cannot be read */
int default_refresh_interval(void *ud, int helper, const char *target, long *ms) {
    struct deliver_hub *d = ud;
    *ms = 0;
    for (const char *c = target; *c; c++) /* an index or alias name, nothing to escape */
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || strchr("-_.+", *c)))
            return 0;
    char path[600];
    snprintf(path, sizeof path,
             "/%s/_settings/index.refresh_interval?include_defaults=true&"
             "filter_path=*.settings.index.refresh_interval,*.defaults.index.refresh_interval",
             target);
    struct search_resp *resp = &d->helpers[helper].resp;
    if (search_request(d->helpers[helper].conn, "GET", path, NULL, NULL, 0, resp) != SEARCH_OK ||
        resp->status != 200)
        return -1;
    cJSON *j = json_exact_parse(resp->body.data, resp->body.len);
    long best = 0;
    int n = 0;
    for (const cJSON *ix = j ? j->child : NULL; ix; ix = ix->next) {
        const char *v = interval_of(ix, "settings");
        if (!v) v = interval_of(ix, "defaults");
        long m = v ? time_value_ms(v) : -1;
        if (m <= 0) {
            best = 0;
            n = 0;
            break;
        }
        if (!n++ || m < best) best = m;
    }
    cJSON_Delete(j);
    *ms = n ? best : 0;
    return 0;
}
