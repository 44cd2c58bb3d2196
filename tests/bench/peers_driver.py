#!/usr/bin/env python3
"""tests/bench/peers_driver.py — the rounds, tools and meters of
tests/bench/bench_peers.sh (which installs the peers, starts Elasticsearch
7.10.2 and Redis, generates the data and documents the figures).

Each tool runs twice a round, on a fresh index and from the binlog's current
file (FLUSH BINARY LOGS first):
  flat    initial load of `flat` (count = rows), PEERS_UPDATES single-row
          UPDATEs in transactions of PEERS_TXN (count of rnd = the round's
          marker = PEERS_UPDATES), then the lag run: PEERS_LAG_RATE row
          changes/s for PEERS_LAG_SECS, one transaction every 10 ms whose last
          statement writes a sequence number into flat.ts of row 1 (the
          probe); a poller _searches row 1 every 10 ms (index refresh_interval
          100ms for every tool) and notes when each number is first seen.
  nested  initial load of `root` with its `child` rows (count = roots), then
          PEERS_CHILD_UPDATES UPDATEs of one child of as many roots (count of
          roots whose children hold the round's marker = that number).
Every "done" is seen by the same _count polls (every 250 ms) of the index
the tool writes, so the engine's 1 s default refresh is in every figure.
CPU: utime+stime+cutime+cstime of the tool's process (/proc/PID/stat; cutime
takes in GME's mysqldump), over the phase.
Python stdlib only; SQL through `mariadb` clients (sync_driver.Sql).
"""
import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sync_driver import AckPoller, Engine, Series, Sql, group_cpu, now, pct, pos_version  # noqa: E402

TCK = os.sysconf('SC_CLK_TCK')
FLAT_COLS = ['id', 'name', 'descr', 'price', 'qty', 'rnd', 'ts']
ROOT_COLS = ['id', 'name', 'descr', 'price', 'rnd']
CHILD_COLS = ['id', 'root_id', 'name', 'qty', 'rnd']


def env_int(name, default):
    return int(os.environ.get(name) or default)


def tool_cpu(pid):
    """utime+stime+cutime+cstime seconds of one process (its threads, and its
    children once waited for)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            s = f.read()
    except OSError:
        return 0.0
    x = s[s.rindex(')') + 2:].split()
    return sum(int(v) for v in x[11:15]) / TCK


# ---------------------------------------------------------------- the tools
class Tool:
    nested = True

    def __init__(self, a, engine_url, tmp):
        self.a, self.url, self.tmp = a, engine_url, tmp
        self.p = None
        self.log = None

    def spawn(self, argv, env=None, logname='tool.log'):
        self.log = open(os.path.join(self.tmp, logname), 'w')
        self.p = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                  cwd=self.tmp, start_new_session=True)

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def stop(self):
        if self.p is None:
            return
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()
        else:
            print('  %s had exited with status %s; its log ends:' % (self.name, self.p.returncode))
            print(tail(self.log.name))
        self.log.close()
        self.p = None

    def cpu(self):
        return tool_cpu(self.p.pid) if self.p else 0.0


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def tail(path, n=15):
    try:
        with open(path, errors='replace') as f:
            return ''.join(f.readlines()[-n:])
    except OSError:
        return ''


class Searchsync(Tool):
    name = 'searchsync'

    def start(self, kind, index, run_id):
        db = self.a.db
        cols = lambda cs: [dict(name=c, key=True) if c == 'id' else dict(name=c) for c in cs]  # noqa: E731
        if kind == 'flat':
            tables = [dict(table=db + '.flat', columns=cols(FLAT_COLS))]
        else:
            rel = dict(column='id', table=db + '.child', join_column='root_id', extend_name='children',
                       nested=True, columns=cols(CHILD_COLS))
            if os.environ.get('PEERS_AREA_UPDATE') == '1':
                rel['area_update'] = True
            tables = [dict(table=db + '.root', columns=cols(ROOT_COLS), relations=[rel])]
        mapping = {'indices': [dict(alias=index, shards=1, replicas=0, tables=tables)]}
        mp = os.path.join(self.tmp, 'mapping.json')
        with open(mp, 'w') as f:
            json.dump(mapping, f)
        self.meta = 'peers_meta_%d' % run_id
        ini = os.path.join(self.tmp, 'c.ini')
        # the admin server: the lag run polls GET /api/v1/live for the
        # position the engine acknowledged
        self.admin, self.token = 'http://127.0.0.1:%d' % free_port(), os.urandom(16).hex()
        with open(ini, 'w') as f:
            f.write('[source]\nname = peers\nhost = 127.0.0.1\nport = %d\nuser = root\nserver_id = %d\n'
                    'start = now\n[metadata]\ndatabase = %s\n[search]\nurls = %s\n[admin]\nlisten = %s\n'
                    'token = %s\n[log]\nlevel = info\n'
                    % (self.a.mysql_port, 7500 + run_id, self.meta, self.url, self.admin.split('//', 1)[1],
                       self.token))
        r = subprocess.run([self.a.searchsync, 'mapping', 'import', '--config', ini, mp, '--yes'],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError('searchsync mapping import: ' + r.stdout + r.stderr)
        self.spawn([self.a.searchsync, 'run', '--config', ini])

    def cleanup(self, sql):
        sql.q('DROP DATABASE IF EXISTS `%s`' % self.meta)


class Gme(Tool):
    name = 'go-mysql-elasticsearch'
    nested = False  # one table, one index: no child rows inside documents

    def start(self, kind, index, run_id):
        e = Engine(self.url)
        e.req('PUT', '/' + index, {'settings': {'number_of_shards': 1, 'number_of_replicas': 0}})
        data = os.path.join(self.tmp, 'gme-data')
        os.makedirs(data, exist_ok=True)
        conf = os.path.join(self.tmp, 'river.toml')
        with open(conf, 'w') as f:
            # the shipped etc/river.toml, pointed at these servers
            f.write('my_addr = "127.0.0.1:%d"\nmy_user = "root"\nmy_pass = ""\nmy_charset = "utf8"\n'
                    'es_addr = "%s"\nes_user = ""\nes_pass = ""\ndata_dir = "%s"\n'
                    'stat_addr = "127.0.0.1:%d"\nstat_path = "/metrics"\nserver_id = %d\n'
                    'flavor = "mariadb"\nmysqldump = "mysqldump"\nbulk_size = 128\nflush_bulk_time = "200ms"\n'
                    'skip_no_pk_table = false\n\n[[source]]\nschema = "%s"\ntables = ["flat"]\n\n'
                    '[[rule]]\nschema = "%s"\ntable = "flat"\nindex = "%s"\ntype = "_doc"\n'
                    % (self.a.mysql_port, self.url.split('//', 1)[1], data, free_port(),
                       7600 + run_id, self.a.db, self.a.db, index))
        self.spawn([self.a.gme, '-config', conf])

    def cleanup(self, sql):
        pass


class Pgsync(Tool):
    name = 'pgsync'

    def start(self, kind, index, run_id):
        if kind == 'flat':
            nodes = dict(table='flat', columns=FLAT_COLS)
        else:
            nodes = dict(table='root', columns=ROOT_COLS, children=[dict(
                table='child', columns=CHILD_COLS, label='children',
                relationship=dict(variant='object', type='one_to_many',
                                  foreign_key=dict(child=['root_id'], parent=['id'])))])
        schema = [dict(database=self.a.db, index=index, nodes=nodes,
                       setting={'number_of_shards': 1, 'number_of_replicas': 0})]
        sp = os.path.join(self.tmp, 'schema.json')
        with open(sp, 'w') as f:
            json.dump(schema, f)
        ck = os.path.join(self.tmp, 'checkpoints')
        os.makedirs(ck, exist_ok=True)
        env = dict(os.environ, PG_DRIVER='pymysql', PG_HOST='127.0.0.1', PG_PORT=str(self.a.mysql_port),
                   PG_USER='root', PG_PASSWORD='', ELASTICSEARCH_URL=self.url, OPENSEARCH='true',
                   ELASTICSEARCH='false', REDIS_HOST='127.0.0.1', REDIS_PORT=str(self.a.redis_port),
                   CHECKPOINT_PATH=ck, SCHEMA=sp, LOG_LEVEL='warning')
        subprocess.run(['redis-cli', '-p', str(self.a.redis_port), 'FLUSHALL'], capture_output=True)
        # no `bootstrap`: PGSync refuses it for a MySQL-family source (no
        # triggers or slots to set up); the daemon creates the index itself
        self.spawn([os.path.join(self.a.pgsync_venv, 'bin', 'pgsync'), '--config', sp, '--daemon'], env=env)

    def cleanup(self, sql):
        pass


# ---------------------------------------------------------------- measuring
class Run:
    """One tool, one kind (flat or nested), one round."""

    def __init__(self, bench, tool, kind, rnd):
        self.b, self.t, self.kind, self.rnd = bench, tool, kind, rnd
        self.e = Engine(tool.url)
        self.index = 'pf_%s_%s_r%d' % (tool.name.split('-')[0][:6], kind, rnd)
        self.res = {}

    def count(self, query=None):
        try:
            if query is None:
                st, j = self.e.req('GET', '/%s/_count' % self.index)
            else:
                st, j = self.e.req('POST', '/%s/_count' % self.index, {'query': query})
        except Exception:
            return 0
        return int(j.get('count', 0)) if st == 200 else 0

    def wait_count(self, want, query=None, timeout=None):
        timeout = timeout or env_int('PEERS_TIMEOUT', 1800)
        end = now() + timeout
        while now() < end:
            if self.count(query) >= want:
                return now()
            if not self.t.alive():
                return None
            time.sleep(0.25)
        return None

    def engine_cpu(self):
        return group_cpu(self.b.engine_pgid[self.t.url])

    def phase(self, label, docs, t0, t1, c0, e0):
        if t1 is None:
            print('  %-28s NOT DONE within PEERS_TIMEOUT (or the tool exited); %s\'s log ends:\n%s'
                  % (label, self.t.name, tail(self.t.log.name)))
            return None, None
        dt = t1 - t0
        cpu = self.t.cpu() - c0
        print('  %-28s %8.0f docs/s  (%d in %.1f s; tool cpu %.2f s = %.1f ms per 1k docs; engine cpu %.1f s)'
              % (label, docs / dt, docs, dt, cpu, 1e6 * cpu / docs, self.engine_cpu() - e0))
        return docs / dt, 1e6 * cpu / docs

    def go(self):
        b, sql = self.b, self.b.m
        # every tool starts on an empty binlog: PGSync 7.3 reads a MariaDB
        # binlog from its oldest file on every pull, whatever its checkpoint
        # (pymysqlreplication asks MariaDB for file '' at 4); the others start
        # at the current position
        sql.q('FLUSH BINARY LOGS')
        sql.q("PURGE BINARY LOGS TO '%s'" % sql.q('SHOW MASTER STATUS')[0][0])
        tmp = os.path.join(b.a.tmp, 'run-%d' % b.next_id)
        os.makedirs(tmp)
        self.t.tmp = tmp
        run_id = b.next_id
        b.next_id += 1
        print('%s on %s, %s, round %d (index %s)' % (self.t.name, b.engine_name[self.t.url], self.kind,
                                                     self.rnd, self.index))
        sys.stdout.flush()
        e0 = self.engine_cpu()
        t0 = now()
        self.t.start(self.kind, self.index, run_id)
        try:
            if self.kind == 'flat':
                self.flat(t0, e0)
            else:
                self.nested(t0, e0)
        finally:
            self.t.stop()
            self.t.cleanup(sql)
            self.e.req('DELETE', '/pf_*')
        return self.res

    def flat(self, t0, e0):
        b = self.b
        n = b.flat_rows
        t1 = self.wait_count(n)
        self.res['flat_load'], self.res['cpu_load'] = self.phase('flat initial load', n, t0, t1, 0, e0)
        if t1 is None:
            return
        # single-row UPDATEs, PEERS_TXN a transaction
        u, txn = b.updates, b.txn
        mark = b.mark()
        c0, e0 = self.t.cpu(), self.engine_cpu()
        t0 = now()
        b.pipe_sql(''.join('BEGIN;%sCOMMIT;\n' % ''.join(
            'UPDATE flat SET qty = qty + 1, rnd = %d WHERE id = %d;' % (mark, i)
            for i in range(a, min(a + txn, u + 1))) for a in range(1, u + 1, txn)))
        tw = now()
        t1 = self.wait_count(u, {'term': {'rnd': mark}})
        print('  (writer: %d UPDATEs in %.1f s)' % (u, tw - t0))
        self.res['flat_upd'], self.res['cpu_upd'] = self.phase('flat single-row UPDATEs', u, t0, t1, c0, e0)
        if t1 is None:
            return
        # the same UPDATEs again as a backlog: the tool stopped (SIGSTOP)
        # while the writer commits them all, timed from its SIGCONT (the
        # writer's time and CPU out of the measure: the reader behind)
        mark = b.mark()
        os.killpg(self.t.p.pid, signal.SIGSTOP)
        try:
            b.pipe_sql(''.join('BEGIN;%sCOMMIT;\n' % ''.join(
                'UPDATE flat SET qty = qty + 1, rnd = %d WHERE id = %d;' % (mark, i)
                for i in range(a, min(a + txn, u + 1))) for a in range(1, u + 1, txn)))
        finally:
            c0, e0 = self.t.cpu(), self.engine_cpu()
            t0 = now()
            os.killpg(self.t.p.pid, signal.SIGCONT)
        t1 = self.wait_count(u, {'term': {'rnd': mark}})
        self.res['flat_backlog'], _ = self.phase('flat UPDATEs from a backlog', u, t0, t1, c0, e0)
        if t1 is None:
            return
        self.lag()

    def lag(self):
        b = self.b
        rate, secs, tick = b.lag_rate, b.lag_secs, 0.01
        per = max(1, round(rate * tick))
        self.e.req('PUT', '/%s/_settings' % self.index, {'index': {'refresh_interval': '100ms'}})
        base = int(b.m.q('SELECT ts FROM flat WHERE id = 1')[0][0])
        poller = ProbePoller(self.t.url, self.index, 0.01)
        poller.start()
        # searchsync only: when the engine acknowledged the commit (its
        # in-memory low-water mark)
        ack = AckPoller(self.t.admin, self.t.token) if getattr(self.t, 'admin', None) else None
        if ack:
            ack.start()
        positions = []
        w = Sql(b.a.mysql_port, b.a.db)
        rng = random.Random(9)
        commits = []
        ticks = int(secs / tick)
        c0, e0 = self.t.cpu(), self.engine_cpu()
        t0 = now()
        for k in range(1, ticks + 1):
            d = t0 + (k - 1) * tick - now()
            if d > 0:
                time.sleep(d)
            ids = ','.join(str(i) for i in rng.sample(range(2, b.flat_rows + 1), per - 1)) if per > 1 else ''
            r = w.q('BEGIN;%s UPDATE flat SET ts = %d WHERE id = 1; COMMIT; SHOW MASTER STATUS'
                    % ('UPDATE flat SET qty = qty + 1 WHERE id IN (%s);' % ids if ids else '', base + k))
            commits.append(now())
            positions.append(pos_version((r[-1][0], int(r[-1][1]))))
        tw = now()
        w.close()
        deadline = now() + 60
        while ((poller.value.seen_at(base + ticks) is None or (ack and ack.version.seen_at(positions[-1]) is None))
               and now() < deadline and self.t.alive()):
            time.sleep(0.05)
        t_end = now()
        poller.stop = True
        poller.join()
        if ack:
            ack.stop = True
            ack.join()
            alags = [(ack.version.seen_at(v) or t_end) - c for v, c in zip(positions, commits)]
            a50, a99 = 1000 * pct(alags, .5), 1000 * pct(alags, .99)
            print('  lag commit -> acknowledged by the engine (searchsync\'s low-water mark, GET /api/v1/live every '
                  '10 ms): p50 %.0f ms, p99 %.0f ms, max %.0f ms' % (a50, a99, 1000 * max(alags)))
            self.res['ack'] = (a50, a99)
        lags, missing = [], 0
        for k, c in enumerate(commits, 1):
            t = poller.value.seen_at(base + k)
            if t is None:
                missing += 1
                t = t_end
            lags.append(t - c)
        cpu = self.t.cpu() - c0
        p50, p99 = 1000 * pct(lags, .5), 1000 * pct(lags, .99)
        print('  lag commit -> searchable at %d changes/s for %d s (%.0f changes/s written): p50 %.0f ms, p99 %.0f ms, '
              'max %.0f ms%s; tool cpu %.1f s, engine cpu %.1f s'
              % (rate, secs, ticks * per / (tw - t0), p50, p99, 1000 * max(lags),
                 ' (LOWER BOUNDS: %d of %d probes not seen)' % (missing, ticks) if missing else '',
                 cpu, self.engine_cpu() - e0))
        self.res['lag'] = (p50, p99, missing > 0)

    def nested(self, t0, e0):
        b = self.b
        n = b.roots
        t1 = self.wait_count(n)
        self.res['nested_load'], _ = self.phase('root + 5 children load', n, t0, t1, 0, e0)
        if t1 is None:
            return
        u, txn = b.child_updates, b.txn
        mark = b.mark()
        st, j = self.e.req('GET', '/%s/_mapping' % self.index)
        props = next(iter(j.values()))['mappings'].get('properties', {})
        q = {'term': {'children.rnd': mark}}
        if props.get('children', {}).get('type') == 'nested':
            q = {'nested': {'path': 'children', 'query': q}}
        c0, e0 = self.t.cpu(), self.engine_cpu()
        t0 = now()
        # the first child of roots 1..u (child ids are (root - 1) * 5 + 1..5)
        b.pipe_sql(''.join('BEGIN;%sCOMMIT;\n' % ''.join(
            'UPDATE child SET qty = qty + 1, rnd = %d WHERE id = %d;' % (mark, (r - 1) * 5 + 1)
            for r in range(a, min(a + txn, u + 1))) for a in range(1, u + 1, txn)))
        t1 = self.wait_count(u, q)
        self.res['child_upd'], _ = self.phase('child UPDATEs (roots/s)', u, t0, t1, c0, e0)


class ProbePoller(threading.Thread):
    """_search for row 1 every period: the first time each flat.ts value (or a
    newer one) is searchable."""

    def __init__(self, url, index, period):
        super().__init__(daemon=True)
        self.e, self.index, self.period = Engine(url), index, period
        self.value = Series()
        self.stop = False

    def run(self):
        nxt = now()
        while not self.stop:
            try:
                st, j = self.e.req('POST', '/%s/_search?filter_path=hits.hits._source.ts' % self.index,
                                   {'size': 1, 'query': {'ids': {'values': ['1']}}, '_source': ['ts']})
                hits = j.get('hits', {}).get('hits', [])
                if hits:
                    self.value.add(int(hits[0]['_source']['ts']), now())
            except Exception:
                pass
            nxt += self.period
            d = nxt - now()
            if d > 0:
                time.sleep(d)
            else:
                nxt = now()


# ---------------------------------------------------------------- raw _bulk
REPLACE_MARK = -1  # rnd of the raw replacement's documents


def curl_bulk(url, idx, files, count_query=None, want=0):
    """Post each list of files (one curl process per list, in parallel);
    the seconds until a _refresh after the last, or with count_query until
    `want` documents match it, polled every 250 ms under the index's 1 s
    refresh, as each tool's phases end."""
    t0 = now()
    ps = []
    for f in files:
        args = ['curl']
        for i, c in enumerate(f):
            if i:
                args.append('--next')
            args += ['-s', '-o', '/dev/null', '-H', 'Content-Type: application/x-ndjson',
                     '--data-binary', '@' + c, '%s/%s/_bulk' % (url, idx)]
        ps.append(subprocess.Popen(args))
    for p in ps:
        p.wait()
    e = Engine(url)
    if count_query is None:
        e.req('POST', '/%s/_refresh' % idx)
        return now() - t0
    while now() - t0 < env_int('PEERS_TIMEOUT', 1800):
        if e.req('POST', '/%s/_count' % idx, {'query': count_query})[1].get('count', 0) >= want:
            return now() - t0
        time.sleep(0.25)
    return None


def raw_bulk(a, url, kind, files, replace_files=None, replace_docs=0):
    """Parallel curl _bulk of pre-built NDJSON files into a fresh index;
    docs/s from the first request to the _refresh after the last. With
    replace_files: then the first replace_docs of those documents posted
    again over the loaded index (each replaced once, the UPDATE phases'
    documents, their rnd REPLACE_MARK), its docs/s too, timed as the
    tools' UPDATE phases are: until a _count of the marked documents
    (polled every 250 ms, the default 1 s refresh) shows them all."""
    e = Engine(url)
    idx = 'pf_raw_%s' % kind
    body = {'settings': {'number_of_shards': 1, 'number_of_replicas': 0}}
    if kind == 'nested':
        body['mappings'] = {'properties': {'children': {'type': 'nested'}}}
    e.req('DELETE', '/' + idx)
    e.req('PUT', '/' + idx, body)
    secs = curl_bulk(url, idx, files)
    cnt = e.req('GET', '/%s/_count' % idx)[1].get('count')
    replace = None
    if replace_files:
        rsecs = curl_bulk(url, idx, replace_files, {'term': {'rnd': REPLACE_MARK}}, replace_docs)
        replace = replace_docs / rsecs if rsecs else None
    e.req('DELETE', '/' + idx)
    return cnt / secs, replace


# ---------------------------------------------------------------- the bench
class Bench:
    def __init__(self, a):
        self.a = a
        self.m = Sql(a.mysql_port, a.db)
        self.flat_rows = int(self.m.q('SELECT COUNT(*) FROM flat')[0][0])
        self.roots = int(self.m.q('SELECT COUNT(*) FROM root')[0][0])
        self.updates = min(env_int('PEERS_UPDATES', 200000), self.flat_rows)
        self.child_updates = min(env_int('PEERS_CHILD_UPDATES', 20000), self.roots)
        self.txn = env_int('PEERS_TXN', 100)
        self.lag_rate, self.lag_secs = env_int('PEERS_LAG_RATE', 500), env_int('PEERS_LAG_SECS', 30)
        self.next_id = 1
        self.marker = int(self.m.q('SELECT COALESCE(MAX(rnd), 0) FROM flat')[0][0])
        self.engine_name = {a.es7: 'Elasticsearch 7.10.2', a.opensearch: 'OpenSearch 2.19'}
        self.engine_pgid = {a.es7: a.es7_pgid, a.opensearch: a.opensearch_pgid}

    def mark(self):
        self.marker += 1
        return self.marker

    def pipe_sql(self, text):
        r = subprocess.run(['mariadb', '--no-defaults', '-h', '127.0.0.1', '-P', str(self.a.mysql_port),
                            '-u', 'root', self.a.db], input=text, text=True, capture_output=True)
        if r.returncode:
            raise RuntimeError('mariadb: ' + r.stderr)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser()
    for k in ('db', 'tmp', 'searchsync', 'gme', 'pgsync-venv', 'es7', 'opensearch', 'out'):
        ap.add_argument('--' + k, required=True)
    for k in ('mysql-port', 'redis-port', 'es7-pgid', 'opensearch-pgid'):
        ap.add_argument('--' + k, required=True, type=int)
    ap.add_argument('--peers', default='gme,pgsync')
    a = ap.parse_args()
    b = Bench(a)
    rounds = env_int('ROUNDS', 4)
    print('data: %d rows in flat; %d roots with %d children; %d single-row UPDATEs and %d child UPDATEs, '
          '%d a transaction; lag at %d changes/s for %d s; %d rounds'
          % (b.flat_rows, b.roots, int(b.m.q('SELECT COUNT(*) FROM child')[0][0]), b.updates,
             b.child_updates, b.txn, b.lag_rate, b.lag_secs, rounds))
    # pre-built raw bulk files: the same documents (as MySQL has them), 500 a request
    files = {}
    for kind, sqltext in (
            ('flat', "SELECT CONCAT('{\"index\":{\"_id\":\"', id, '\"}}\\n', JSON_OBJECT(%s)) FROM flat ORDER BY id"
             % ', '.join("'%s', %s" % (c, c) for c in FLAT_COLS)),
            ('nested', "SELECT CONCAT('{\"index\":{\"_id\":\"', r.id, '\"}}\\n', JSON_OBJECT(%s, 'children', "
             "(SELECT JSON_ARRAYAGG(JSON_OBJECT(%s)) FROM child c WHERE c.root_id = r.id))) FROM root r ORDER BY r.id"
             % (', '.join("'%s', r.%s" % (c, c) for c in ROOT_COLS),
                ', '.join("'%s', c.%s" % (c, c) for c in CHILD_COLS)))):
        path = os.path.join(a.tmp, 'raw-%s.ndjson' % kind)
        with open(path, 'w') as f:
            subprocess.run(['mariadb', '--no-defaults', '-h', '127.0.0.1', '-P', str(a.mysql_port), '-u', 'root',
                            '--batch', '--skip-column-names', '--raw', a.db, '-e', sqltext], stdout=f, check=True)
        par = env_int('PEERS_BULK_PAR', 2)

        def split_files(path):
            """par runs of consecutive requests of 500 documents (1000 lines:
            an action line and its document never apart)"""
            with open(path) as f:
                lines = f.readlines()
            docs = len(lines) // 2
            out = []
            for i in range(par):
                lo, hi = docs * i // par, docs * (i + 1) // par
                out.append([])
                for k, at in enumerate(range(lo, hi, 500)):
                    name = '%s.p%02d.b%05d' % (path, i, k)
                    with open(name, 'w') as g:
                        g.writelines(lines[2 * at:2 * min(at + 500, hi)])
                    out[-1].append(name)
            return out
        files[kind] = split_files(path)
        if kind == 'flat':  # the documents the UPDATE phases replace (ids 1..updates), marked
            rpath = os.path.join(a.tmp, 'raw-flat-replace.ndjson')
            with open(rpath, 'w') as f:
                subprocess.run(['mariadb', '--no-defaults', '-h', '127.0.0.1', '-P', str(a.mysql_port), '-u',
                                'root', '--batch', '--skip-column-names', '--raw', a.db, '-e',
                                "SELECT CONCAT('{\"index\":{\"_id\":\"', id, '\"}}\\n', JSON_OBJECT(%s)) "
                                "FROM flat WHERE id <= %d ORDER BY id"
                                % (', '.join("'%s', %s" % (c, REPLACE_MARK if c == 'rnd' else c)
                                             for c in FLAT_COLS), b.updates)], stdout=f, check=True)
            files['flat-replace'] = split_files(rpath)

    pairs = []
    peers = a.peers.split(',')
    if 'gme' in peers:
        pairs.append((a.es7, Gme))
    if 'pgsync' in peers:
        pairs.append((a.opensearch, Pgsync))
    if not pairs:  # PEERS=none: searchsync and the raw _bulk only, on Elasticsearch 7.10.2
        pairs.append((a.es7, None))
    results = {}  # (tool name, engine) -> list of per-round dicts
    for url, Peer in pairs:
        tools = [Searchsync(a, url, a.tmp)] + ([Peer(a, url, a.tmp)] if Peer else [])
        for rnd in range(1, rounds + 1):
            order = tools if rnd % 2 else tools[::-1]
            for t in order:
                for kind in ('flat', 'nested'):
                    if kind == 'nested' and not t.nested:
                        continue
                    try:
                        r = Run(b, t, kind, rnd).go()
                    except Exception as ex:  # one tool failing must not hide the others' figures
                        print('  %s %s round %d FAILED: %s' % (t.name, kind, rnd, ex))
                        t.stop()
                        r = {}
                    results.setdefault((t.name, url), []).append(r)
                    sys.stdout.flush()
            raws = {}
            raws['flat'], raws['flat_replace'] = raw_bulk(a, url, 'flat', files['flat'], files['flat-replace'],
                                                          b.updates)
            raws['nested'], _ = raw_bulk(a, url, 'nested', files['nested'])
            print('raw _bulk on %s, round %d: flat %.0f docs/s, nested %.0f docs/s; the %d documents of the UPDATE '
                  'phases posted again over the loaded flat index (each replaced once, timed to a _count as the '
                  'tools are) %s docs/s (%d curl processes, 500 docs a request, no versions)'
                  % (b.engine_name[url], rnd, raws['flat'], raws['nested'], b.updates,
                     '%.0f' % raws['flat_replace'] if raws['flat_replace'] else 'NOT DONE',
                     env_int('PEERS_BULK_PAR', 2)))
            results.setdefault(('raw _bulk', url), []).append(raws)
            sys.stdout.flush()

    def fmt(v, f='%.0f'):
        return '–' if v is None else f % v

    lines = ['| tool (engine) | flat load docs/s | flat UPDATEs docs/s | flat UPDATEs from a backlog docs/s | '
             'root + 5 children load roots/s | '
             'child UPDATEs roots/s | lag p50 / p99 ms | acknowledged p50 / p99 ms | '
             'tool CPU ms per 1k docs (load / UPDATEs) | engine raw _bulk docs/s (flat / nested / flat '
             'replacement of the UPDATEs\' documents) |',
             '|---|---|---|---|---|---|---|---|---|---|']
    for url, Peer in pairs:
        raw = results[('raw _bulk', url)]
        rawcell = '%s / %s / %s' % (fmt(median([r['flat'] for r in raw])), fmt(median([r['nested'] for r in raw])),
                                    fmt(median([r.get('flat_replace') for r in raw])))
        for name in ('searchsync',) + ((Peer.name,) if Peer else ()):
            rs = results.get((name, url), [])
            flat = [r for r in rs if 'flat_load' in r]
            nest = [r for r in rs if 'nested_load' in r]
            lag = [r['lag'] for r in flat if r.get('lag')]
            lagcell = '–'
            if lag:
                lagcell = '%s%s / %s' % ('≥' if any(x[2] for x in lag) else '', fmt(median([x[0] for x in lag])),
                                         fmt(median([x[1] for x in lag])))
            na = 'n/a' if not Peer.nested and name != 'searchsync' else '–'
            ack = [r['ack'] for r in flat if r.get('ack')]
            ackcell = ('%s / %s' % (fmt(median([x[0] for x in ack])), fmt(median([x[1] for x in ack])))
                       if ack else 'not exposed' if name != 'searchsync' else '–')
            lines.append('| %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |' % (
                name, b.engine_name[url], fmt(median([r['flat_load'] for r in flat])),
                fmt(median([r.get('flat_upd') for r in flat])), fmt(median([r.get('flat_backlog') for r in flat])),
                fmt(median([r['nested_load'] for r in nest])) if nest else na,
                fmt(median([r.get('child_upd') for r in nest])) if nest else na, lagcell, ackcell,
                fmt(median([r['cpu_load'] for r in flat]), '%.1f'), fmt(median([r.get('cpu_upd') for r in flat]), '%.1f'),
                rawcell))
    table = '\n'.join(lines)
    print()
    print('medians of %d round(s):' % rounds)
    print(table)
    with open(a.out, 'w') as f:
        f.write(table + '\n')
    b.m.close()
    ok = all(r for k, rs in results.items() for r in rs)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
