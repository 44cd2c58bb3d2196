#!/usr/bin/env python3
"""tests/bench/sync_driver.py — the writer, pollers and meters of
tests/bench/bench_sync.sh (which sets up the database, the mapping and the
daemon and documents the phases). Python stdlib only: SQL goes through
long-running `mariadb` client processes fed on stdin (each query is followed
by a sentinel SELECT, so the caller knows when it has returned), the engine
through http.client. Times are time.monotonic() of this process, on both
sides of every lag.

Knobs (environment): BENCH_WARMUP BENCH_BURST_WARMUP BENCH_LAG_RATE BENCH_LAG_RUNS BENCH_POLL_MS BENCH_DELIVERED
BENCH_ROOT_CHANGES BENCH_NESTED_CHANGES BENCH_TXN BENCH_CHILD_ROWS BENCH_SEARCHABLE BENCH_MOVES
BENCH_MOVES_TXN BENCH_MOVES_META.
Exit status 1 when a phase times out or a spot check of the documents fails.
"""
import argparse
import bisect
import decimal
import http.client
import json
import math
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

now = time.monotonic
TCK = os.sysconf('SC_CLK_TCK')
PROBE_ID = 1      # the product whose weight carries the probe's sequence number
NEW_TAG = 100001  # inserted by bench_sync.sh; no product has it at the start


def env_int(name, default):
    return int(os.environ.get(name) or default)


class Sql:
    """One `mariadb` client session; q() returns the rows of every result."""
    END = '@@bench-end@@'

    def __init__(self, port, db):
        self.p = subprocess.Popen(
            ['mariadb', '--no-defaults', '-h', '127.0.0.1', '-P', str(port), '-u', 'root',
             '--batch', '--skip-column-names', '--unbuffered', '--database', db],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1)

    def q(self, sql):
        self.p.stdin.write(sql.strip().rstrip(';') + ";\nSELECT '" + self.END + "';\n")
        self.p.stdin.flush()
        rows = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError('mariadb client exited: ' + self.p.stderr.read().strip())
            line = line.rstrip('\n')
            if line == self.END:
                return rows
            rows.append(line.split('\t'))

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(5)
        except Exception:
            self.p.kill()


# ---------------------------------------------------------------- /proc meters
def proc_cpu(pid):
    """user+sys CPU seconds of one process (all its threads)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            s = f.read()
    except OSError:
        return 0.0
    x = s[s.rindex(')') + 2:].split()
    return (int(x[11]) + int(x[12])) / TCK


def wait_quiet(cpu, cores=0.1, seconds=3, timeout=90):
    """Wait until cpu() (CPU seconds of the engine) grows by under `cores`
    in each of `seconds` seconds in a row: its merges after the phase
    before are done (a merge pauses between segments, so one calm second
    proves little). False after timeout s."""
    end, calm = time.time() + timeout, 0
    while time.time() < end and calm < seconds:
        c0, t0 = cpu(), time.time()
        time.sleep(1)
        calm = calm + 1 if (cpu() - c0) / (time.time() - t0) < cores else 0
    return calm >= seconds


def _stat(path):
    """(comm, the fields after it) of a /proc stat file; None once gone."""
    try:
        with open(path) as f:
            s = f.read()
    except OSError:
        return None
    return s[s.index('(') + 1:s.rindex(')')], s[s.rindex(')') + 2:].split()


def _cpu(x):
    return (int(x[11]) + int(x[12])) / TCK  # utime + stime


def _group(pgid):
    """(pid, its stat fields) of every live process of a process group."""
    for d in os.listdir('/proc'):
        st = _stat('/proc/%s/stat' % d) if d.isdigit() else None
        if st and int(st[1][2]) == pgid:
            yield d, st[1]


def group_cpu(pgid):
    """CPU seconds of every live process of a process group."""
    return sum(_cpu(x) for _, x in _group(pgid))


JIT_THREADS = ('C1 CompilerThre', 'C2 CompilerThre')  # HotSpot's compiler threads (comm cut to 15)


def jit_cpu(pgid):
    """CPU seconds the live JIT compiler threads of a process group's JVMs
    have used. A fresh engine compiles its hot paths for minutes, as much
    CPU as the indexing itself on two cores (perf), and it does so in
    whichever phase first runs a path: a cost of the bench's fresh JVM, not
    of the tool that happens to go first, and one a long-running cluster
    has long paid."""
    total = 0.0
    for d, _ in _group(pgid):
        try:
            tasks = os.listdir('/proc/%s/task' % d)
        except OSError:
            continue
        for t in tasks:
            st = _stat('/proc/%s/task/%s/stat' % (d, t))
            if st and st[0].startswith(JIT_THREADS):
                total += _cpu(st[1])
    return total


def engine_cpu(pgid):
    """The engine's CPU seconds without its JIT compiler threads (jit_cpu):
    its work on the documents, refreshes, merges and GC."""
    return group_cpu(pgid) - jit_cpu(pgid)


def proc_mem(pid):
    """(VmRSS, VmHWM) in MiB."""
    out = {}
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                k, _, v = line.partition(':')
                if k in ('VmRSS', 'VmHWM'):
                    out[k] = int(v.split()[0]) / 1024
    except OSError:
        pass
    return out.get('VmRSS', 0), out.get('VmHWM', 0)


class Meter:
    def __init__(self, a, sqls):
        self.a, self.sqls = a, sqls

    def snap(self):
        return {'t': now(), 'daemon': proc_cpu(self.a.daemon), 'mysql': group_cpu(self.a.mysql_pgid),
                'engine': engine_cpu(self.a.engine_pgid),
                'driver': sum(os.times()[:2]) + sum(proc_cpu(s.p.pid) for s in self.sqls)}

    def start(self):
        self.s0 = self.snap()

    def line(self, docs=0):
        s1 = self.snap()
        dt = s1['t'] - self.s0['t']
        d = {k: s1[k] - self.s0[k] for k in s1}
        self.last = d  # the deltas of the last line (t: the wall time)
        rss, hwm = proc_mem(self.a.daemon)
        per = (' (%.0f us a document; daemon %.1f us)' % (1e6 * d['engine'] / docs, 1e6 * d['daemon'] / docs)
               if docs else '')
        return ('  cpu over %.1f s: daemon %.2f s (%.0f%% of a core), mariadb %.2f s, engine %.2f s%s, '
                'driver (python + mariadb clients) %.2f s; daemon RSS %.1f MiB, VmHWM %.1f MiB'
                % (dt, d['daemon'], 100 * d['daemon'] / dt, d['mysql'], d['engine'], per, d['driver'], rss, hwm))


# ---------------------------------------------------------------- engine
class Engine:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 80
        self.c = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def req(self, method, path, body=None):
        for attempt in (1, 2):
            try:
                hdrs = {'Content-Type': 'application/json'} if body is not None else {}
                self.c.request(method, path, body=None if body is None else json.dumps(body), headers=hdrs)
                r = self.c.getresponse()
                data = r.read()
                return r.status, (json.loads(data, parse_float=decimal.Decimal) if data else {})
            except (http.client.HTTPException, OSError):
                self.c.close()
                self.c = http.client.HTTPConnection(self.host, self.port, timeout=30)
                if attempt == 2:
                    raise


VERSION_MASK = (1 << 53) - 1  # the version without its epoch: binlog file number << 32 | position


def pos_version(pos):
    """The document version searchsync gives the changes of the transaction
    that ends at binlog position pos (src/deliver/deliver.c version_make)."""
    f, p = pos
    return (int(f.rsplit('.', 1)[1]) << 32) | p


class Series:
    """Increasing values and the time each was first seen."""

    def __init__(self):
        self.vals, self.times = [], []

    def add(self, v, t):
        if v is not None and (not self.vals or v > self.vals[-1]):
            self.vals.append(v)
            self.times.append(t)

    def last(self):
        return self.vals[-1] if self.vals else None

    def seen_at(self, v):
        i = bisect.bisect_left(self.vals, v)
        return self.times[i] if i < len(self.vals) else None


class Poller(threading.Thread):
    """Polls the probe document every period. kind: 'search' (searchable) or
    'get' (realtime). Two series: the document's version (which transaction
    built it) and the probe's value in it (how fresh its data is: a document
    is rebuilt from MySQL, so it may carry newer data than its version)."""

    def __init__(self, url, alias, kind, period):
        super().__init__(daemon=True)
        self.e, self.alias, self.kind, self.period = Engine(url), alias, kind, period
        self.version, self.value = Series(), Series()
        self.polls, self.errors = 0, 0
        self.stop = False

    def poll(self):
        if self.kind == 'search':
            st, j = self.e.req('POST', '/%s/_search?routing=%d&filter_path=hits.hits._source.weight,hits.hits._version'
                               % (self.alias, PROBE_ID),
                               {'size': 1, 'version': True, 'query': {'ids': {'values': [str(PROBE_ID)]}},
                                '_source': ['weight']})
            hits = j.get('hits', {}).get('hits', [])
            h = hits[0] if hits else None
        else:
            st, h = self.e.req('GET', '/%s/_doc/%d?_source_includes=weight&filter_path=_source,_version'
                               % (self.alias, PROBE_ID))
            h = h if st == 200 else None
        if not h:
            return None, None
        return int(h['_version']) & VERSION_MASK, float(h.get('_source', {}).get('weight') or 0)

    def run(self):
        nxt = now()
        while not self.stop:
            try:
                ver, val = self.poll()
            except Exception:
                self.errors += 1
                ver = val = None
            t = now()
            self.polls += 1
            self.version.add(ver, t)
            self.value.add(val, t)
            nxt += self.period
            d = nxt - now()
            if d > 0:
                time.sleep(d)
            else:
                nxt = now()


class CkptPoller(threading.Thread):
    """Polls the daemon's saved checkpoint (every 20 ms, its own session):
    the position up to which every change is acknowledged by the engine."""

    def __init__(self, port, db, meta, source):
        super().__init__(daemon=True)
        self.sql = Sql(port, db)
        self.query = "SELECT position FROM `%s`.offsets WHERE source = '%s'" % (meta, source)
        self.version = Series()
        self.polls, self.errors, self.stop = 0, 0, False

    def run(self):
        while not self.stop:
            r = self.sql.q(self.query)
            t = now()
            self.polls += 1
            if r:
                f, _, p = r[0][0].rpartition(':')
                self.version.add(pos_version((f, int(p))), t)
            time.sleep(0.02)
        self.sql.close()


class AckPoller(threading.Thread):
    """Polls the daemon's GET /api/v1/live (every 10 ms, one keep-alive
    connection): acknowledged_position, the low-water mark below which the
    engine acknowledged every change (in memory; saved as the checkpoint at
    the next checkpoint_interval_ms)."""

    def __init__(self, admin, token):
        super().__init__(daemon=True)
        u = urllib.parse.urlsplit(admin)
        self.host, self.port, self.token = u.hostname, u.port, token
        self.version = Series()
        self.polls, self.errors, self.stop = 0, 0, False

    def run(self):
        c = http.client.HTTPConnection(self.host, self.port, timeout=10)
        nxt = now()
        while not self.stop:
            try:
                c.request('GET', '/api/v1/live', headers={'Authorization': 'Bearer ' + self.token})
                r = c.getresponse()
                j = json.loads(r.read())
                pos = j.get('acknowledged_position') if r.status == 200 else None
            except Exception:
                self.errors += 1
                pos = None
                c.close()
                c = http.client.HTTPConnection(self.host, self.port, timeout=10)
            t = now()
            self.polls += 1
            if pos:
                f, _, p = pos.rpartition(':')
                self.version.add(pos_version((f, int(p))), t)
            nxt += 0.01
            d = nxt - now()
            if d > 0:
                time.sleep(d)
            else:
                nxt = now()
        c.close()


def delivery_counters(admin, token):
    """searchsync_delivery_*_total counters of the daemon's /metrics."""
    try:
        req = urllib.request.Request(admin + '/metrics', headers={'Authorization': 'Bearer ' + token})
        text = urllib.request.urlopen(req, timeout=10).read().decode()
    except Exception:
        return {}
    out = {}
    for line in text.splitlines():
        if not line.startswith('searchsync_delivery_'):
            continue
        k, v = line.rsplit(' ', 1)
        k, _, labels = k.partition('{')
        # the process's own counters: no label but the source every sample carries
        if k.endswith('_total') and ',' not in labels and (not labels or labels.startswith('source=')):
            out[k[len('searchsync_delivery_'):-len('_total')]] = float(v)
    return out


def pct(xs, q):
    if not xs:
        return float('nan')
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, int(math.ceil(q * len(xs))) - 1))]


# ---------------------------------------------------------------- the bench
class Bench:
    def __init__(self, a):
        self.a = a
        self.w = Sql(a.mysql_port, a.db)   # the writer
        self.m = Sql(a.mysql_port, a.db)   # checkpoint, positions, checks
        self.meter = Meter(a, [self.w, self.m])
        self.e = Engine(a.search)
        self.np = int(self.m.q('SELECT MAX(id) FROM products')[0][0])
        self.rc = 0
        self.warmed = set()

    def master_pos(self):
        r = self.m.q('SHOW MASTER STATUS')[0]
        return r[0], int(r[1])

    def commit_ends(self, start, gtids, positions):
        """Where each of the writer's transactions ends in the binlog. SHOW
        MASTER STATUS after a COMMIT may already be past another session's
        transaction (the daemon's checkpoint save, with the metadata on this
        server): the probe's version would be one no write carries, and the
        last probe, which no later one covers, never seen. Read from the
        binlog by the transactions' GTIDs (SELECT @@last_gtid after each
        COMMIT); positions as given where a GTID is not found."""
        want = set(gtids)
        ends, cur = {}, None
        files = [r[0] for r in self.m.q('SHOW BINARY LOGS')]
        for f in files[files.index(start[0]):] if start[0] in files else []:
            frm = start[1] if f == start[0] else 4
            for r in self.m.q("SHOW BINLOG EVENTS IN '%s' FROM %d" % (f, frm)):
                if len(r) < 6:
                    continue
                if r[2] == 'Gtid' and r[5].startswith('BEGIN GTID '):
                    cur = r[5].split()[2]
                elif cur in want and (r[2] == 'Xid' or (r[2] == 'Query' and r[5].startswith('COMMIT'))):
                    ends[cur] = (f, int(r[4]))
                    cur = None
        fixed = [ends.get(g, p) for g, p in zip(gtids, positions)]
        moved = sum(1 for a, b in zip(fixed, positions) if a != b)
        if moved:
            print('  (%d of %d commit positions read from the binlog by GTID: SHOW MASTER STATUS after '
                  'the COMMIT was already past another session\'s transaction)' % (moved, len(positions)))
        return fixed

    def checkpoint(self):
        r = self.m.q("SELECT position FROM `%s`.offsets WHERE source = '%s'" % (self.a.meta, self.a.source))
        if not r:
            return '', 0
        f, _, p = r[0][0].rpartition(':')
        return f, int(p)

    def wait_caught_up(self, target, timeout=900):
        """Time at which the daemon's saved checkpoint reached target."""
        t_end = now() + timeout
        while now() < t_end:
            if self.checkpoint() >= target:
                return now()
            time.sleep(0.02)
        return None

    def wait_acknowledged(self, target, timeout=900):
        """Time at which the engine had acknowledged everything up to target
        (the daemon's low-water mark, GET /api/v1/live every 10 ms); None
        without the admin server."""
        if not self.a.admin:
            return None
        p = AckPoller(self.a.admin, self.a.token)
        p.start()
        v, t_end = pos_version(target), now() + timeout
        while p.version.seen_at(v) is None and now() < t_end:
            time.sleep(0.005)
        p.stop = True
        p.join()
        return p.version.seen_at(v)

    def bulk_requests(self):
        c = delivery_counters(self.a.admin, self.a.token) if self.a.admin else None
        return (c or {}).get('batches', 0)

    def com_select(self):
        return int(self.m.q("SHOW GLOBAL STATUS LIKE 'Com_select'")[0][1])

    def idle(self):
        if self.checkpoint()[0] == '':
            # no checkpoint before the daemon has seen a transaction: give it one
            self.m.q('UPDATE flat SET price = price + 0.01 WHERE id = 1')
        if self.wait_caught_up(self.master_pos(), 300) is None:
            print('  the daemon did not catch up within 300 s')
            self.rc = 1

    # ---- 1: lag at a steady rate
    def lag(self):
        runs = (os.environ.get('BENCH_LAG_RUNS') or '10:default:60 100:default:30 10:100ms:30').split()
        poll = env_int('BENCH_POLL_MS', 10) / 1000
        alias = self.a.prefix + '_products'
        # what the pollers alone cost the engine (no writes)
        # BENCH_SEARCHABLE=0: no _search poller (it costs the engine a core
        # at 10 ms), only the acknowledged lag
        pollers = [Poller(self.a.search, alias, 'search', poll)] if os.environ.get('BENCH_SEARCHABLE') != '0' else []
        if os.environ.get('BENCH_DELIVERED'):
            pollers.append(Poller(self.a.search, alias, 'get', poll))
        warm = env_int('BENCH_WARMUP', 20)
        if warm > 0:
            # a freshly started engine spends seconds of CPU compiling (JIT):
            # the first run would measure that
            self.lag_one(10, None, warm, quiet=True)
        self.idle()
        self.meter.start()
        for p in pollers:
            p.start()
        time.sleep(5)
        for p in pollers:
            p.stop = True
            p.join()
        print('pollers alone for 5 s (no writes): %s polls' % '/'.join(str(p.polls) for p in pollers))
        print(self.meter.line())
        for run in runs:
            # TICK_MS:REFRESH:SECONDS[:RATE] (RATE: BENCH_LAG_RATE)
            f = run.split(':')
            self.lag_one(int(f[0]), None if f[1] == 'default' else f[1], int(f[2]),
                         rate=int(f[3]) if len(f) > 3 else None)

    def lag_one(self, tick_ms, refresh, secs, quiet=False, rate=None):
        rate = rate or env_int('BENCH_LAG_RATE', 2000)
        tick = tick_ms / 1000
        poll = env_int('BENCH_POLL_MS', 10) / 1000
        per = max(1, round(rate * tick))
        nprod = (per - 1) // 2
        nsku = per - 1 - nprod
        alias = self.a.prefix + '_products'
        self.e.req('PUT', '/%s/_settings' % alias, {'index': {'refresh_interval': refresh}})
        self.idle()
        pids = list(range(1, self.np + 1))
        pids.remove(PROBE_ID)
        skus = [int(r[0]) for r in self.m.q('SELECT id FROM skus')]
        ticks = int(secs / tick)
        base = int(float(self.m.q('SELECT weight FROM products WHERE id = %d' % PROBE_ID)[0][0]))
        if quiet:
            print('warm-up: %d s of the lag writer (not measured)' % secs, end='')
        else:
            print('phase lag (refresh_interval %s): %d row changes/s for %d s: a transaction every %.0f ms with '
                  '%d product updates, %d SKU updates and the probe (products.weight of product %d); '
                  'pollers every %.0f ms'
                  % (refresh or 'engine default, 1s', rate, secs, tick * 1000, nprod, nsku, PROBE_ID, poll * 1000))
        # BENCH_SEARCHABLE=0: no _search poller (it costs the engine a core
        # at 10 ms), only the acknowledged lag
        pollers = [Poller(self.a.search, alias, 'search', poll)] if os.environ.get('BENCH_SEARCHABLE') != '0' else []
        if os.environ.get('BENCH_DELIVERED'):
            pollers.append(Poller(self.a.search, alias, 'get', poll))
        if quiet:
            pollers = []
        for p in pollers:
            p.start()
        cp = CkptPoller(self.a.mysql_port, self.a.db, self.a.meta, self.a.source)
        cp.start()
        acks = [AckPoller(self.a.admin, self.a.token)] if self.a.admin and not quiet else []
        for p in acks:
            p.start()
        rnd = random.Random(5)
        commits, positions, gtids, changes, late, maxlate = [], [], [], 0, 0, 0.0
        start_pos = self.master_pos()
        sel0 = self.com_select()
        req0 = self.bulk_requests() if not quiet else 0
        self.meter.start()
        t0 = now()
        for k in range(1, ticks + 1):
            due = t0 + (k - 1) * tick
            d = due - now()
            if d > 0:
                time.sleep(d)
            elif -d > tick:
                late += 1
                maxlate = max(maxlate, -d)
            r = self.w.q('BEGIN; UPDATE products SET price = price + 0.01 WHERE id IN (%s); SELECT ROW_COUNT();'
                         'UPDATE skus SET stock = stock + 1 WHERE id IN (%s); SELECT ROW_COUNT();'
                         'UPDATE products SET weight = %d WHERE id = %d; SELECT ROW_COUNT(); COMMIT;'
                         'SELECT @@last_gtid; SHOW MASTER STATUS'
                         % (','.join(map(str, rnd.sample(pids, nprod))),
                            ','.join(map(str, rnd.sample(skus, nsku))), base + k, PROBE_ID))
            commits.append(now())
            gtids.append(r[3][0])
            positions.append((r[4][0], int(r[4][1])))
            changes += sum(int(x[0]) for x in r[:3])
        t_w = now()
        if quiet:
            cp.stop = True
            cp.join()
            self.idle()
            print('; the daemon caught up %.1f s after the last commit' % (now() - t_w))
            return
        positions = self.commit_ends(start_pos, gtids, positions)
        vers = [pos_version(x) for x in positions]
        deadline = now() + 60
        while any(x.version.seen_at(vers[-1]) is None for x in pollers + acks + [cp]) and now() < deadline:
            time.sleep(0.05)
        t_end = now()
        meter = self.meter.line()
        if any(x.version.seen_at(vers[-1]) is None for x in pollers):
            # why: the probe document as the engine holds it (its version,
            # the version field the update scripts compare, the probe's
            # value) against the last commits' versions
            st, h = self.e.req('GET', '/%s/_doc/%d?routing=%d&_source_includes=weight,ss_version,ss_hash'
                               % (alias, PROBE_ID, PROBE_ID))
            print('  PROBE VERSION NOT SEEN: the engine holds %s (HTTP %s); the last 3 commits\' '
                  'versions %s, the last probe value %d'
                  % (json.dumps({k: h.get(k) for k in ('_version', '_seq_no', '_source')}, default=str), st,
                     vers[-3:], base + ticks))
        for p in pollers + acks + [cp]:
            p.stop = True
            p.join()
        # SELECTs the daemon sent: all of them but the writer's 4 a transaction and the checkpoint poller's 2 a poll
        sel = self.com_select() - sel0 - 4 * ticks - 2 * cp.polls
        print('  writer: %d row changes in %d transactions in %.1f s = %.0f changes/s (target %d); '
              '%d transactions started more than one tick late (max %.0f ms)'
              % (changes, ticks, t_w - t0, changes / (t_w - t0), rate, late, maxlate * 1000))
        series = [('acknowledged by the engine (the daemon\'s low-water mark at or past the commit, '
                   'GET /api/v1/live every 10 ms)', p.version, vers, p) for p in acks]
        series.append(('saved checkpoint (at or past the commit; polled every 20 ms, saved every '
                       'checkpoint_interval_ms)', cp.version, vers, cp))
        for p in pollers:
            what = 'searchable' if p.kind == 'search' else 'delivered (realtime GET)'
            series.append((what + ' (the version of the commit or newer)', p.version, vers, p))
            series.append((what + ' data (the probe value or newer)', p.value, [base + k for k in range(1, ticks + 1)], p))
        result = {'tag': os.environ.get('BENCH_TAG', ''), 'rate': rate, 'refresh': refresh or '1s',
                  'tick_ms': tick_ms, 'seconds': secs, 'changes': changes,
                  'changes_per_s': changes / (t_w - t0), 'late_ticks': late}
        for label, ser, keys, p in series:
            lags = []
            missing = 0
            for key, c in zip(keys, commits):
                t = ser.seen_at(key)
                if t is None:
                    missing += 1
                    t = t_end  # a lower bound
                lags.append(t - c)
            print('  lag %s: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms%s'
                  % (label, 1000 * pct(lags, .5), 1000 * pct(lags, .9), 1000 * pct(lags, .99), 1000 * max(lags),
                     ' (LOWER BOUNDS: %d of %d probes not seen %.0f s after the last commit)'
                     % (missing, len(keys), t_end - t_w) if missing else ''))
            kind = label.split(' (')[0]
            result[kind] = {'p50_ms': 1000 * pct(lags, .5), 'p90_ms': 1000 * pct(lags, .9),
                            'p99_ms': 1000 * pct(lags, .99), 'max_ms': 1000 * max(lags),
                            'lower_bounds': missing}
            # the p99 of each tenth of the run, to show spikes and trends
            n = len(lags)
            print('      p99 of each tenth of the run (ms): ' +
                  ' '.join('%.0f' % (1000 * pct(lags[i * n // 10:(i + 1) * n // 10], .99)) for i in range(10)))
        print('  polls: %s; checkpoint polls %d%s' % (', '.join('%s %d (%d errors)' % (p.kind, p.polls, p.errors)
                                                             for p in pollers), cp.polls,
                                                   ''.join('; /api/v1/live polls %d (%d errors)' % (p.polls, p.errors)
                                                           for p in acks)))
        print('  the daemon sent MariaDB about %d SELECTs, %.1f per transaction (SHOW GLOBAL STATUS Com_select, '
              'less the driver\'s own)' % (sel, sel / ticks))
        print(meter)
        cpu = self.meter.last
        result.update({'wall_s': cpu['t'], 'engine_cpu_s': cpu['engine'], 'daemon_cpu_s': cpu['daemon'],
                       'mysql_cpu_s': cpu['mysql'],
                       'engine_cpu_us_per_change': 1e6 * cpu['engine'] / max(changes, 1),
                       'daemon_cpu_us_per_change': 1e6 * cpu['daemon'] / max(changes, 1),
                       'bulk_requests': self.bulk_requests() - req0})
        print('  bulk requests: %d (%.1f a second, %.1f changes each); engine CPU %.0f us a change'
              % (result['bulk_requests'], result['bulk_requests'] / max(cpu['t'], 1e-9),
                 changes / max(result['bulk_requests'], 1), result['engine_cpu_us_per_change']))
        if os.environ.get('BENCH_RESULTS'):
            with open(os.environ['BENCH_RESULTS'], 'a') as out:
                out.write(json.dumps(result, default=float) + '\n')
        self.e.req('PUT', '/%s/_settings' % alias, {'index': {'refresh_interval': None}})

    # ---- 2 and 3: maximum sustained changes/s
    def burst(self, name, txns, n, what):
        """txns(k): the phase's transactions, about k row changes. Measured
        twice (BENCH_BURST_MODES, default "beside,backlog"): with the writer
        committing beside the daemon (timed from the first commit), and as a
        backlog (the daemon SIGSTOPped while the writer commits everything,
        timed from its SIGCONT: the reader behind, the writer's own CPU out
        of the way)."""
        print('phase %s: %s' % (name, what))
        warm = env_int('BENCH_BURST_WARMUP', 20000)
        if warm > 0 and name not in self.warmed:
            # the same kind of work first, unmeasured: a freshly started
            # engine spends seconds compiling (JIT) and merging the first
            # sync's segments, and the baselines run on a warm engine
            self.warmed.add(name)
            self.idle()
            for sql in txns(min(warm, n)):
                self.w.q(sql)
            if self.wait_caught_up(self.master_pos()) is None:
                print('  the warm-up did not catch up within 900 s')
            print('  (warm-up: about %d row changes of the same kind first, not measured)' % min(warm, n))
        for mode in os.environ.get('BENCH_BURST_MODES', 'beside,backlog').split(','):
            self.burst_one(mode, txns, n)

    def burst_one(self, mode, txns, n):
        backlog = mode == 'backlog'
        self.idle()
        changes = docs = ntx = 0
        c0 = delivery_counters(self.a.admin, self.a.token)
        if backlog:
            os.kill(self.a.daemon, signal.SIGSTOP)
        else:
            self.meter.start()
        t0 = now()
        try:
            for sql in txns(n):
                r = self.w.q(sql)
                changes += int(r[0][0])
                docs += int(r[0][1])
                ntx += 1
        finally:
            t_w = now()
            if backlog:
                self.meter.start()
                os.kill(self.a.daemon, signal.SIGCONT)
        written = t_w - t0
        if backlog:
            t0 = t_w
        target = self.master_pos()
        t_a = self.wait_acknowledged(target)
        t_c = self.wait_caught_up(target)
        c1 = delivery_counters(self.a.admin, self.a.token)
        meter = self.meter.line(int(c1.get('index_docs', 0) - c0.get('index_docs', 0)) if c0 and c1 else docs)
        if t_c is None:
            print('  the daemon did not catch up within 900 s')
            self.rc = 1
            return
        if backlog:
            print('  backlog: the daemon stopped (SIGSTOP) while the writer committed %d row changes in %d '
                  'transactions (%.2f s); timed from its SIGCONT:' % (changes, ntx, written))
        else:
            print('  beside the writer: %d row changes in %d transactions in %.2f s = %.0f changes/s (the writer '
                  'alone); timed from the first commit:' % (changes, ntx, written, changes / written))
        print('    caught up (checkpoint at %s:%d) after %.2f s => %.0f changes/s (%d documents rebuilt = %.0f docs/s)'
              % (target[0], target[1], t_c - t0, changes / (t_c - t0), docs, docs / (t_c - t0)))
        if t_a is not None:
            print('    acknowledged by the engine (the low-water mark past the last commit, before the checkpoint '
                  'save) after %.2f s => %.0f changes/s (%.0f docs/s)'
                  % (t_a - t0, changes / (t_a - t0), docs / (t_a - t0)))
        if c0 and c1:
            nb = c1.get('batches', 0) - c0.get('batches', 0)
            nd = c1.get('index_docs', 0) - c0.get('index_docs', 0)
            if nb > 0:
                print('    delivery: %d documents acknowledged in %d bulk requests = %.0f a request '
                      '(%d coalesced in the queue)' % (nd, nb, nd / nb, c1.get('coalesced', 0) - c0.get('coalesced', 0)))
        print('  ' + meter)

    def root(self):
        n, t = env_int('BENCH_ROOT_CHANGES', 100000), env_int('BENCH_TXN', 500)

        def txns(n):
            done, a = 0, 1
            while done < n:
                b = min(a + min(t, n - done) - 1, self.np)
                yield ('BEGIN; UPDATE flat SET price = price + 0.01 WHERE id BETWEEN %d AND %d;'
                       'SELECT ROW_COUNT(), ROW_COUNT(); COMMIT' % (a, b))
                done += b - a + 1
                a = 1 if b >= self.np else b + 1
        self.burst('root', txns, n, '%d UPDATEs of the root-only table `flat` (%d rows, no relations), %d rows '
                   'a transaction, as fast as one client can' % (n, self.np, t))
        # spot check: price as MySQL has it, and one document per row touched
        bad = 0
        for i in random.Random(7).sample(range(1, self.np + 1), 20):
            want = decimal.Decimal(self.m.q('SELECT price FROM flat WHERE id = %d' % i)[0][0])
            st, j = self.e.req('GET', '/%s_flat/_doc/%d' % (self.a.prefix, i))
            got = j.get('_source', {}).get('price')
            if got is None or decimal.Decimal(str(got)) != want:
                bad += 1
                print('  CHECK flat %d: price %s in the engine, %s in MySQL' % (i, got, want))
        self.e.req('POST', '/%s_flat/_refresh' % self.a.prefix)
        cnt = self.e.req('GET', '/%s_flat/_count' % self.a.prefix)[1].get('count')
        want = min(n, self.np)
        print('  check: 20 sampled documents %s; %s documents in the index (expected %d)'
              % ('match MySQL' if not bad else '%d DIFFER' % bad, cnt, want))
        if bad or cnt != want:
            self.rc = 1

    def nested(self):
        n, t = env_int('BENCH_NESTED_CHANGES', 80000), env_int('BENCH_TXN', 500)
        r = max(1, t // 3)  # products per SKU transaction (3 SKUs each on average)

        st = dict(a=1, ta=1, tpass=0, i=0)  # kept between calls: the tag links made stay made

        def txns(n):
            done = 0
            a, ta, tpass, i = st['a'], st['ta'], st['tpass'], st['i']
            while done < n:
                i += 1
                if i % 4:
                    b = min(a + r - 1, self.np)
                    yield ('BEGIN; UPDATE skus SET stock = stock + 1 WHERE product_id BETWEEN %d AND %d;'
                           'SELECT ROW_COUNT(), (SELECT COUNT(DISTINCT product_id) FROM skus '
                           'WHERE product_id BETWEEN %d AND %d); COMMIT' % (a, b, a, b))
                    done += 3 * (b - a + 1)  # an estimate for the loop; the counts come from ROW_COUNT
                    a = 1 if b >= self.np else b + 1
                else:
                    b = min(ta + t - 1, self.np)
                    if tpass % 2 == 0:
                        op = ('INSERT INTO product_tags (product_id, tag_id) SELECT id, %d FROM products '
                              'WHERE id BETWEEN %d AND %d' % (NEW_TAG, ta, b))
                    else:
                        op = ('DELETE FROM product_tags WHERE tag_id = %d AND product_id BETWEEN %d AND %d'
                              % (NEW_TAG, ta, b))
                    yield 'BEGIN; %s; SELECT ROW_COUNT(), ROW_COUNT(); COMMIT' % op
                    done += b - ta + 1
                    if b >= self.np:
                        ta, tpass = 1, tpass + 1
                    else:
                        ta = b + 1
                st.update(a=a, ta=ta, tpass=tpass, i=i)
        self.burst('nested', txns, n, 'about %d changes of products with nested SKUs and tags: 3 of 4 transactions '
                   'UPDATE the SKUs of %d products (~%d rows), 1 of 4 links (or unlinks) a tag to %d products; '
                   'each change rebuilds its product document (SKUs, warehouses, barcodes, tags, brand, category)'
                   % (n, r, 3 * r, t))
        bad = 0
        for i in random.Random(8).sample(range(2, self.np + 1), 20):
            stock = int(self.m.q('SELECT COALESCE(SUM(stock), 0) FROM skus WHERE product_id = %d' % i)[0][0])
            ntags = int(self.m.q('SELECT COUNT(*) FROM product_tags WHERE product_id = %d' % i)[0][0])
            st, j = self.e.req('GET', '/%s_products/_doc/%d' % (self.a.prefix, i))
            src = j.get('_source')
            if src is None:
                continue  # never touched (fewer changes than products)
            gstock = sum(int(s.get('stock') or 0) for s in src.get('skus') or [])
            gtags = len(src.get('tags') or [])
            if (gstock, gtags) != (stock, ntags):
                bad += 1
                print('  CHECK product %d: engine stock %d tags %d, MySQL stock %d tags %d'
                      % (i, gstock, gtags, stock, ntags))
        print('  check: 20 sampled products (sum of SKU stock, number of tags) %s'
              % ('match MySQL' if not bad else '%d DIFFER' % bad))
        if bad:
            self.rc = 1

    def moves(self):
        """Parent/child moves: reviews (child documents of products, routed by
        their product) moved to other products, BENCH_MOVES_TXN a transaction.
        Each move leaves a copy under the old routing that the daemon looks up
        (refresh + search) and deletes; the figure is how fast a backlog of
        them is caught up. Checked: 50 sampled moved reviews exist once, under
        their product's routing."""
        n, t = env_int('BENCH_MOVES', 20000), env_int('BENCH_MOVES_TXN', 4)
        meta = env_int('BENCH_MOVES_META', 10)
        ids = [int(r[0]) for r in self.m.q('SELECT id FROM reviews ORDER BY id')]
        cats = [int(r[0]) for r in self.m.q('SELECT id FROM categories ORDER BY id')]
        rnd = random.Random(11)
        moved = []

        def txns(n):
            done = i = 0
            while done < n:
                k = min(t, n - done)
                ups = []
                for _ in range(k):
                    rid = rnd.choice(ids)
                    moved.append(rid)
                    ups.append('UPDATE reviews SET product_id = %d WHERE id = %d' % (rnd.randint(1, self.np), rid))
                i += 1
                if meta and i % meta == 0:  # a delayed-effect table: its change snapshot ends a group
                    ups.append("UPDATE categories SET slug = CONCAT(slug, '') , name = name, parent_id = parent_id, "
                               "updated_at = NOW(6) WHERE id = %d" % rnd.choice(cats))
                yield 'BEGIN; %s; SELECT %d, %d; COMMIT' % ('; '.join(ups), k, k)
                done += k
        self.burst('moves', txns, n, '%d reviews (child documents, routed by their product) moved to another '
                   'product, %d a transaction: each move leaves a copy under the old routing, looked up and '
                   'deleted; every %s transaction also touches a category (delay_effect: a change snapshot, '
                   'which ends a group of transactions built together)' % (n, t, meta or 'no'))
        self.e.req('POST', '/%s_products/_refresh' % self.a.prefix)
        bad = 0
        for rid in random.Random(12).sample(sorted(set(moved)), min(50, len(set(moved)))):
            pid = self.m.q('SELECT product_id FROM reviews WHERE id = %d' % rid)[0][0]
            body = {'query': {'ids': {'values': ['review-%d' % rid]}}, '_source': False}
            st, j = self.e.req('POST', '/%s_products/_search' % self.a.prefix, body)
            hits = [(h.get('_id'), h.get('_routing')) for h in j.get('hits', {}).get('hits', [])]
            if len(hits) != 1 or hits[0][1] != pid:
                bad += 1
                print('  CHECK review %d (product %s in MySQL): %s in the engine' % (rid, pid, hits))
        print('  check: 50 sampled moved reviews %s'
              % ('exist once, under their product' if not bad else '%d WRONG' % bad))
        if bad:
            self.rc = 1

    def childbulk(self):
        """One UPDATE of BENCH_CHILD_ROWS child rows (default every SKU), then a
        reindex of the products index: the time until every root document
        holds the change (the checkpoint past the commit) beside the time of
        the reindex (`searchsync reindex`, which waits for the switch)."""
        lim = env_int('BENCH_CHILD_ROWS', 0)
        alias = self.a.prefix + '_products'
        top = int(self.m.q('SELECT MAX(id) FROM (SELECT id FROM skus ORDER BY id LIMIT %d) s' % lim)[0][0]
                  if lim else self.m.q('SELECT MAX(id) FROM skus')[0][0])
        roots = int(self.m.q('SELECT COUNT(DISTINCT product_id) FROM skus WHERE id <= %d' % top)[0][0])
        allroots = int(self.m.q('SELECT COUNT(*) FROM products')[0][0])
        print('phase childbulk: one UPDATE of the SKUs with id <= %d (%d products have them, of %d), then a '
              'reindex of %s' % (top, roots, allroots, alias))
        self.idle()
        self.meter.start()
        t0 = now()
        r = self.w.q('UPDATE skus SET stock = stock + 1 WHERE id <= %d; SELECT ROW_COUNT()' % top)
        t_w = now()
        rows = int(r[0][0])
        t_c = self.wait_caught_up(self.master_pos())
        meter = self.meter.line()
        if t_c is None:
            print('  the daemon did not catch up within 900 s')
            self.rc = 1
            return
        upd = t_c - t0
        print('  the UPDATE of %d rows took %.2f s in MariaDB; every product document rebuilt %.2f s after it '
              'started (%.2f s after its commit): %.0f roots/s'
              % (rows, t_w - t0, upd, t_c - t_w, roots / upd))
        print(meter)
        bad = 0
        for i in random.Random(9).sample(range(2, self.np + 1), 20):
            stock = int(self.m.q('SELECT COALESCE(SUM(stock), 0) FROM skus WHERE product_id = %d' % i)[0][0])
            st, j = self.e.req('GET', '/%s/_doc/%d' % (alias, i))
            src = j.get('_source') or {}
            gstock = sum(int(x.get('stock') or 0) for x in src.get('skus') or [])
            if gstock != stock:
                bad += 1
                print('  CHECK product %d: engine stock %d, MySQL %d' % (i, gstock, stock))
        print('  check: 20 sampled products (sum of SKU stock) %s' % ('match MySQL' if not bad else '%d DIFFER' % bad))
        if bad:
            self.rc = 1
        if not self.a.bin:
            return
        self.meter.start()
        t1 = now()
        p = subprocess.run([self.a.bin, 'reindex', '--config', self.a.config, alias],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rdx = now() - t1
        meter = self.meter.line()
        if p.returncode != 0:
            print('  reindex failed (exit %d): %s' % (p.returncode, p.stdout.strip()[-500:]))
            self.rc = 1
            return
        print('  reindex of %s (%d roots): %.2f s = %.0f roots/s' % (alias, allroots, rdx, allroots / rdx))
        print(meter)
        print('  => the child UPDATE reached its %d roots in %.2f x the reindex time (target <= 2); per root: '
              '%.2f x' % (roots, upd / rdx, (upd / roots) / (rdx / allroots)))


def main():
    ap = argparse.ArgumentParser()
    for k in ('mysql-port', 'db', 'meta', 'source', 'search', 'prefix'):
        ap.add_argument('--' + k, required=True)
    for k in ('daemon', 'engine-pgid', 'mysql-pgid'):
        ap.add_argument('--' + k, required=True, type=int)
    ap.add_argument('--phases', default='lag,root,nested')
    ap.add_argument('--admin', default='', help='the daemon\'s admin URL (acknowledged lag from /api/v1/live)')
    ap.add_argument('--token', default='')
    ap.add_argument('--bin', default='', help='searchsync (phase childbulk runs a reindex with it)')
    ap.add_argument('--config', default='')
    a = ap.parse_args()
    b = Bench(a)
    for ph in a.phases.split(','):
        getattr(b, ph)()
        sys.stdout.flush()
    rss, hwm = proc_mem(a.daemon)
    print('daemon memory at the end: RSS %.1f MiB, VmHWM (peak) %.1f MiB' % (rss, hwm))
    b.w.close()
    b.m.close()
    return b.rc


if __name__ == '__main__':
    sys.exit(main())
