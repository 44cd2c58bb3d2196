#!/usr/bin/env python3
"""tests/bench/sources_live.py — the writers and the lag probes of the live
phase of tests/bench/bench_sources.sh (which starts the servers and daemons
and documents the phase). Python stdlib only: SQL goes through a `mariadb`
client process per source fed on stdin (a probe is followed by a sentinel
SELECT, so the writer knows when its commit returned), the engine through
http.client.

usage: sources_live.py --mode fixed|sat --alias A --db D --search URL
                       --orders N [--rate R --secs S | --total T]
                       NAME:PORT...

Every source gets one writer of transactions, each an order's total and
note updated and one of its items' qty (so its nested document is
rebuilt), on random keys 2..N (order 1 is the probe's):
  fixed  R transactions a second for S seconds, a probe every 0.5 s;
  sat    T transactions in all (T / sources each), written as fast as the
         client takes them: the sources' daemons are the bound.
A probe sets order 1's note to a sequence number and times from its commit
to the engine's answer holding it (GET /ALIAS/_doc/NAME:1, or /1 with one
source; realtime: the acknowledged lag). After the writers, a last probe on every source: the end
is when each is seen (every earlier change of its source is in by then).
One JSON line on stdout: transactions, wall seconds (first write to the
last source's last probe seen), achieved transactions a second, probe lag
p50 / p99 / max ms.
"""
import argparse
import http.client
import json
import random
import subprocess
import sys
import threading
import time
import urllib.parse

now = time.monotonic


class Writer:
    def __init__(self, name, port, db):
        self.name = name
        self.p = subprocess.Popen(
            ['mariadb', '--no-defaults', '--unbuffered', '-h', '127.0.0.1', '-P', port, '-u', 'root',
             '-N', '-B', db],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.sent = {}  # probe sequence -> commit returned (monotonic)
        self.txns = 0
        self.seq = 0

    def txn(self, rnd, orders):
        o, i = rnd.randint(2, orders), rnd.randint(1, 2 * orders)
        self.txns += 1
        return ("BEGIN; UPDATE orders SET total = total + 1, note = 'w%d' WHERE id = %d; "
                "UPDATE items SET qty = qty + 1 WHERE id = %d; COMMIT;\n" % (self.txns, o, i))

    def probe(self):
        self.seq += 1
        self.p.stdin.write("UPDATE orders SET note = 'p%d' WHERE id = 1; SELECT 'ok%d';\n"
                           % (self.seq, self.seq))
        self.p.stdin.flush()
        want = 'ok%d' % self.seq
        for line in self.p.stdout:
            if line.strip() == want:
                break
        else:
            raise SystemExit('sources_live: the client of %s ended' % self.name)
        self.sent[self.seq] = now()
        return self.seq

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Poller(threading.Thread):
    """Resolves a source's probes as the engine shows them."""

    def __init__(self, url, alias, name, writer):
        super().__init__(daemon=True)
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port or 80
        # the probe's id: its key, behind the source where several feed the index
        self.path = '/%s/_doc/%s1?_source_includes=note' % (alias, name + ':' if name else '')
        self.w = writer
        self.lags = []
        self.seen = 0
        self.seen_at = {}
        self.stop = False

    def run(self):
        c = http.client.HTTPConnection(self.host, self.port, timeout=30)
        while not self.stop:
            try:
                c.request('GET', self.path)
                r = c.getresponse()
                body = json.loads(r.read() or b'{}')
            except (OSError, http.client.HTTPException, ValueError):
                c.close()
                c = http.client.HTTPConnection(self.host, self.port, timeout=30)
                time.sleep(0.05)
                continue
            note = (body.get('_source') or {}).get('note') or ''
            t = now()
            if note.startswith('p'):
                s = int(note[1:])
                for k in sorted(list(self.w.sent)):
                    if k > s:
                        break
                    if k > self.seen:
                        self.lags.append((t - self.w.sent[k]) * 1000)
                        self.seen_at[k] = t
                        self.seen = k
            time.sleep(0.02)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mode', choices=['fixed', 'sat'], required=True)
    ap.add_argument('--alias', required=True)
    ap.add_argument('--db', required=True)
    ap.add_argument('--search', required=True)
    ap.add_argument('--orders', type=int, required=True)
    ap.add_argument('--rate', type=float, default=20)
    ap.add_argument('--secs', type=float, default=20)
    ap.add_argument('--total', type=int, default=12000)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('sources', nargs='+')
    a = ap.parse_args()
    ws, ps = [], []
    for s in a.sources:
        name, port = s.rsplit(':', 1)
        w = Writer(name, port, a.db)
        p = Poller(a.search, a.alias, name if len(a.sources) > 1 else None, w)
        ws.append(w)
        ps.append(p)
    for w, p in zip(ws, ps):
        p.seen = w.probe()  # the pollers start from a known note, not timed
        p.start()
    t0 = now()
    threads = []

    def fixed(w, k):
        rnd = random.Random(a.seed * 100 + k)
        step, nxt, probe_at = 1.0 / a.rate, now(), now() + 0.5
        while now() - t0 < a.secs:
            w.p.stdin.write(w.txn(rnd, a.orders))
            w.p.stdin.flush()
            nxt += step
            if now() >= probe_at:
                w.probe()
                probe_at += 0.5
            d = nxt - now()
            if d > 0:
                time.sleep(d)

    def sat(w, k):
        rnd = random.Random(a.seed * 100 + k)
        n = a.total // len(ws)
        for i in range(n):
            w.p.stdin.write(w.txn(rnd, a.orders))
            if i % 200 == 199:
                w.p.stdin.flush()
        w.p.stdin.flush()

    for k, w in enumerate(ws):
        th = threading.Thread(target=fixed if a.mode == 'fixed' else sat, args=(w, k))
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    t_written = now()
    last = [w.probe() for w in ws]  # returns once every transaction before it committed
    t_committed = now()
    deadline = now() + 900
    while any(p.seen < s for p, s in zip(ps, last)):
        if now() > deadline:
            print('sources_live: the last probes were not seen within 900 s', file=sys.stderr)
            return 1
        time.sleep(0.02)
    t_end = max(p.seen_at[s] for p, s in zip(ps, last))
    for p in ps:
        p.stop = True
    for w in ws:
        w.close()
    txns = sum(w.txns for w in ws)
    lags = [x for p in ps for x in p.lags]
    # fixed: the probes under the writers (the last ones time the drain)
    fixed_lags = [x for p in ps for x in p.lags[:-1]] if a.mode == 'fixed' else lags
    wall = t_end - t0
    print(json.dumps({
        'mode': a.mode, 'sources': len(ws), 'txns': txns, 'wall_s': round(wall, 2),
        'written_s': round(t_written - t0, 2), 'committed_s': round(t_committed - t0, 2),
        'drain_s': round(t_end - t_committed, 2), 'txn_per_s': round(txns / wall, 1),
        'probes': len(fixed_lags), 'lag_p50_ms': pct(fixed_lags, 0.5) and round(pct(fixed_lags, 0.5)),
        'lag_p99_ms': pct(fixed_lags, 0.99) and round(pct(fixed_lags, 0.99)),
        'lag_max_ms': fixed_lags and round(max(fixed_lags))}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
