#!/usr/bin/env python3
"""tests/bench/cost_driver.py — the points, meters, raw loads, table and
plots of tests/bench/bench_cost.sh (cost as the work grows), which
documents the workloads and knobs. Python stdlib only; SQL through `mariadb`
clients, the engine through http.client, the plots through gnuplot.

    cost_driver.py run --searchsync BIN --mysql-port P --mysql-pid PID
                       --search URL --search-pid PID --out DIR
    cost_driver.py report DIR     the table and plots again from DIR/cost.jsonl

Every point appends one JSON line to OUT/cost.jsonl (keys below, in
record()); `report` takes the medians over every line of the file for each
(workload, size): delete the file to start afresh, keep it to add sizes or
rounds from another run (the 10M flat point on its own, say).
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import raw_bulk  # noqa: E402
from sync_driver import Sql as Session, engine_cpu, proc_cpu, wait_quiet  # noqa: E402

now = time.monotonic
MiB = 1024.0 * 1024.0
# the workloads in the order they run, and the document kind each is tuned
# and compared with (flat documents for the backlog too)
WORKLOADS = ('flat', 'nested', 'backlog', 'fanout')
REINDEX_PLOT = ('flat', 'nested')
CHANGE_PLOT = ('backlog', 'fanout-live', 'fanout-delayed')
ALL_PLOT = REINDEX_PLOT + CHANGE_PLOT


def env(name, default):
    v = os.environ.get(name)
    return default if v is None else v


def env_int(name, default):
    return int(os.environ.get(name) or default)


def sizes(name, default):
    return [int(x) for x in env(name, default).split()]


def log(msg):
    print('[%s] %s' % (time.strftime('%H:%M:%S'), msg))
    sys.stdout.flush()


def vm(pid, key):
    """VmRSS / VmHWM / ... of pid in MiB (0 when it is gone)."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith(key + ':'):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def reset_hwm(pid):
    """Peak RSS (VmHWM) set back to the current RSS (Linux: clear_refs 5), so
    that the next reading is this measure's peak. False when refused."""
    try:
        with open('/proc/%d/clear_refs' % pid, 'w') as f:
            f.write('5')
        return True
    except OSError:
        return False


class Sampler(threading.Thread):
    """VmRSS of named processes every period: [(t, {name: MiB})]."""

    def __init__(self, pids, period):
        super().__init__(daemon=True)
        self.pids, self.period, self.samples, self.stop = dict(pids), period, [], False

    def run(self):
        while not self.stop:
            self.samples.append((now(), {k: vm(p, 'VmRSS') for k, p in list(self.pids.items()) if p}))
            time.sleep(self.period)

    def end(self):
        self.stop = True
        self.join()
        self.samples.append((now(), {k: vm(p, 'VmRSS') for k, p in list(self.pids.items()) if p}))
        return self.samples


# ---------------------------------------------------------------- servers
class Http:
    """One keep-alive connection to the engine; JSON in and out."""

    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 80
        self.c = None

    def req(self, method, path, body=None, timeout=300):
        for attempt in (1, 2):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
                self.c.request(method, path, body=None if body is None else json.dumps(body),
                               headers={'Content-Type': 'application/json'} if body is not None else {})
                r = self.c.getresponse()
                data = r.read()
                return r.status, (json.loads(data) if data else {})
            except (http.client.HTTPException, OSError):
                if self.c:
                    self.c.close()
                self.c = None
                if attempt == 2:
                    raise


class Sql:
    """A `mariadb` client per statement batch (simple; not on any timed path
    that a client's start-up would distort)."""

    def __init__(self, port):
        self.base = ['mariadb', '--no-defaults', '-h', '127.0.0.1', '-P', str(port), '-u', 'root',
                     '--batch', '--skip-column-names', '--raw']

    def q(self, sql, db=None):
        r = subprocess.run(self.base + ([db] if db else []), input=sql, text=True, capture_output=True)
        if r.returncode:
            raise RuntimeError('mariadb: %s\n  in: %s' % (r.stderr.strip(), sql[:300]))
        return [line.split('\t') for line in r.stdout.splitlines()]

    def one(self, sql, db=None):
        rows = self.q(sql, db)
        return rows[0][0] if rows and rows[0] else None

    def pipe(self, db, chunks):
        """Statements from an iterator of text chunks into one session."""
        p = subprocess.Popen(self.base + [db], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        # the output is read by a thread: a client blocked on a full stdout
        # pipe would stop reading its input
        res = {}
        th = threading.Thread(target=lambda: res.update(out=p.stdout.read(), err=p.stderr.read()), daemon=True)
        th.start()
        try:
            for c in chunks:
                p.stdin.write(c)
            p.stdin.close()
        except BrokenPipeError:
            pass
        th.join()
        if p.wait():
            raise RuntimeError('mariadb: ' + res.get('err', '').strip())
        return [line.split('\t') for line in res.get('out', '').splitlines()]

    def pos_after(self, sql, db):
        """sql run, then SHOW MASTER STATUS in the same session: the binlog
        position right after its last commit (no other commit between, such
        as the daemon's own checkpoint saves, which an idle daemon only saves
        past once a minute)."""
        r = self.q(sql.rstrip().rstrip(';') + ';\nSHOW MASTER STATUS;\n', db)
        return r[-1][0], int(r[-1][1])


class Daemon:
    """`searchsync run` with its log; CPU and memory from /proc."""

    def __init__(self, b, ini, logpath):
        self.b, self.ini, self.logpath = b, ini, logpath
        self.p = None
        open(logpath, 'w').close()  # a run's own log (the stop mode's restarts append)

    def start(self):
        self.logf = open(self.logpath, 'a')
        self.p = subprocess.Popen([self.b.bin, 'run', '--config', self.ini], stdout=self.logf,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        self.t_start = now()
        return self.p.pid

    @property
    def pid(self):
        return self.p.pid

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def cpu(self):
        return proc_cpu(self.p.pid)

    def stop(self):
        if self.p is None:
            return
        if self.p.poll() is None:
            try:
                os.kill(self.p.pid, signal.SIGCONT)
                self.p.send_signal(signal.SIGTERM)
                self.p.wait(120)
            except subprocess.TimeoutExpired:
                log('  the daemon did not stop within 120 s of SIGTERM: killed')
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()
        elif self.p.returncode:
            log('  the daemon had exited with status %s; its log ends:\n%s' % (self.p.returncode, tail(self.logpath)))
        self.logf.close()
        self.p = None

    def log_size(self):
        try:
            return os.path.getsize(self.logpath)
        except OSError:
            return 0

    def log_since(self, off):
        with open(self.logpath, errors='replace') as f:
            f.seek(off)
            return f.read()


def tail(path, n=15):
    try:
        with open(path, errors='replace') as f:
            return ''.join(f.readlines()[-n:])
    except OSError:
        return ''


def problems(text, limit=8):
    """The WARN and ERROR lines of a stretch of log (the first `limit`)."""
    out = [ln for ln in text.splitlines() if re.search(r'\b(WARN|ERROR|FATAL)\b', ln)]
    return out[:limit], len(out)


def run_cmd(argv, outpath, pids=None, name='cmd'):
    """argv run to its end with its output in outpath: (exit status, wall s,
    CPU s from wait4, peak RSS MiB); pids[name] holds its pid meanwhile (for
    a Sampler). The peak is its VmHWM read every 20 ms while it runs, not
    wait4's ru_maxrss: that one also counts the memory of this Python
    process, which the child is a copy of until its exec."""
    hwm = 0.0
    with open(outpath, 'w') as f:
        t0 = now()
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
        if pids is not None:
            pids[name] = p.pid
        while True:
            hwm = max(hwm, vm(p.pid, 'VmHWM'))
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.02)
        t1 = now()
    if pids is not None:
        pids[name] = None
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, t1 - t0, ru.ru_utime + ru.ru_stime, hwm


# ---------------------------------------------------------------- the bench
class Bench:
    def __init__(self, a):
        self.a, self.bin = a, a.searchsync
        self.sql = Sql(a.mysql_port)
        self.poll = Session(a.mysql_port, 'mysql')  # one long session for the pollers
        self.url = a.search
        self.http = Http(a.search)
        self.engine_pgid = os.getpgid(a.search_pid)
        self.out = a.out
        self.tmp = os.path.join(a.out, 'tmp')  # dumps, mappings, command output: removed at the end
        self.logs = os.path.join(a.out, 'logs')  # the daemons' logs: kept
        os.makedirs(self.tmp, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        self.jsonl = os.path.join(a.out, 'cost.jsonl')
        self.rounds = env_int('BENCH_COST_ROUNDS', 1)
        self.txn = env_int('BENCH_COST_TXN', 100)
        self.chunk = env_int('BENCH_COST_CHUNK', 1000000)
        self.timeout = env_int('BENCH_COST_TIMEOUT', 3600)
        self.rss_period = env_int('BENCH_COST_RSS_MS', 250) / 1000.0
        self.backlog_mode = env('BENCH_COST_BACKLOG_MODE', 'sigstop')
        self.fanout_modes = env('BENCH_COST_FANOUT_MODES', 'live delayed').split()
        self.tune_pars = tuple(int(x) for x in env('BENCH_COST_TUNE_PARS', '2 4 8 16').split())
        self.tune_sizes = tuple(int(x) for x in env('BENCH_COST_TUNE_SIZES', '500 1000 2000 5000').split())
        self.tune_docs = env_int('BENCH_COST_TUNE_DOCS', 100000)
        self.tuned = {}
        self.run_id = time.strftime('%Y%m%dT%H%M%S')
        self.server_id = 7700 + os.getpid() % 1000
        self.failed = 0
        self.dry = False

    # ---- meters
    def engine_cpu(self):
        return engine_cpu(self.engine_pgid)

    def mysql_cpu(self):
        return proc_cpu(self.a.mysql_pid)

    OPS = (('bulks', ('thread_pool', 'write', 'completed')),
           ('indexed', ('indices', 'indexing', 'index_total')),
           ('index_ms', ('indices', 'indexing', 'index_time_in_millis')),
           ('refreshes', ('indices', 'refresh', 'total')),
           ('refresh_ms', ('indices', 'refresh', 'total_time_in_millis')),
           ('merges', ('indices', 'merges', 'total')),
           ('merge_ms', ('indices', 'merges', 'total_time_in_millis')),
           ('flushes', ('indices', 'flush', 'total')),
           ('searches', ('indices', 'search', 'query_total')),
           ('gets', ('indices', 'get', 'total')),
           ('http_opened', ('http', 'total_opened')),
           ('gc_young_ms', ('jvm', 'gc', 'collectors', 'young', 'collection_time_in_millis')),
           ('gc_old_ms', ('jvm', 'gc', 'collectors', 'old', 'collection_time_in_millis')))

    def engine_ops(self):
        """The engine's own counters (its node stats): shard bulk tasks
        done, documents indexed and the ms it took, refreshes, merges,
        flushes, searches, gets, connections opened and GC time; diffed
        around a measure they say where its CPU went."""
        node = self.node_stats('indices,thread_pool,http,jvm')
        out = {}
        for name, path in self.OPS:
            v = node
            for k in path:
                v = v.get(k) if isinstance(v, dict) else None
            out[name] = v
        return out

    @staticmethod
    def ops_delta(a, b):
        return {k: (b[k] - a[k] if isinstance(a.get(k), int) and isinstance(b.get(k), int) else None) for k in b}

    @staticmethod
    def ops_line(o):
        return ('%s shard bulks (%s docs each), indexing %s ms, %s refreshes (%s ms), %s merges (%s ms), '
                '%s flushes, %s searches, %s gets, GC %s ms young / %s ms old' % (
                    o.get('bulks'), fmt(o['indexed'] / o['bulks']) if o.get('bulks') and o.get('indexed') else '-',
                    o.get('index_ms'), o.get('refreshes'), o.get('refresh_ms'), o.get('merges'),
                    o.get('merge_ms'), o.get('flushes'), o.get('searches'), o.get('gets'), o.get('gc_young_ms'),
                    o.get('gc_old_ms')))

    def node_stats(self, metrics):
        """The engine's node stats of these metrics (its one node), None if
        it does not answer them."""
        try:
            st, j = self.http.req('GET', '/_nodes/_local/stats/' + metrics)
            return next(iter(j['nodes'].values())) if st == 200 else None
        except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError, StopIteration):
            return None

    def merges_running(self):
        """Merges the engine is running now, None if it does not say."""
        node = self.node_stats('indices/merge')
        try:
            return node['indices']['merges']['current']
        except (KeyError, TypeError):
            return None

    def engine_quiet(self, cores=0.15, timeout=180):
        """Until the engine runs no merge and uses under `cores` over a
        second; False after timeout. A merge the engine throttles runs on
        little CPU: one calm second did not prove the merges of the phase
        before done, and a round's second measure carried them (slower in
        2 of 3 rounds). Three calm seconds instead of one were tried: the
        figures did not move."""
        end = now() + timeout
        while True:
            calm = wait_quiet(self.engine_cpu, cores, 1, max(1, end - now()))
            if self.merges_running() in (0, None) or now() >= end:
                return calm
            t0 = now()
            while (self.merges_running() or 0) > 0 and now() < end:
                time.sleep(0.2)
            log('    (a merge was still running after a calm second: waited %.1f s more for it)' % (now() - t0))

    def count(self, index, query=None):
        try:
            st, j = (self.http.req('GET', '/%s/_count' % index) if query is None
                     else self.http.req('POST', '/%s/_count' % index, {'query': query}))
        except (OSError, http.client.HTTPException, ValueError):
            return 0
        return int(j.get('count', 0)) if st == 200 else 0

    def master_pos(self):
        r = self.sql.q('SHOW MASTER STATUS')[0]
        return r[0], int(r[1])

    def checkpoint(self, meta):
        r = self.poll.q("SELECT position FROM `%s`.offsets WHERE source = 'cost'" % meta)
        if not r or not r[0]:
            return '', 0
        f, _, p = r[0][0].rpartition(':')
        return f, int(p)

    def record(self, row):
        if self.dry:  # the unmeasured warm-up point (main)
            return
        row = dict(run=self.run_id, time=time.strftime('%Y-%m-%dT%H:%M:%S'), **row)
        with open(self.jsonl, 'a') as f:
            f.write(json.dumps(row) + '\n')

    def disk_check(self, n, per_doc):
        """Enough free space under the servers' and the dumps' directories for
        n documents of about per_doc bytes (table, two indices, dump, split)?"""
        need = 7 * n * per_doc
        for path in (self.tmp, self.a.harness or self.tmp):
            st = os.statvfs(path)
            free = st.f_bavail * st.f_frsize
            if free < need:
                log('  NOT ENOUGH DISK under %s: %.1f GiB free, about %.1f GiB needed for %d documents'
                    % (path, free / 2**30, need / 2**30, n))
                return False
        st = os.statvfs(self.tmp)
        log('  disk: %.1f GiB free under %s (about %.1f GiB needed)' % (st.f_bavail * st.f_frsize / 2**30,
                                                                         self.tmp, need / 2**30))
        return True

    # ---- data
    def gen(self, kind, db, n):
        """db created afresh and filled, not logged (sql_log_bin = 0), in
        INSERT ... SELECT chunks of BENCH_COST_CHUNK rows from MariaDB's
        Sequence engine."""
        t0 = now()
        self.sql.q('DROP DATABASE IF EXISTS `%s`; CREATE DATABASE `%s`' % (db, db))
        ddl = {
            'flat': ['CREATE TABLE flat (id INT UNSIGNED PRIMARY KEY, name VARCHAR(64) NOT NULL, '
                     'descr VARCHAR(255) NOT NULL, price DECIMAL(10,2) NOT NULL, qty INT NOT NULL, '
                     'rnd INT NOT NULL DEFAULT 0, ts BIGINT NOT NULL DEFAULT 0)'],
            'nested': ['CREATE TABLE root (id INT UNSIGNED PRIMARY KEY, name VARCHAR(64) NOT NULL, '
                       'descr VARCHAR(255) NOT NULL, price DECIMAL(10,2) NOT NULL, rnd INT NOT NULL DEFAULT 0)',
                       'CREATE TABLE child (id INT UNSIGNED PRIMARY KEY, root_id INT UNSIGNED NOT NULL, '
                       'name VARCHAR(64) NOT NULL, qty INT NOT NULL, rnd INT NOT NULL DEFAULT 0, KEY (root_id))'],
            'fanout': ['CREATE TABLE category (id INT UNSIGNED PRIMARY KEY, name VARCHAR(100) NOT NULL, '
                       'slug VARCHAR(120) NOT NULL)',
                       'CREATE TABLE prod (id INT UNSIGNED PRIMARY KEY, category_id INT UNSIGNED NOT NULL, '
                       'name VARCHAR(64) NOT NULL, descr VARCHAR(255) NOT NULL, price DECIMAL(10,2) NOT NULL, '
                       'KEY (category_id))',
                       "INSERT INTO category SELECT seq, CONCAT('category ', seq), CONCAT('cat-', seq) "
                       "FROM seq_1_to_10"],
        }[kind if kind != 'backlog' else 'flat']
        fill = {
            'flat': ["INSERT INTO flat (id, name, descr, price, qty) SELECT seq, CONCAT('item ', seq), "
                     "CONCAT('the description of item ', seq, ': ', MD5(seq), ' ', MD5(seq + 1)), "
                     "(seq % 10000) / 100, seq % 1000 FROM seq_{lo}_to_{hi}"],
            'nested': ["INSERT INTO root (id, name, descr, price) SELECT seq, CONCAT('root ', seq), "
                       "CONCAT('the description of root ', seq, ': ', MD5(seq)), (seq % 10000) / 100 "
                       "FROM seq_{lo}_to_{hi}",
                       "INSERT INTO child (id, root_id, name, qty) SELECT seq, (seq - 1) DIV 5 + 1, "
                       "CONCAT('child ', seq), seq % 100 FROM seq_{clo}_to_{chi}"],
            'fanout': ["INSERT INTO prod (id, category_id, name, descr, price) SELECT seq, 1, "
                       "CONCAT('product ', seq), CONCAT('the description of product ', seq, ': ', MD5(seq)), "
                       "(seq % 10000) / 100 FROM seq_{lo}_to_{hi}"],
        }[kind if kind != 'backlog' else 'flat']
        chunk = max(1, self.chunk // (5 if kind == 'nested' else 1))

        def stream():
            yield 'SET SESSION sql_log_bin = 0;\n' + ';\n'.join(ddl) + ';\n'
            lo = 1
            while lo <= n:
                hi = min(n, lo + chunk - 1)
                yield ';\n'.join(s.format(lo=lo, hi=hi, clo=5 * (lo - 1) + 1, chi=5 * hi) for s in fill) + ';\n'
                lo = hi + 1
            yield 'ANALYZE TABLE %s;\n' % {'flat': 'flat', 'backlog': 'flat', 'nested': 'root, child',
                                            'fanout': 'prod, category'}[kind]
        self.sql.pipe(db, stream())
        mb = self.sql.one("SELECT ROUND(SUM(data_length + index_length) / 1048576) FROM information_schema.tables "
                          "WHERE table_schema = '%s'" % db)
        log('  generated %s rows in %.1f s (%s MiB in InnoDB)' % (
            '%d roots + %d children' % (n, 5 * n) if kind == 'nested' else '%d' % n, now() - t0, mb))

    def mapping(self, kind, db, delayed=False):
        cols = lambda cs: [{'name': c, 'key': True} if c == 'id' else c for c in cs]  # noqa: E731
        if kind in ('flat', 'backlog'):
            tables = [{'table': db + '.flat', 'columns': cols(['id', 'name', 'descr', 'price', 'qty', 'rnd', 'ts'])}]
        elif kind == 'nested':
            tables = [{'table': db + '.root', 'columns': cols(['id', 'name', 'descr', 'price', 'rnd']),
                       'relations': [{'column': 'id', 'table': db + '.child', 'join_column': 'root_id',
                                      'extend_name': 'children', 'nested': True,
                                      'columns': cols(['id', 'root_id', 'name', 'qty', 'rnd'])}]}]
        else:
            tables = [{'table': db + '.prod', 'columns': cols(['id', 'category_id', 'name', 'descr', 'price']),
                       'relations': [{'column': 'category_id', 'table': db + '.category', 'join_column': 'id',
                                      'extend_name': 'category', 'nested': False,
                                      'columns': ['id', {'name': 'name', 'type': 'keyword'}, 'slug']}]}]
            if delayed:
                tables.append({'table': db + '.category', 'delay_effect': True})
        m = {'version': 1, 'indices': [{'alias': 'bcost_' + kind, 'shards': 1, 'replicas': 0,
                                        'history_retention': 0, 'tables': tables}]}
        path = os.path.join(self.tmp, 'mapping-%s%s.json' % (kind, '-delayed' if delayed else ''))
        with open(path, 'w') as f:
            json.dump(m, f, indent=1)
        return path

    def ini(self, meta, extra=None, server_id=None):
        """The daemon's configuration file (written anew): extra is more
        INI text (BENCH_COST_SS_INI when None); a new server id unless one
        is given."""
        if server_id is None:
            self.server_id += 1
        path = os.path.join(self.tmp, 'c.ini')
        with open(path, 'w') as f:
            f.write('[source]\nname = cost\nhost = 127.0.0.1\nport = %d\nuser = root\nserver_id = %d\nstart = now\n'
                    '[metadata]\ndatabase = %s\nreload_interval_ms = 500\n[search]\nurls = %s\n[admin]\nlisten =\n'
                    '[log]\nlevel = info\n' % (self.a.mysql_port, self.server_id, meta, self.url))
            # BENCH_COST_SS_INI: more of searchsync's configuration (INI text,
            # \n for new lines), e.g. '[delivery]\nbatch_max = 2000'
            if extra is None:
                extra = os.environ.get('BENCH_COST_SS_INI', '')
            f.write(extra.replace('\\n', '\n') + '\n')
        return path

    def import_mapping(self, ini, path):
        r = subprocess.run([self.bin, 'mapping', 'import', '--config', ini, path, '--yes'],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError('searchsync mapping import: ' + r.stdout + r.stderr)

    # ---- engine side
    def dump(self, alias, path):
        """Every document of alias (_id and _source as the engine holds them)
        into an NDJSON bulk file, and the index's mappings."""
        t0 = now()
        st, j = self.http.req('GET', '/%s/_mapping' % alias)
        mappings = next(iter(j.values()))['mappings']
        fp = '_scroll_id,hits.hits._id,hits.hits._source'
        st, j = self.http.req('POST', '/%s/_search?scroll=5m&filter_path=%s' % (alias, fp),
                              {'size': 5000, 'sort': ['_doc']})
        n, sid = 0, j.get('_scroll_id')
        with open(path, 'w') as f:
            while True:
                hits = j.get('hits', {}).get('hits', [])
                if not hits:
                    break
                f.write(''.join('{"index":{"_id":%s}}\n%s\n' % (json.dumps(h['_id']),
                                                                 json.dumps(h['_source'], separators=(',', ':')))
                                for h in hits))
                n += len(hits)
                st, j = self.http.req('POST', '/_search/scroll?filter_path=%s' % fp, {'scroll': '5m', 'scroll_id': sid})
                sid = j.get('_scroll_id', sid)
        if sid:
            self.http.req('DELETE', '/_search/scroll', {'scroll_id': sid})
        log('  dumped %d documents of %s (%.0f MiB) in %.1f s for the raw load' % (
            n, alias, os.path.getsize(path) / MiB, now() - t0))
        return mappings, n

    def tune(self, kind, path, mappings):
        if kind not in self.tuned:
            t0 = now()
            best, table = raw_bulk.tune(self.url, path, raw_bulk.index_body(mappings),
                                        sample_docs=self.tune_docs // (3 if kind == 'nested' else 1),
                                        pars=self.tune_pars, sizes=self.tune_sizes, index='bcost_raw_tune')
            self.tuned[kind] = best
            self.record(dict(workload='raw-tune', kind=kind, best=list(best),
                             table={'%dx%d' % k: v for k, v in table.items()}, seconds=now() - t0))
        return self.tuned[kind]

    def raw(self, kind, path, mappings, replace=None, rnd=1):
        """The tuned raw load of the dumped documents into a fresh index with
        the same mappings and the build settings (raw_bulk.INDEX_BODY); with
        replace (a function of the round giving (path, query)), that round's
        replacement documents posted again over a loaded index under the
        engine's default settings, timed to a _count, as a change phase is.
        The replaced index is kept through the point's rounds (its first
        round's load; bcost_raw_kept), so that round r replaces an index
        replaced r-1 times before, as searchsync's is: a fresh index each
        round made the baseline's later rounds cheaper than searchsync's
        (no merges of the rounds before to carry). Its _count is polled
        while it is posted, every 200 ms, as searchsync's index is through
        a measure: unsearched for 30 s, the kept index went search-idle and
        the engine skipped its scheduled refreshes (6 in a 1M replacement
        against 21-23 in searchsync's)."""
        par, size = self.tune(kind, path, mappings)
        kept = 'bcost_raw_kept'
        fresh = rnd == 1 or not replace or self.http.req('HEAD', '/' + kept)[0] != 200
        into = kept if replace and fresh else 'bcost_raw'
        self.engine_quiet()
        m0, e0 = self.mysql_cpu(), self.engine_cpu()
        st = {}
        rate = raw_bulk.load(self.url, into, path, par, size, raw_bulk.index_body(mappings), st)
        out = dict(raw_docs_per_s=rate, raw_seconds=st.get('secs'), raw_par=par, raw_size=size,
                   raw_cpu_engine_s=self.engine_cpu() - e0, raw_cpu_mariadb_s=self.mysql_cpu() - m0,
                   raw_cpu_sender_s=st.get('sender_cpu'), raw_non200=st.get('non200'))
        if into != kept:
            raw_bulk.delete(self.url, into)
        if replace:
            rpath, query = replace(rnd)
            self.engine_quiet()
            e0 = self.engine_cpu()
            o0 = self.engine_ops()
            st2 = {}
            out['raw_replace_docs_per_s'] = raw_bulk.replace(self.url, kept, rpath, par, size, query,
                                                             raw_bulk.count_docs(rpath), timeout=self.timeout,
                                                             stats=st2, poll_while=0.2)
            out['raw_replace_seconds'] = st2.get('secs')
            if st2.get('answered'):
                out['raw_replace_answered_s'] = st2['answered']
                out['raw_replace_answered_per_s'] = st2['docs'] / st2['answered']
            out['raw_replace_cpu_engine_s'] = self.engine_cpu() - e0
            out['raw_replace_engine_ops'] = self.ops_delta(o0, self.engine_ops())
            out['raw_replace_round'] = rnd
            for name in os.listdir(self.tmp):  # this round's replacement and its pieces
                if name.startswith(os.path.basename(rpath)):
                    q = os.path.join(self.tmp, name)
                    shutil.rmtree(q) if os.path.isdir(q) else os.unlink(q)
        log('  raw _bulk (%d connections x %d documents a request): load %s docs/s%s' % (
            par, size, fmt(rate), '' if not replace else
            ', the same documents changed posted again over the index the rounds before replaced (default '
            'refresh, to a _count) %s docs/s' % fmt(out.get('raw_replace_docs_per_s'))))
        if replace:
            log('    the raw replacement: last answer at %s s = %s docs/s; engine: %.1f CPU s; %s' % (
                fmt(out.get('raw_replace_answered_s'), '%.2f'), fmt(out.get('raw_replace_answered_per_s')),
                out['raw_replace_cpu_engine_s'], self.ops_line(out['raw_replace_engine_ops'])))
        return out

    def warm(self):
        """The engine warmed before the first measure, for
        BENCH_COST_WARMUP_S seconds: synthetic flat documents bulk-loaded
        into a throwaway index, then the same documents changed and posted
        again over it, externally versioned as searchsync sends them, under
        the engine's default settings (1 s refresh, a translog written on
        every request) until a _count shows them, over and over. A
        just-started JVM runs a path at half speed until its JIT has
        compiled it: loads alone made the first load of a run a
        cold-engine figure (47% of the raw load at 100k rows where the
        larger sizes measured 81-86%), and left the first replacement of
        existing documents cold (a 100k backlog at 12.8-14.0k docs/s as a
        run's first measure, 25.6-27.2k after one)."""
        secs = env_int('BENCH_COST_WARMUP_S', 30)
        if secs <= 0:
            return
        path, again = os.path.join(self.tmp, 'warm.ndjson'), os.path.join(self.tmp, 'warm-again.ndjson')
        with open(path, 'w') as f, open(again, 'w') as g:
            for i in range(1, 100001):
                doc = ('{"id":%d,"name":"warm %d","price":%d.%02d,"qty":%%d,"note":"%s"}\n'
                       % (i, i, i % 1000, i % 100, 'x' * (i % 120)))
                f.write('{"index":{"_id":"%d"}}\n' % i + doc % (i % 37))
                g.write('{"index":{"_id":"%d","version":2,"version_type":"external"}}\n' % i + doc % -1)
        t0, n = now(), 0
        while now() - t0 < secs:
            raw_bulk.load(self.url, 'bcost_warm', path, 4, 1000, raw_bulk.index_body())
            if raw_bulk.replace(self.url, 'bcost_warm', again, 4, 1000, {'term': {'qty': -1}}, 100000,
                                timeout=120, params='filter_path=error,status,errors,items.*.status,items.*.error'
                                ) is None:
                log('warning: the warm-up\'s replacement did not show within 120 s')
            n += 1
        raw_bulk.delete(self.url, 'bcost_warm')
        log('engine warmed: %d loads of 100000 synthetic documents and as many replacements of them in '
            '%.0f s (BENCH_COST_WARMUP_S=%d)' % (n, now() - t0, secs))

    # ---- the daemon and its first sync
    def first_sync(self, kind, n, db, meta, mapping, docs):
        ini = self.ini(meta)
        self.import_mapping(ini, mapping)
        d = Daemon(self, ini, os.path.join(self.logs, 'daemon-%s-%d.log' % (kind, n)))
        m0, e0 = self.mysql_cpu(), self.engine_cpu()
        pid = d.start()
        s = Sampler({'daemon': pid}, self.rss_period)
        s.start()
        alias = 'bcost_' + kind
        end = now() + self.timeout
        while now() < end:
            if self.sql.one("SELECT current_version FROM `%s`.index_configs WHERE alias = '%s'" % (meta, alias)) == '1':
                break
            if not d.alive():
                raise RuntimeError('the daemon exited during its first sync:\n' + tail(d.logpath))
            time.sleep(0.2)
        else:
            raise RuntimeError('the first sync did not finish in %d s' % self.timeout)
        wall = now() - d.t_start
        samples = s.end()
        row = self.run_row(meta, 1)
        hwm = vm(pid, 'VmHWM')
        rec = dict(workload=kind + '-first-sync', n=n, round=1, docs=row['docs'], seconds=row['secs'],
                   first_job_s=row.get('first_job_s'), jobs_done_s=row.get('jobs_done_s'),
                   docs_per_s=row['docs'] / row['secs'] if row['secs'] else None, seconds_cmd=wall,
                   rss_peak_mib=hwm, daemon_rss_peak_mib=hwm,
                   cpu_searchsync_s=d.cpu(), cpu_mariadb_s=self.mysql_cpu() - m0, cpu_engine_s=self.engine_cpu() - e0)
        rec.update(self.rss_summary(samples, 'daemon', kind + '-first-sync', n, 1))
        log('  first sync (v1, `searchsync run` on the filled tables): %d documents in %.2f s = %s docs/s '
            '(%.1f s from the start); daemon VmHWM %.1f MiB; CPU s: searchsync %.1f, MariaDB %.1f, engine %.1f'
            % (row['docs'], row['secs'], fmt(rec['docs_per_s']), wall, hwm, rec['cpu_searchsync_s'],
               rec['cpu_mariadb_s'], rec['cpu_engine_s']))
        if row['docs'] != docs:
            log('  WARNING: the first sync wrote %d documents, the tables hold %d' % (row['docs'], docs))
        return ini, d, rec

    def run_row(self, meta, version):
        """A reindex run's bookkeeping: documents, seconds from queued to the
        alias switched, and its timeline (first job started, last job done)."""
        r = self.sql.q('SELECT r.docs_written, TIMESTAMPDIFF(MICROSECOND, r.started_at, r.finished_at) / 1e6, r.status, '
                       'TIMESTAMPDIFF(MICROSECOND, r.started_at, MIN(j.started_at)) / 1e6, '
                       'TIMESTAMPDIFF(MICROSECOND, r.started_at, MAX(j.finished_at)) / 1e6 '
                       'FROM `%s`.reindex_runs r LEFT JOIN `%s`.reindex_run_jobs j ON j.run_id = r.id '
                       'WHERE r.version = %d GROUP BY r.id ORDER BY r.id DESC LIMIT 1' % (meta, meta, version))
        if not r:
            return dict(docs=0, secs=None, status='missing')
        f = lambda v: float(v) if v not in ('NULL', '') else None  # noqa: E731
        return dict(docs=int(r[0][0]), secs=f(r[0][1]), status=r[0][2], first_job_s=f(r[0][3]),
                    jobs_done_s=f(r[0][4]))

    def rss_summary(self, samples, worker, workload, n, rnd):
        """Start, end and highest sampled RSS of the worker (MiB), and the
        samples in OUT/rss-WORKLOAD-N-rROUND.dat (s from the start, its
        fraction of the run, worker RSS, daemon RSS)."""
        if not samples:
            return {}
        if worker != 'daemon':  # a command's own life only
            samples = [x for x in samples if x[1].get(worker)] or samples
        t0, t1 = samples[0][0], samples[-1][0]
        vals = [s.get(worker) for _, s in samples if s.get(worker)]
        name = 'rss-%s-%d-r%d.dat' % (workload, n, rnd)
        with open(os.path.join(self.out, name), 'w') as f:
            f.write('# t_s fraction %s_rss_mib daemon_rss_mib\n' % worker)
            for t, s in samples:
                f.write('%.3f %.4f %s %s\n' % (t - t0, (t - t0) / (t1 - t0) if t1 > t0 else 0,
                                              '%.1f' % s[worker] if s.get(worker) else 'NaN',
                                              '%.1f' % s['daemon'] if s.get('daemon') else 'NaN'))
        return dict(rss_start_mib=vals[0] if vals else None, rss_end_mib=vals[-1] if vals else None,
                    rss_max_sampled_mib=max(vals) if vals else None, rss_samples=len(samples), rss_file=name)

    def finish_point(self, d, dbs, meta):
        warn_lines, nwarn = problems(d.log_since(0)) if d else ([], 0)
        if d:
            d.stop()
            stops = [ln for ln in tail(d.logpath, 12).splitlines() if 'slice' in ln or 'stopped' in ln]
            for ln in stops[-3:]:
                log('  daemon: ' + ln.strip())
        if nwarn:
            log('  %d WARN/ERROR line(s) in the daemon\'s log (%s), the first:' % (nwarn, d.logpath))
            for ln in warn_lines:
                print('    ' + ln)
        self.http.req('DELETE', '/bcost_*?expand_wildcards=all')
        for db in dbs + [meta]:
            self.sql.q('DROP DATABASE IF EXISTS `%s`' % db)
        for name in os.listdir(self.tmp):
            p = os.path.join(self.tmp, name)
            if name.startswith(('docs-', 'replace-')):
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        # the binlog the point wrote (the backlog's changes, checkpoints)
        self.sql.q('FLUSH BINARY LOGS')
        self.sql.q("PURGE BINARY LOGS TO '%s'" % self.master_pos()[0])

    # ---- one measure of searchsync, the meters around it
    def measure(self, d, fn, extra_pids=None, fresh=False):
        """fn(pids) under the meters: the daemon's VmHWM reset first, RSS
        sampled; returns fn's dict plus CPU and memory. fresh: fn starts
        the daemon itself (its CPU and VmHWM from 0)."""
        self.engine_quiet()
        pids = {'daemon': None if fresh else d.pid}
        pids.update(extra_pids or {})
        reset = fresh or reset_hwm(d.pid)
        off = d.log_size()
        s = Sampler(pids, self.rss_period)
        s.pids = pids  # fn may add a worker's pid, or the daemon's
        c0, m0, e0 = 0 if fresh else d.cpu(), self.mysql_cpu(), self.engine_cpu()
        o0 = self.engine_ops()
        s.start()
        res = fn(pids)
        samples = s.end()
        res['engine_ops'] = self.ops_delta(o0, self.engine_ops())
        res.update(cpu_searchsync_s=d.cpu() - c0 + res.pop('cmd_cpu', 0), cpu_mariadb_s=self.mysql_cpu() - m0,
                   cpu_engine_s=self.engine_cpu() - e0,
                   daemon_rss_peak_mib=vm(d.pid, 'VmHWM') if reset else None)
        if res.get('rss_peak_mib') is None:
            res['rss_peak_mib'] = res['daemon_rss_peak_mib']
        worker = 'worker' if res.get('worker') else 'daemon'
        res.update(self.rss_summary(samples, worker, res['workload'], res['n'], res['round']))
        log('    engine during the measure: %s' % self.ops_line(res['engine_ops']))
        w, nw = problems(d.log_since(off))
        if nw:
            res['log_problems'] = w
            log('  %d WARN/ERROR line(s) in the daemon\'s log during the measure, the first: %s' % (nw, w[0].strip()))
        return res

    # ---- workloads
    def reindex_point(self, kind, n):
        db, meta, alias = 'bcost_%s' % kind, 'bcost_meta_%s' % kind, 'bcost_' + kind
        per_doc = {'flat': 330, 'nested': 700}[kind]
        if not self.disk_check(n, per_doc):
            self.failed += 1
            return
        log('%s: %d %s' % (kind, n, 'rows' if kind == 'flat' else 'roots x 5 children'))
        self.gen(kind, db, n)
        d = None
        try:
            ini, d, first = self.first_sync(kind, n, db, meta, self.mapping(kind, db), n)
            path = os.path.join(self.tmp, 'docs-%s-%d.ndjson' % (kind, n))
            mappings, got = self.dump(alias, path)
            version = 1
            raws = []
            for rnd in range(1, self.rounds + 1):
                order = ('ours', 'raw') if rnd % 2 else ('raw', 'ours')
                for what in order:
                    if what == 'raw':
                        raws.append(self.raw(kind, path, mappings))
                        continue
                    version += 1

                    def go(pids, v=version, rnd=rnd):
                        st, wall, cpu, maxrss = run_cmd([self.bin, 'reindex', '--config', ini, alias],
                                                        os.path.join(self.tmp, 'reindex.out'))
                        if st:
                            raise RuntimeError('searchsync reindex exited %d:\n%s' % (
                                st, tail(os.path.join(self.tmp, 'reindex.out'))))
                        row = self.run_row(meta, v)
                        return dict(workload=kind, n=n, round=rnd, version=v, docs=row['docs'], seconds=row['secs'],
                                    docs_per_s=row['docs'] / row['secs'] if row['secs'] else None,
                                    seconds_cmd=wall, cmd_cpu=cpu, cmd_rss_peak_mib=maxrss,
                                    first_job_s=row.get('first_job_s'), jobs_done_s=row.get('jobs_done_s'))
                    ours = self.measure(d, go)
                    log('  round %d: searchsync reindex (v%d): %d documents in %.2f s = %s docs/s (s from queued: '
                        'first job %s, last job done %s); daemon VmHWM %.1f MiB (RSS %.1f -> %.1f); CPU s: '
                        'searchsync %.1f, MariaDB %.1f, engine %.1f'
                        % (rnd, ours['version'], ours['docs'], ours['seconds'], fmt(ours['docs_per_s']),
                           fmt(ours.get('first_job_s'), '%.2f'), fmt(ours.get('jobs_done_s'), '%.2f'),
                           ours['rss_peak_mib'] or 0, ours.get('rss_start_mib') or 0, ours.get('rss_end_mib') or 0,
                           ours['cpu_searchsync_s'], ours['cpu_mariadb_s'], ours['cpu_engine_s']))
                if len(raws) == rnd:
                    ours.update(raws[-1])
                    ours['ratio'] = pct_of(ours['docs_per_s'], ours.get('raw_docs_per_s'))
                    self.record(ours)
                    log('  round %d: ratio to the raw load %s' % (rnd, fmt(ours['ratio'], '%.1f%%')))
            first.update(raws[0])
            first['ratio'] = pct_of(first['docs_per_s'], first.get('raw_docs_per_s'))
            self.record(first)
        except Exception as ex:  # one point failing must not hide the others' figures
            log('  %s %d FAILED: %s' % (kind, n, ex))
            self.failed += 1
        finally:
            self.finish_point(d, [db], meta)

    def indexed(self, index):
        """Documents the engine has indexed into index's primaries since it
        was created (its indexing counter, refreshed or not); None if not
        known."""
        try:
            st, j = self.http.req('GET', '/%s/_stats/indexing' % index)
            return int(j['_all']['primaries']['indexing']['index_total']) if st == 200 else None
        except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
            return None

    def wait_pos(self, meta, target, d, what, query=None, alias=None, want=None, indexed=None):
        """Poll (every 100 ms) until the checkpoint passes target and, with
        query, _count of it shows want documents: (t_checkpoint, t_count,
        t_first, t_indexed). With indexed (the index's indexing counter
        before), also when the counter first moved (t_first: how long the
        pipeline took to deliver anything) and when the engine had indexed
        want more documents, searchable or not (t_indexed): a time the
        refresh's schedule does not round up, as the raw replacement's last
        answer. Both None without indexed."""
        t_ck = t_ct = t_first = t_ix = None
        end = now() + self.timeout
        i = 0
        while now() < end and (t_ck is None or (query is not None and t_ct is None)):
            if t_ck is None and self.checkpoint(meta) >= target:
                t_ck = now()
            if indexed is not None and t_ix is None:
                got = self.indexed(alias) or 0
                if got > indexed and t_first is None:
                    t_first = now()
                if got >= indexed + want:
                    t_ix = now()
            if query is not None and t_ct is None and i % 2 == 0 and self.count(alias, query) >= want:
                t_ct = now()
                if indexed is not None and t_ix is None:
                    t_ix = t_ct
            i += 1
            if not d.alive():
                raise RuntimeError('the daemon exited during %s:\n%s' % (what, tail(d.logpath)))
            time.sleep(0.1)
        if t_ck is None or (query is not None and t_ct is None):
            raise RuntimeError('%s not done within BENCH_COST_TIMEOUT (%d s)' % (what, self.timeout))
        return t_ck, t_ct, t_first, t_ix

    def caught_up(self, meta, d, db, poke):
        """The daemon's checkpoint at the end of the binlog (a row changed
        first, so there is one)."""
        self.wait_pos(meta, self.sql.pos_after(poke, db), d, 'catching up')

    def transform(self, src, dst, fn):
        with open(src) as f, open(dst, 'w') as g:
            for i, line in enumerate(f):
                if i % 2:
                    doc = json.loads(line)
                    fn(doc)
                    line = json.dumps(doc, separators=(',', ':')) + '\n'
                g.write(line)
        return dst

    def backlog_point(self, n):
        kind, db, meta, alias = 'backlog', 'bcost_backlog', 'bcost_meta_backlog', 'bcost_backlog'
        if not self.disk_check(n, 330 + 400):  # + the binlog's before and after images
            self.failed += 1
            return
        log('backlog: %d single-row UPDATEs, %d a transaction, the daemon %s while they are written' % (
            n, self.txn, 'stopped (SIGSTOP)' if self.backlog_mode == 'sigstop' else 'not running'))
        # BENCH_COST_SS_INI_B: a second configuration measured in the same
        # rounds (workload backlog-b), the daemon restarted between them, the
        # order swapped every round; both against the round's one raw baseline
        variants = [('backlog', os.environ.get('BENCH_COST_SS_INI', ''))]
        if os.environ.get('BENCH_COST_SS_INI_B') is not None:
            variants.append(('backlog-b', os.environ['BENCH_COST_SS_INI_B']))
        self.gen(kind, db, n)
        d = None
        try:
            ini, d, first = self.first_sync(kind, n, db, meta, self.mapping(kind, db), n)
            running = variants[0][1]
            path = None
            for rnd in range(1, self.rounds + 1):
                raw = None
                if path and rnd % 2 == 0:
                    raw = self.raw('flat', path, mappings, replace, rnd)
                measured = []
                for vi, (name, extra) in enumerate(variants if rnd % 2 else variants[::-1]):
                    if extra != running:
                        d.stop()
                        self.ini(meta, extra, self.server_id)
                        d.start()
                        running = extra
                        log('  the daemon restarted with the configuration of %s' % name)
                    ours = self.backlog_round(d, n, db, meta, alias, name, rnd, 1000 + 10 * rnd + vi)
                    measured.append(ours)
                    if path is None:
                        path = os.path.join(self.tmp, 'docs-backlog-%d.ndjson' % n)
                        mappings, _ = self.dump(alias, path)
                        replace = lambda r, path=path: (  # noqa: E731
                            self.transform(path, os.path.join(self.tmp, 'replace-backlog-%d-r%d.ndjson' % (n, r)),
                                           lambda doc: doc.__setitem__('rnd', -r)), {'term': {'rnd': -r}})
                if raw is None:
                    raw = self.raw('flat', path, mappings, replace, rnd)
                for ours in measured:
                    ours.update(raw)
                    ours['ratio'] = pct_of(ours['docs_per_s'], raw.get('raw_docs_per_s'))
                    ours['ratio_replace'] = pct_of(ours['docs_per_s'], raw.get('raw_replace_docs_per_s'))
                    ours['ratio_replace_indexed'] = pct_of(ours['indexed_per_s'], raw.get('raw_replace_answered_per_s'))
                    self.record(ours)
                    log('  round %d%s: ratio to the raw load %s, to the raw replacement %s (searchable), %s '
                        '(indexed against answered)' % (
                            rnd, '' if len(variants) == 1 else ' (%s)' % ours['workload'],
                            fmt(ours['ratio'], '%.1f%%'), fmt(ours['ratio_replace'], '%.1f%%'),
                            fmt(ours['ratio_replace_indexed'], '%.1f%%')))
        except Exception as ex:
            log('  backlog %d FAILED: %s' % (n, ex))
            self.failed += 1
        finally:
            self.finish_point(d, [db], meta)

    def backlog_round(self, d, n, db, meta, alias, kind, rnd, mark):
        """One measure of the backlog: the daemon stopped (or SIGSTOPped)
        while n single-row UPDATEs are committed, then timed from its start
        (or SIGCONT) until the engine holds them all."""
        self.caught_up(meta, d, db, 'UPDATE flat SET ts = ts + 1 WHERE id = 1')
        self.engine_quiet()
        t0w = now()
        if self.backlog_mode == 'sigstop':
            os.killpg(d.pid, signal.SIGSTOP)
        else:
            d.stop()
        try:
            r = self.sql.pipe(db, iter([('BEGIN;%sCOMMIT;\n' % ''.join(
                'UPDATE flat SET rnd = %d WHERE id = %d;' % (mark, i) for i in range(a, min(a + self.txn, n + 1))))
                for a in range(1, n + 1, self.txn)] + ['SHOW MASTER STATUS;\n']))
        except Exception:
            if self.backlog_mode == 'sigstop':
                os.killpg(d.pid, signal.SIGCONT)
            raise
        writer_s = now() - t0w
        target = (r[-1][0], int(r[-1][1]))

        def go(pids):
            ix0 = self.indexed(alias)
            t0 = now()
            if self.backlog_mode == 'sigstop':
                os.killpg(d.pid, signal.SIGCONT)
            else:
                pids['daemon'] = d.start()
            t_ck, t_ct, t_first, t_ix = self.wait_pos(meta, target, d, 'the backlog', {'term': {'rnd': mark}},
                                                      alias, n, indexed=ix0)
            return dict(workload=kind, n=n, round=rnd, docs=n, seconds=t_ct - t0, docs_per_s=n / (t_ct - t0),
                        seconds_checkpoint=t_ck - t0, seconds_indexed=t_ix - t0, indexed_per_s=n / (t_ix - t0),
                        seconds_first_indexed=t_first - t0 if t_first else None,
                        writer_s=writer_s, mode=self.backlog_mode)
        ours = self.measure(d, go, fresh=self.backlog_mode != 'sigstop')
        log('  round %d: %d changes written in %.1f s while the daemon was %s; from its %s: all in the '
            'engine in %.2f s = %s docs/s (the first indexed at %s s, all at %.2f s = %s docs/s, checkpoint '
            'past them at %.2f s); '
            'daemon VmHWM %.1f MiB (RSS %.1f -> %.1f); CPU s: searchsync %.1f, MariaDB %.1f, engine %.1f'
            % (rnd, n, ours['writer_s'], 'stopped' if self.backlog_mode == 'sigstop' else 'not running',
               'SIGCONT' if self.backlog_mode == 'sigstop' else 'start', ours['seconds'],
               fmt(ours['docs_per_s']), fmt(ours['seconds_first_indexed'], '%.2f'), ours['seconds_indexed'],
               fmt(ours['indexed_per_s']),
               ours['seconds_checkpoint'], ours['rss_peak_mib'] or 0,
               ours.get('rss_start_mib') or 0, ours.get('rss_end_mib') or 0, ours['cpu_searchsync_s'],
               ours['cpu_mariadb_s'], ours['cpu_engine_s']))
        return ours

    def reload(self, d, ini, mapping, off):
        """mapping imported into the running daemon: until it logs the reload."""
        self.import_mapping(ini, mapping)
        end = now() + 60
        while now() < end:
            if 'mapping reloaded' in d.log_since(off):
                return
            time.sleep(0.1)
        raise RuntimeError('the daemon did not reload the mapping within 60 s')

    def fanout_point(self, n):
        kind, db, meta, alias = 'fanout', 'bcost_fanout', 'bcost_meta_fanout', 'bcost_fanout'
        if not self.disk_check(n, 330):
            self.failed += 1
            return
        log('fan-out: one category renamed under %d products (%s)' % (n, ' and '.join(self.fanout_modes)))
        self.gen(kind, db, n)
        d = None
        try:
            live_map, delayed_map = self.mapping(kind, db), self.mapping(kind, db, delayed=True)
            ini, d, first = self.first_sync(kind, n, db, meta, live_map, n)
            current = 'live'
            path = None
            raw = None
            for rnd in range(1, self.rounds + 1):
                modes = self.fanout_modes if rnd % 2 else self.fanout_modes[::-1]
                if path and rnd % 2 == 0:
                    raw = self.raw('fanout', path, mappings, replace, rnd)
                for mode in modes:
                    name = '%s-%d' % (mode, rnd)
                    if mode != current:
                        self.reload(d, ini, live_map if mode == 'live' else delayed_map, d.log_size())
                        current = mode
                    self.caught_up(meta, d, db, 'UPDATE category SET slug = slug WHERE id = 2; '
                                                'UPDATE category SET name = CONCAT(name, \'\') WHERE id = 3; '
                                                'UPDATE prod SET price = price + 0.01 WHERE id = 1')
                    q = {'term': {'category.name': name}}
                    if mode == 'live':
                        def go(pids, rnd=rnd, name=name, q=q):
                            t0 = now()
                            target = self.sql.pos_after("UPDATE category SET name = '%s' WHERE id = 1" % name, db)
                            t_ck, t_ct, _, _ = self.wait_pos(meta, target, d, 'the fan-out', q, alias, n)
                            return dict(workload='fanout-live', n=n, round=rnd, docs=n, seconds=t_ct - t0,
                                        docs_per_s=n / (t_ct - t0), seconds_checkpoint=t_ck - t0)
                        ours = self.measure(d, go)
                        log('  round %d, live: the rename reached all %d products in %.2f s = %s docs/s (checkpoint '
                            'past it at %.2f s); daemon VmHWM %.1f MiB (RSS %.1f -> %.1f); CPU s: searchsync %.1f, '
                            'MariaDB %.1f, engine %.1f'
                            % (rnd, n, ours['seconds'], fmt(ours['docs_per_s']), ours['seconds_checkpoint'],
                               ours['rss_peak_mib'] or 0, ours.get('rss_start_mib') or 0, ours.get('rss_end_mib') or 0,
                               ours['cpu_searchsync_s'], ours['cpu_mariadb_s'], ours['cpu_engine_s']))
                    else:
                        self.sql.q("UPDATE category SET name = '%s' WHERE id = 1" % name, db)
                        end = now() + 30
                        while int(self.sql.one("SELECT COUNT(*) FROM `%s`.change_snapshots WHERE status = 'init'"
                                               % meta)) < 1:
                            if now() > end:
                                raise RuntimeError('the rename made no change snapshot in 30 s')
                            time.sleep(0.1)
                        time.sleep(1)
                        early = self.count(alias, q)
                        if early:
                            log('  WARNING: %d products had the new name before the delayed run' % early)

                        def go(pids, rnd=rnd, name=name, q=q):
                            out = os.path.join(self.tmp, 'delayed-%d.out' % rnd)
                            t0 = now()
                            st, wall, cpu, maxrss = run_cmd([self.bin, 'delayed-run', '--config', ini], out,
                                                            pids, 'worker')
                            if st:
                                raise RuntimeError('searchsync delayed-run exited %d:\n%s' % (st, tail(out)))
                            t_ct = None
                            end = now() + self.timeout
                            while now() < end:
                                if self.count(alias, q) >= n:
                                    t_ct = now()
                                    break
                                time.sleep(0.1)
                            if t_ct is None:
                                raise RuntimeError('not every product has the new name after the delayed run:\n'
                                                   + tail(out))
                            text = open(out, errors='replace').read()
                            m = re.search(r'(\d+) document\(s\) rebuilt', text)
                            phases = re.search(r'time: (.*)', text)
                            return dict(workload='fanout-delayed', n=n, round=rnd, docs=n, seconds=t_ct - t0,
                                        docs_per_s=n / (t_ct - t0), seconds_cmd=wall, cmd_cpu=cpu,
                                        rss_peak_mib=maxrss, worker='delayed-run',
                                        rebuilt=int(m.group(1)) if m else None,
                                        phases=phases.group(1).strip() if phases else None)
                        ours = self.measure(d, go, {'worker': None})
                        log('  round %d, delayed run: %s products rebuilt, all with the new name %.2f s from its '
                            'start = %s docs/s (the command %.2f s; %s); delayed-run peak RSS %.1f MiB, daemon VmHWM '
                            '%.1f MiB; CPU s: searchsync %.1f (both processes), MariaDB %.1f, engine %.1f'
                            % (rnd, ours.get('rebuilt'), ours['seconds'], fmt(ours['docs_per_s']),
                               ours['seconds_cmd'], ours.get('phases'), ours['rss_peak_mib'],
                               ours['daemon_rss_peak_mib'] or 0, ours['cpu_searchsync_s'], ours['cpu_mariadb_s'],
                               ours['cpu_engine_s']))
                    if path is None:
                        path = os.path.join(self.tmp, 'docs-fanout-%d.ndjson' % n)
                        mappings, _ = self.dump(alias, path)
                        replace = lambda r, path=path: (  # noqa: E731
                            self.transform(path, os.path.join(self.tmp, 'replace-fanout-%d-r%d.ndjson' % (n, r)),
                                           lambda doc: doc['category'].__setitem__('name', 'raw-replaced-%d' % r)),
                            {'term': {'category.name': 'raw-replaced-%d' % r}})
                    if raw is None:
                        raw = self.raw('fanout', path, mappings, replace, rnd)
                    ours.update(raw)
                    ours['ratio'] = pct_of(ours['docs_per_s'], raw.get('raw_docs_per_s'))
                    ours['ratio_replace'] = pct_of(ours['docs_per_s'], raw.get('raw_replace_docs_per_s'))
                    self.record(ours)
                    log('  round %d, %s: ratio to the raw load %s, to the raw replacement %s' % (
                        rnd, mode, fmt(ours['ratio'], '%.1f%%'), fmt(ours['ratio_replace'], '%.1f%%')))
                raw = None
        except Exception as ex:
            log('  fanout %d FAILED: %s' % (n, ex))
            self.failed += 1
        finally:
            self.finish_point(d, [db], meta)


# ---------------------------------------------------------------- the report
def fmt(v, f='%.0f'):
    return '–' if v is None else f % v


def pct_of(x, y):
    return None if x is None or not y else 100.0 * x / y


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_n(n):
    return '%dM' % (n // 1000000) if n % 1000000 == 0 else '%dk' % (n // 1000) if n % 1000 == 0 else str(n)


def linear_fit(pts):
    """seconds = a + N / r by least squares over (N, seconds) points:
    (a, r, the largest distance of a point from the line in % of its time)."""
    k = len(pts)
    sx = sum(n for n, _ in pts)
    sy = sum(t for _, t in pts)
    sxx = sum(n * n for n, _ in pts)
    sxy = sum(n * t for n, t in pts)
    den = k * sxx - sx * sx
    b = (k * sxy - sx * sy) / den if den else 0.0
    a = (sy - b * sx) / k
    worst = max(abs(t - (a + b * n)) / t * 100 for n, t in pts)
    return a, (1 / b if b > 0 else float('inf')), worst


def report(out):
    path = os.path.join(out, 'cost.jsonl')
    rows = [json.loads(line) for line in open(path) if line.strip()] if os.path.exists(path) else []
    rows = [r for r in rows if r.get('workload') != 'raw-tune' and r.get('n')]
    if not rows:
        print('cost_driver: no points in %s' % path)
        return 1
    groups = {}
    for r in rows:
        groups.setdefault((r['workload'], r['n']), []).append(r)
    order = ['flat-first-sync', 'flat', 'nested-first-sync', 'nested', 'backlog', 'backlog-b', 'fanout-live',
             'fanout-delayed']
    keys = sorted(groups, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1]))

    def m(rs, f):
        return med([r.get(f) for r in rs])

    table = ['| workload | N | rounds | seconds | docs/s | raw _bulk docs/s (conn x docs) | ours / raw | '
             'raw replace docs/s | ours / replace | peak RSS MiB (sampled start → end) | '
             'CPU s: searchsync / MariaDB / engine | searchsync µs a doc |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for k in keys:
        rs = groups[k]
        r0 = rs[0]
        table.append('| %s | %d | %d | %s | %s | %s (%s) | %s | %s | %s | %s (%s → %s) | %s / %s / %s | %s |' % (
            k[0], k[1], len(rs), fmt(m(rs, 'seconds'), '%.2f'), fmt(m(rs, 'docs_per_s')),
            fmt(m(rs, 'raw_docs_per_s')), '%sx%s' % (r0.get('raw_par', '?'), r0.get('raw_size', '?')),
            fmt(m(rs, 'ratio'), '%.0f%%'), fmt(m(rs, 'raw_replace_docs_per_s')), fmt(m(rs, 'ratio_replace'), '%.0f%%'),
            fmt(m(rs, 'rss_peak_mib'), '%.1f'), fmt(m(rs, 'rss_start_mib'), '%.1f'), fmt(m(rs, 'rss_end_mib'), '%.1f'),
            fmt(m(rs, 'cpu_searchsync_s'), '%.1f'), fmt(m(rs, 'cpu_mariadb_s'), '%.1f'),
            fmt(m(rs, 'cpu_engine_s'), '%.1f'),
            fmt(med([1e6 * r['cpu_searchsync_s'] / r['docs'] for r in rs if r.get('docs') and
                     r.get('cpu_searchsync_s') is not None]))))
    text = '\n'.join(table)
    # the backlog once more, without the refresh's schedule: the engine's
    # indexing counter reaching N against the raw replacement's last answer
    ix = [k for k in keys if any(r.get('indexed_per_s') for r in groups[k])]
    if ix:
        t2 = ['| workload | N | rounds | indexed docs/s | raw replacement answered docs/s | ours / raw | '
              'ours / raw by round | searchable docs/s: ours / raw |', '|---|---|---|---|---|---|---|---|']
        for k in ix:
            rs = [r for r in groups[k] if r.get('indexed_per_s')]
            t2.append('| %s | %d | %d | %s | %s | %s | %s | %s / %s |' % (
                k[0], k[1], len(rs), fmt(m(rs, 'indexed_per_s')), fmt(m(rs, 'raw_replace_answered_per_s')),
                fmt(m(rs, 'ratio_replace_indexed'), '%.0f%%'),
                ', '.join(fmt(r.get('ratio_replace_indexed'), '%.0f%%') for r in rs),
                fmt(m(rs, 'docs_per_s')), fmt(m(rs, 'raw_replace_docs_per_s'))))
        text += ('\n\nIndexed (the engine\'s indexing counter at N more, searchable or not) against the raw '
                 'replacement\'s last answer: the same work without the wait for the next scheduled refresh, '
                 'which rounds a searchable time up by 0-1 s either way:\n' + '\n'.join(t2))
    # how each workload scales: smallest against largest size
    lines = []
    bound = None
    for w in order:
        ns = sorted(n for (ww, n) in groups if ww == w)
        if not ns:
            continue
        a, b = groups[(w, ns[0])], groups[(w, ns[-1])]
        peak = max(m(groups[(w, n)], 'rss_peak_mib') or 0 for n in ns)
        bound = max(bound or 0, peak)
        if len(ns) > 1:
            da, db_ = m(a, 'docs_per_s'), m(b, 'docs_per_s')
            sa, sb = m(a, 'seconds'), m(b, 'seconds')
            ia, ib = m(a, 'indexed_per_s'), m(b, 'indexed_per_s')
            lines.append('- %s: %d → %d: docs/s %s → %s (%s)%s; seconds per 1M documents %s → %s; peak RSS %s → %s MiB '
                         '(highest %.1f)' % (
                             w, ns[0], ns[-1], fmt(da), fmt(db_), fmt(pct_of(db_, da) and pct_of(db_, da) - 100, '%+.0f%%'),
                             '' if not (ia and ib) else ', indexed %s → %s (%s)' % (
                                 fmt(ia), fmt(ib), fmt(pct_of(ib, ia) - 100, '%+.0f%%')),
                             fmt(sa and 1e6 * sa / ns[0], '%.1f'), fmt(sb and 1e6 * sb / ns[-1], '%.1f'),
                             fmt(m(a, 'rss_peak_mib'), '%.1f'), fmt(m(b, 'rss_peak_mib'), '%.1f'), peak))
            if len(ns) > 2:  # every size, not only the two ends
                for f, what in (('docs_per_s', 'docs/s'), ('indexed_per_s', 'indexed docs/s')):
                    vs = [(n, m(groups[(w, n)], f)) for n in ns]
                    vs = [(n, v) for n, v in vs if v]
                    if len(vs) > 2:
                        lo, hi = min(v for _, v in vs), max(v for _, v in vs)
                        lines.append('  - %s at every size: %s; the highest %.0f%% above the lowest' % (
                            what, ', '.join('%s %s' % (fmt_n(n), fmt(v)) for n, v in vs), 100 * (hi / lo - 1)))
            tails = [(n, med([r['seconds'] - r['seconds_indexed'] for r in groups[(w, n)]
                              if r.get('seconds') and r.get('seconds_indexed')])) for n in ns]
            if all(t is not None for _, t in tails):
                lines.append('  - searchable after indexed (the wait for the engine\'s next scheduled refresh, '
                             'and the refresh): %s' % ', '.join(
                                 '%s %.2f s (%.0f%% of the measure)' % (
                                     fmt_n(n), t, 100 * t / m(groups[(w, n)], 'seconds')) for n, t in tails))
        else:
            lines.append('- %s: one size (%d): peak RSS %.1f MiB' % (w, ns[0], peak))
    text += '\n\nAs the work grows (smallest → largest size; docs/s should stay within 10%, time linear, RSS flat):\n' \
        + '\n'.join(lines)
    fits = []
    for w in order:
        pts = sorted((n, m(groups[(w, n)], 'seconds')) for (ww, n) in groups if ww == w)
        pts = [(n, t) for n, t in pts if t]
        if len(pts) < 2:
            continue
        a, r, worst = linear_fit(pts)
        steps = ', '.join('%s→%s %s' % (fmt_n(n0), fmt_n(n1), fmt((n1 - n0) / (t1 - t0)) if t1 > t0 else '–')
                          for (n0, t0), (n1, t1) in zip(pts, pts[1:]))
        fits.append('- %s: seconds = %.2f + N / %s (least squares over %d sizes; the farthest size %.1f%% off the '
                    'line); docs/s between sizes: %s' % (w, a, fmt(r), len(pts), worst, steps))
    if fits:
        text += ('\n\nTime against N as a line, a fixed part (the run\'s start, the index settings, the last '
                 'refresh, the alias switch) plus a rate a document; the rate between two sizes is the work added '
                 'over the time added:\n' + '\n'.join(fits))
    if bound is not None:
        text += ('\n\nRSS bound: the searchsync process doing the work peaked at %.1f MiB or less at every size '
                 'measured (VmHWM: the daemon\'s reset before each measure; a delayed run\'s own process).' % bound)
    print(text)
    with open(os.path.join(out, 'cost.md'), 'w') as f:
        f.write(text + '\n')
    if not shutil.which('gnuplot'):
        print('cost_driver: no gnuplot, no plots (tests/harness/deps.sh installs gnuplot-nox)')
        return 0
    plots(out, groups)
    print('plots: %s' % ', '.join(os.path.join(out, p) for p in
                                  ('cost-docs-per-s.png', 'cost-rss.png', 'cost-seconds.png', 'cost-rss-time.png')))
    return 0


def plots(out, groups):
    dats = {}
    for w in ALL_PLOT + ('flat-first-sync', 'nested-first-sync'):
        ns = sorted(n for (ww, n) in groups if ww == w)
        if not ns:
            continue
        name = os.path.join(out, 'cost-%s.dat' % w)
        with open(name, 'w') as f:
            f.write('# n docs_per_s raw_docs_per_s seconds raw_seconds rss_peak_mib raw_replace_docs_per_s '
                    'raw_replace_seconds\n')
            for n in ns:
                rs = groups[(w, n)]
                vals = [med([r.get(k) for r in rs]) for k in ('docs_per_s', 'raw_docs_per_s', 'seconds', 'raw_seconds',
                                                               'rss_peak_mib', 'raw_replace_docs_per_s',
                                                               'raw_replace_seconds')]
                f.write('%d %s\n' % (n, ' '.join('NaN' if v is None else '%.3f' % v for v in vals)))
        dats[w] = name
    color = {'flat': 1, 'nested': 2, 'backlog': 3, 'fanout-live': 4, 'fanout-delayed': 7,
             'flat-first-sync': 1, 'nested-first-sync': 2}
    head = ['set terminal pngcairo size 1300,620 font ",10"', 'set termoption noenhanced', 'set grid',
            'set key below', 'set logscale x', 'set format x "%.0s%c"', 'set xlabel "size N (documents)"',
            'set offsets graph 0.05, graph 0.05, graph 0.05, graph 0']

    def gp(lines):
        r = subprocess.run(['gnuplot'], input='\n'.join(lines) + '\n', text=True, capture_output=True)
        if r.returncode:
            print('gnuplot failed: ' + r.stderr.strip())

    def series(ws, col, what, dt=1, pt=7):
        return ['"%s" using 1:%d with linespoints lc %d dt %d pt %d title "%s %s"' % (
            dats[w], col, color[w], dt, pt, w, what) for w in ws if w in dats]

    def raws(ws, col, what, dt, pt):
        # the fan-out's two modes share one raw load (the same documents)
        return ['"%s" using 1:%d with linespoints lc %d dt %d pt %d title "%s %s"' % (
            dats[w], col, color[w], dt, pt, 'fanout' if w.startswith('fanout') else w, what)
            for w in ws if w in dats and w != 'fanout-delayed' or (w == 'fanout-delayed' and w in dats
                                                                   and 'fanout-live' not in dats)]

    # docs/s against size: ours and the raw _bulk of the same documents
    g = head + ['set output "%s"' % os.path.join(out, 'cost-docs-per-s.png'),
                'set multiplot layout 1,2 title "documents/s against the work (median of the rounds); '
                'dashed: the tuned raw _bulk of the same documents"', 'set ylabel "documents/s"', 'set yrange [0:*]']
    for title, ws in (('reindex', REINDEX_PLOT), ('changes: backlog, fan-out', CHANGE_PLOT)):
        parts = series(ws, 2, 'searchsync') + raws(ws, 3, 'raw load', 2, 6)
        if title.startswith('changes'):
            parts += raws(ws, 7, 'raw replace', 3, 4)
        if parts:
            g += ['set title "%s"' % title, 'plot ' + ', '.join(parts)]
    g.append('unset multiplot')
    gp(g)
    # peak RSS against size
    parts = series(ALL_PLOT, 6, 'peak RSS')
    if parts:
        gp(head + ['set terminal pngcairo size 900,520 font ",10"',
                   'set output "%s"' % os.path.join(out, 'cost-rss.png'),
                   'set title "peak RSS of the searchsync process doing the work (VmHWM; delayed run: its own '
                   'process)"', 'set ylabel "MiB"', 'set yrange [0:*]', 'plot ' + ', '.join(parts)])
    # seconds against size: linear axes and log-log
    g = head + ['set output "%s"' % os.path.join(out, 'cost-seconds.png'),
                'set multiplot layout 1,2 title "seconds against the work (should be linear); dashed: raw load"',
                'set ylabel "seconds"']
    parts = series(ALL_PLOT, 4, 'searchsync') + raws(ALL_PLOT, 5, 'raw load', 2, 6)
    if parts:
        g += ['unset logscale x', 'set format x "%.0s%c"', 'set title "linear axes"', 'set yrange [0:*]',
              'set xrange [0:*]', 'plot ' + ', '.join(parts),
              'set logscale xy', 'set title "log-log (slope 1 = linear)"', 'set autoscale xy', 'plot ' + ', '.join(parts)]
    g.append('unset multiplot')
    gp(g)
    # RSS over each run (first round of each point), one panel per workload
    ws = [w for w in ALL_PLOT if w in dats]
    if ws:
        g = ['set terminal pngcairo size %d,480 font ",10"' % (420 * len(ws)), 'set termoption noenhanced',
             'set output "%s"' % os.path.join(out, 'cost-rss-time.png'), 'set grid', 'set key bottom right',
             'set multiplot layout 1,%d title "RSS of the searchsync process doing the work, sampled over each run '
             '(x: fraction of the run)"' % len(ws), 'set xlabel "fraction of the run"', 'set ylabel "MiB"',
             'set yrange [0:*]']
        for w in ws:
            parts = []
            for n in sorted(n for (ww, n) in groups if ww == w):
                f = next((r.get('rss_file') for r in groups[(w, n)] if r.get('rss_file')), None)
                if f and os.path.exists(os.path.join(out, f)):
                    parts.append('"%s" using 2:3 with linespoints lw 2 pt 7 ps 0.4 title "N = %d"' % (os.path.join(out, f), n))
            if parts:
                g += ['set title "%s"' % w, 'plot ' + ', '.join(parts)]
        g.append('unset multiplot')
        gp(g)


# ---------------------------------------------------------------- main
def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'report':
        return report(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument('cmd', choices=['run'])
    for k in ('searchsync', 'search', 'out'):
        ap.add_argument('--' + k, required=True)
    for k in ('mysql-port', 'mysql-pid', 'search-pid'):
        ap.add_argument('--' + k, required=True, type=int)
    ap.add_argument('--harness', default='')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    def stop(sig, frame):  # the finally clauses stop the daemon and clean up
        raise SystemExit('cost_driver: signal %d' % sig)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    b = Bench(a)
    plan = {'flat': sizes('BENCH_COST_FLAT', '100000 300000 1000000'),
            'nested': sizes('BENCH_COST_NESTED', '100000 300000 1000000'),
            'backlog': sizes('BENCH_COST_BACKLOG', '100000 300000 1000000'),
            'fanout': sizes('BENCH_COST_FANOUT', '100000 300000 1000000')}
    bp = b.sql.one('SELECT @@innodb_buffer_pool_size')
    log('bench_cost: %s; %d round(s); flat %s; nested %s (x 5 children); backlog %s (%s, %d a transaction); '
        'fan-out %s (%s); MariaDB buffer pool %d MiB; engine %s; results appended to %s'
        % (subprocess.run([a.searchsync, '--version'], capture_output=True, text=True).stdout.strip(), b.rounds,
           plan['flat'] or '-', plan['nested'] or '-', plan['backlog'] or '-', b.backlog_mode, b.txn,
           plan['fanout'] or '-', '/'.join(b.fanout_modes), int(bp) // (1 << 20), a.search, b.jsonl))
    b.http.req('DELETE', '/bcost_*?expand_wildcards=all')
    b.warm()
    # the engine's first real work after the synthetic warm-up is slow
    # whatever it is (a 100k backlog measured twice in one run: 13,959 then
    # 27,174 docs/s; a first 100k reindex 25.6k where the rounds after ran
    # at 32-39k): the first workload's smallest point once, unrecorded
    first = next((w for w in WORKLOADS if plan[w]), None)
    if first and os.environ.get('BENCH_COST_WARM_POINT', '1') != '0':
        n, rounds = min(plan[first]), b.rounds
        log('warm-up point (not recorded): %s at %d' % (first, n))
        b.dry, b.rounds = True, 1
        try:
            {'flat': lambda: b.reindex_point('flat', n), 'nested': lambda: b.reindex_point('nested', n),
             'backlog': lambda: b.backlog_point(n), 'fanout': lambda: b.fanout_point(n)}[first]()
        finally:
            b.dry, b.rounds = False, rounds
        log('warm-up point done; the measures follow')
    for w in WORKLOADS:
        for n in plan[w]:
            if w in ('flat', 'nested'):
                b.reindex_point(w, n)
            elif w == 'backlog':
                b.backlog_point(n)
            else:
                b.fanout_point(n)
    if not os.environ.get('BENCH_COST_KEEP'):
        shutil.rmtree(b.tmp, ignore_errors=True)
    print()
    rc = report(a.out)
    return 1 if b.failed else rc


if __name__ == '__main__':
    sys.exit(main())
