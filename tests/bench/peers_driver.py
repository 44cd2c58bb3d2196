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
import http.client
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
from sync_driver import (AckPoller, Engine, Series, Sql, engine_cpu, jit_cpu, now, pct,  # noqa: E402
                         pos_version, wait_quiet)
import raw_bulk  # noqa: E402

TCK = os.sysconf('SC_CLK_TCK')
FLAT_COLS = ['id', 'name', 'descr', 'price', 'qty', 'rnd', 'ts']
ROOT_COLS = ['id', 'name', 'descr', 'price', 'rnd']
CHILD_COLS = ['id', 'root_id', 'name', 'qty', 'rnd']


def env_int(name, default):
    return int(os.environ.get(name) or default)


def merge_ini(*texts):
    """INI texts as one, sections in their first order, a key given again
    in a later text taking its value (comments and blank lines dropped)."""
    secs, cur = {}, None
    for text in texts:
        cur = None
        for line in text.splitlines():
            t = line.strip()
            if not t or t[0] in '#;':
                continue
            if t.startswith('[') and t.endswith(']'):
                cur = secs.setdefault(t[1:-1].strip(), {})
                continue
            k, eq, v = t.partition('=')
            if not eq or cur is None:
                raise ValueError('merge_ini: %r is neither [section] nor key = value in a section' % t)
            cur[k.strip()] = v.strip()
    return ''.join('[%s]\n%s' % (sec, ''.join('%s = %s\n' % kv for kv in kvs.items())) for sec, kvs in secs.items())


def box_idle():
    """Seconds of CPU the whole box has left idle (idle + iowait, summed over
    its cores) since boot: the difference over a phase is the room its
    processes left on the cores."""
    with open('/proc/stat') as f:
        v = f.readline().split()
    return (int(v[4]) + int(v[5])) / TCK


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


def write_tasks(e):
    """the engine's write thread pool's completed tasks, over its nodes: one
    a shard-level bulk request (a request of one shard's documents), so
    their growth over a lag run is the requests the tool made the engine
    run, whatever its own counters say (None: not readable)"""
    try:
        st, j = e.req('GET', '/_nodes/stats/thread_pool?filter_path=nodes.*.thread_pool.write.completed')
        return sum(n['thread_pool']['write']['completed'] for n in j['nodes'].values()) if st == 200 else None
    except Exception:
        return None


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
    extra_ini = ''  # more configuration after PEERS_SS_INI's (the baseline's)

    @property
    def bin(self):
        return self.a.searchsync

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
            # PEERS_SS_INI: more of searchsync's configuration (INI text,
            # \n for a new line), e.g. "[delivery]\nbatch_max = 2000"; the
            # baseline's after it, a key set again taking the later value
            # (searchsync refuses a key set twice)
            f.write(merge_ini('[source]\nname = peers\nhost = 127.0.0.1\nport = %d\nuser = root\nserver_id = %d\n'
                              'start = now\n[metadata]\ndatabase = %s\n[search]\nurls = %s\n[admin]\nlisten = %s\n'
                              'token = %s\n[log]\nlevel = info\n'
                              % (self.a.mysql_port, 7500 + run_id, self.meta, self.url,
                                 self.admin.split('//', 1)[1], self.token),
                              os.environ.get('PEERS_SS_INI', '').replace('\\n', '\n'),
                              self.extra_ini.replace('\\n', '\n')))
        r = subprocess.run([self.bin, 'mapping', 'import', '--config', ini, mp, '--yes'],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError('searchsync mapping import: ' + r.stdout + r.stderr)
        self.spawn([self.bin, 'run', '--config', ini])

    def cleanup(self, sql):
        sql.q('DROP DATABASE IF EXISTS `%s`' % self.meta)


class SearchsyncBaseline(Searchsync):
    """searchsync again with PEERS_SS_BASELINE_INI added to its configuration
    (e.g. '[delivery]\\nbatch_to_refresh = false'): a change of its defaults
    beside the defaults, in the same rounds."""
    name = 'searchsync-baseline'
    tag = 'ssbase'

    def __init__(self, a, engine_url, tmp):
        super().__init__(a, engine_url, tmp)
        self.extra_ini = os.environ.get('PEERS_SS_BASELINE_INI', '')

    @property
    def bin(self):  # PEERS_SS_BASELINE_BIN: another build (before / after in one run)
        return os.environ.get('PEERS_SS_BASELINE_BIN') or self.a.searchsync


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
        self.index = 'pf_%s_%s_r%d' % (getattr(tool, 'tag', tool.name.split('-')[0][:6]), kind, rnd)
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
        return engine_cpu(self.b.engine_pgid[self.t.url])

    def update_phase(self, label, key, sql, count, query, backlog):
        """One UPDATE phase: the writer pipes `sql` (with the tool running
        beside it, timed from the first commit; or, backlog, with the tool
        SIGSTOPped while it commits, timed from its SIGCONT), until `count`
        documents match `query` (polled every 250 ms under the default 1 s
        refresh). For searchsync also when the engine had acknowledged
        everything (its low-water mark past the writer's last commit):
        self.res[key] docs/s to searchable, self.res[key + '_ack'] docs/s to
        acknowledged. Returns the time it ended (None: not done)."""
        b = self.b
        ack = AckPoller(self.t.admin, self.t.token) if getattr(self.t, 'admin', None) else None
        if ack:
            ack.start()
        c0 = e0 = t0 = m0 = None
        # the engine quiet first (the merges of the phase before: 100k roots
        # rewritten cost the next phase 3-6 s of engine CPU), as before a
        # lag run; for a backlog, once the writer is done, before SIGCONT
        if not backlog:
            self.engine_quiet()
        if backlog:
            os.killpg(self.t.p.pid, signal.SIGSTOP)
        try:
            if not backlog:
                c0, e0, m0, t0 = self.t.cpu(), self.engine_cpu(), b.mysql_cpu(), now()
            b.pipe_sql(sql)
            tw = now()
        finally:
            if backlog:
                self.engine_quiet()
                c0, e0, m0, t0 = self.t.cpu(), self.engine_cpu(), b.mysql_cpu(), now()
                os.killpg(self.t.p.pid, signal.SIGCONT)
        f, p_ = b.m.q('SHOW MASTER STATUS')[0][:2]
        last = pos_version((f, int(p_)))
        if not backlog:
            print('  (writer: %d UPDATEs in %.1f s)' % (count, tw - t0))
        t1 = self.wait_count(count, query)
        res, cpu = self.phase(label, count, t0, t1, c0, e0, m0)
        self.res[key] = res
        if ack:
            deadline = now() + 10
            while ack.version.seen_at(last) is None and now() < deadline:
                time.sleep(0.02)
            ta = ack.version.seen_at(last)
            ack.stop = True
            ack.join()
            if ta is not None:
                self.res[key + '_ack'] = count / (ta - t0)
                print('  %-28s %8.0f docs/s  (every change acknowledged by the engine %.2f s after the start)'
                      % ('  ... acknowledged', count / (ta - t0), ta - t0))
        return t1, cpu

    def engine_quiet(self, cores=0.1, timeout=90, seconds=3):
        return wait_quiet(self.engine_cpu, cores, seconds, timeout)

    def phase(self, label, docs, t0, t1, c0, e0, m0=None):
        if t1 is None:
            print('  %-28s NOT DONE within PEERS_TIMEOUT (or the tool exited); %s\'s log ends:\n%s'
                  % (label, self.t.name, tail(self.t.log.name)))
            return None, None
        dt = t1 - t0
        cpu = self.t.cpu() - c0
        print('  %-28s %8.0f docs/s  (%d in %.1f s; tool cpu %.2f s = %.1f ms per 1k docs; engine cpu %.1f s%s)'
              % (label, docs / dt, docs, dt, cpu, 1e6 * cpu / docs, self.engine_cpu() - e0,
                 '; MariaDB cpu %.2f s' % (self.b.mysql_cpu() - m0) if m0 is not None else ''))
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
        e0, self.m0 = self.engine_cpu(), b.mysql_cpu()
        self.w0 = write_tasks(self.e)
        self.i0, self.j0 = box_idle(), jit_cpu(b.engine_pgid[self.t.url])
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
        self.res['flat_load'], self.res['cpu_load'] = self.phase('flat initial load', n, t0, t1, 0, e0, self.m0)
        if t1 is None:
            return
        self.res['flat_load_cpu'] = dict(tool=self.t.cpu(), mariadb=b.mysql_cpu() - self.m0,
                                         engine=self.engine_cpu() - e0, idle=box_idle() - self.i0,
                                         jit=jit_cpu(b.engine_pgid[self.t.url]) - self.j0)
        print('  (the box left %.2f core-seconds idle over its %.2f s; the engine\'s JIT compiler used %.2f s)'
              % (self.res['flat_load_cpu']['idle'], t1 - t0, self.res['flat_load_cpu']['jit']))
        if getattr(self.t, 'meta', None):
            self.res.update(build_row(b.m, self.t.meta, n, t1 - t0))
        self.res['flat_load_work'] = index_work(self.t.url, self.index)
        w1 = write_tasks(self.e)
        if w1 is not None and self.w0 is not None:  # one a shard-level bulk request (1 shard)
            self.res['flat_load_work']['bulks'] = w1 - self.w0
        if b.load_only:  # the engine's CPU until its merges of the load are done too, as the raw's
            self.engine_quiet()
            self.res['flat_load_cpu']['engine_quiet'] = self.engine_cpu() - e0
            print('  (engine CPU until quiet: %.1f s)' % self.res['flat_load_cpu']['engine_quiet'])
        print('  (the engine\'s work on it: %s)' % self.res['flat_load_work'])
        if self.t.name == 'searchsync' and self.t.url not in b.exact:
            # its exact documents and mapping, for the raw load of the same work
            path = os.path.join(b.a.tmp, 'exact-flat-%d.ndjson' % len(b.exact))
            mp, got = dump_index(self.t.url, self.index, path)
            b.exact[self.t.url] = (path, mp)
            print('  (dumped its %d documents and mapping for the raw load)' % got)
            if b.tune_exact:  # the raw of these documents tuned on them, not on the plain ones
                best, table = raw_bulk.tune(self.t.url, path, raw_bulk.index_body(mp), sample_docs=b.tune_exact,
                                            pars=b.tpars, sizes=b.tsizes, index='pf_raw_tune')
                b.tuned[self.t.url]['flat_exact'] = best
                b.record(dict(tool='raw _bulk tuning', engine=b.engine_name[self.t.url], kind='flat_exact',
                              best=best, table={'%dx%d' % k: v for k, v in table.items()}))
        if b.load_only:
            return
        # single-row UPDATEs, PEERS_TXN a transaction; then the same again
        # as a backlog (the writer's time and CPU out of the measure: the
        # reader behind)
        u, txn = b.updates, b.txn
        for key, label, backlog in (('flat_upd', 'flat single-row UPDATEs', False),
                                    ('flat_backlog', 'flat UPDATEs from a backlog', True)):
            mark = b.mark()
            sql = ''.join('BEGIN;%sCOMMIT;\n' % ''.join(
                'UPDATE flat SET qty = qty + 1, rnd = %d WHERE id = %d;' % (mark, i)
                for i in range(a, min(a + txn, u + 1))) for a in range(1, u + 1, txn))
            t1, cpu = self.update_phase(label, key, sql, u, {'term': {'rnd': mark}}, backlog)
            if key == 'flat_upd':
                self.res['cpu_upd'] = cpu
            if t1 is None:
                return
        self.lags()

    def lags(self):
        for refresh in self.b.lag_refresh:
            for rate in self.b.lag_rates:
                self.lag(refresh, rate)

    def lag(self, refresh, rate):
        """One lag run at `rate` row changes/s with the index's
        refresh_interval `refresh` ('1s': the engine's default, the setting
        put back to null). flat: single-row UPDATEs of random rows, the
        probe in flat.ts of row 1; nested: UPDATEs of random children, the
        probe in child.rnd of child 1 (root 1's first child)."""
        b = self.b
        secs, tick = b.lag_secs, 0.01
        per = max(1, round(rate * tick))
        self.e.req('PUT', '/%s/_settings' % self.index,
                   {'index': {'refresh_interval': None if refresh in ('1s', 'default') else refresh}})
        if self.kind == 'flat':
            base = int(b.m.q('SELECT ts FROM flat WHERE id = 1')[0][0])
            table, nrows, probe_sql = 'flat', b.flat_rows, 'UPDATE flat SET ts = %d WHERE id = 1'
            poller = ProbePoller(self.t.url, self.index, 0.01)
        else:
            base = int(b.m.q('SELECT MAX(rnd) FROM child')[0][0]) + 1000000
            table, nrows, probe_sql = 'child', 5 * b.roots, 'UPDATE child SET rnd = %d WHERE id = 1'
            poller = ProbePoller(self.t.url, self.index, 0.01, nested=True)
        # the engine quiet first (merges after the phase before), then what
        # the poller alone costs it: the writes' own CPU is the rest
        quiet = self.engine_quiet()
        poll_cores = poller_cores(self.engine_cpu, poller)
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
        c0, e0, r0, w0 = self.t.cpu(), self.engine_cpu(), refresh_stats(self.e, self.index), write_tasks(self.e)
        t0 = now()
        for k in range(1, ticks + 1):
            d = t0 + (k - 1) * tick - now()
            if d > 0:
                time.sleep(d)
            ids = ','.join(str(i) for i in rng.sample(range(2, nrows + 1), per - 1)) if per > 1 else ''
            r = w.q('BEGIN;%s %s; COMMIT; SHOW MASTER STATUS'
                    % ('UPDATE %s SET qty = qty + 1 WHERE id IN (%s);' % (table, ids) if ids else '',
                       probe_sql % (base + k)))
            commits.append(now())
            positions.append(pos_version((r[-1][0], int(r[-1][1]))))
        tw = now()
        w.close()
        deadline = now() + 60
        while ((poller.value.seen_at(base + ticks) is None or (ack and ack.version.seen_at(positions[-1]) is None))
               and now() < deadline and self.t.alive()):
            time.sleep(0.05)
        t_end = now()
        r1, w1 = refresh_stats(self.e, self.index), write_tasks(self.e)
        reqs = w1 - w0 if w0 is not None and w1 is not None else None
        poller.stop = True
        poller.join()
        refr = refresh_line(r0, r1, t_end - t0)
        if ack:
            ack.stop = True
            ack.join()
            alags = [(ack.version.seen_at(v) or t_end) - c for v, c in zip(positions, commits)]
            a50, a99 = 1000 * pct(alags, .5), 1000 * pct(alags, .99)
            print('  lag commit -> acknowledged by the engine (searchsync\'s low-water mark, GET /api/v1/live every '
                  '10 ms), refresh %s, %d changes/s: p50 %.0f ms, p99 %.0f ms, max %.0f ms'
                  % (refresh, rate, a50, a99, 1000 * max(alags)))
            self.res.setdefault('ack', {})[(refresh, rate)] = (a50, a99)
        lags, missing = probe_lags(poller.value, base, commits, t_end)
        cpu, ecpu = self.t.cpu() - c0, self.engine_cpu() - e0
        p50, p99 = 1000 * pct(lags, .5), 1000 * pct(lags, .99)
        written = ticks * per / (tw - t0)
        ecpu = max(0.0, ecpu - poll_cores * (t_end - t0))  # the writes' share
        load = os.getloadavg()[0]  # the box's 1-minute load average as the run ended
        print('  lag commit -> searchable, refresh %s, at %d changes/s for %d s (%.0f changes/s written): p50 %.0f ms, '
              'p99 %.0f ms, max %.0f ms%s; tool cpu %.1f s, engine cpu for the writes %.1f s (over %.1f s: %.0f µs a '
              'change; the poller alone: %.2f cores, not counted%s; load average %.1f; %s bulk requests '
              '(shard-level) a second)'
              % (refresh, rate, secs, written, p50, p99, 1000 * max(lags),
                 ' (LOWER BOUNDS: %d of %d probes not seen)' % (missing, ticks) if missing else '',
                 cpu, ecpu, t_end - t0, 1e6 * ecpu / (ticks * per), poll_cores,
                 '' if quiet else '; the engine was still busy after 60 s', load,
                 '?' if reqs is None else '%.1f' % (reqs / (t_end - t0))))
        self.res.setdefault('lag', {})[(refresh, rate)] = (p50, p99, missing > 0)
        self.res.setdefault('lag_cpu', {})[(refresh, rate)] = (cpu, ecpu, ticks * per, written, load,
                                                               reqs and reqs / (t_end - t0))
        b.record(dict(tool=self.t.name, engine=b.engine_name[self.t.url], round=self.rnd, kind=self.kind,
                      refresh=refresh, rate=rate, written=written, p50=p50, p99=p99, lower_bound=missing > 0,
                      ack=self.res.get('ack', {}).get((refresh, rate)), tool_cpu=cpu, engine_cpu=ecpu,
                      changes=ticks * per, refresh_ms=refr and refr[0], refresh_period_ms=refr and refr[1],
                      load=load, bulk_per_s=reqs and reqs / (t_end - t0)))

    def nested(self, t0, e0):
        b = self.b
        n = b.roots
        t1 = self.wait_count(n)
        self.res['nested_load'], _ = self.phase('root + 5 children load', n, t0, t1, 0, e0)
        if t1 is None:
            return
        u, txn = b.child_updates, b.txn
        st, j = self.e.req('GET', '/%s/_mapping' % self.index)
        props = next(iter(j.values()))['mappings'].get('properties', {})
        # the first child of roots 1..u (child ids are (root - 1) * 5 + 1..5),
        # with the writer beside the tool, then as a backlog
        for key, label, backlog in (('child_upd', 'child UPDATEs (roots/s)', False),
                                    ('child_backlog', 'child UPDATEs, backlog (roots/s)', True)):
            mark = b.mark()
            q = {'term': {'children.rnd': mark}}
            if props.get('children', {}).get('type') == 'nested':
                q = {'nested': {'path': 'children', 'query': q}}
            sql = ''.join('BEGIN;%sCOMMIT;\n' % ''.join(
                'UPDATE child SET qty = qty + 1, rnd = %d WHERE id = %d;' % (mark, (r - 1) * 5 + 1)
                for r in range(a, min(a + txn, u + 1))) for a in range(1, u + 1, txn))
            t1, _ = self.update_phase(label, key, sql, u, q, backlog)
            if t1 is None:
                return
        if t1 is not None and self.b.lag_nested:
            self.lags()


class ProbePoller(threading.Thread):
    """_search for row 1 every period: the first time each flat.ts value (or a
    newer one) is searchable."""

    def __init__(self, url, index, period, nested=False):
        super().__init__(daemon=True)
        self.e, self.index, self.period, self.nested = Engine(url), index, period, nested
        self.value = Series()
        self.stop = False

    def probe(self, src):
        if not self.nested:
            return int(src['ts'])
        for c in src.get('children') or []:
            if int(c['id']) == 1:
                return int(c['rnd'])
        return None

    def run(self):
        nxt = now()
        fields = ['children.id', 'children.rnd'] if self.nested else ['ts']
        fp = 'hits.hits._source.children' if self.nested else 'hits.hits._source.ts'
        while not self.stop:
            try:
                st, j = self.e.req('POST', '/%s/_search?filter_path=%s' % (self.index, fp),
                                   {'size': 1, 'query': {'ids': {'values': ['1']}}, '_source': fields})
                hits = j.get('hits', {}).get('hits', [])
                v = self.probe(hits[0]['_source']) if hits else None
                if v is not None:
                    self.value.add(v, now())
            except Exception:
                pass
            nxt += self.period
            d = nxt - now()
            if d > 0:
                time.sleep(d)
            else:
                nxt = now()


# ---------------------------------------------------------------- raw _bulk
REPLACE_MARK = -1  # rnd of the raw replacement's documents (flat), of child 1 of each root (nested)
REPLACE_MARK2 = -2  # the same in its second pass
NESTED_MAPPING = {'properties': {'children': {'type': 'nested'}}}


def poller_cores(cpu, poller, secs=3):
    """Start the _search poller and measure what it alone costs the engine
    (cores, over `secs` seconds): taken out of a lag run's engine CPU."""
    poller.start()
    c0, t0 = cpu(), now()
    time.sleep(secs)
    return (cpu() - c0) / (now() - t0)


def probe_lags(series, base, starts, t_end):
    """The searchable lag of probe base + k (k from 1) from starts[k - 1]:
    the time series (a ProbePoller's) first showed it, t_end for a probe
    never seen (then a lower bound). Returns (lags, probes not seen)."""
    lags, missing = [], 0
    for k, t0 in enumerate(starts, 1):
        t = series.seen_at(base + k)
        if t is None:
            missing, t = missing + 1, t_end
        lags.append(t - t0)
    return lags, missing


def refresh_stats(e, index):
    """(refreshes, ms spent refreshing) of the index's primaries so far
    (summed over the indices an alias names); None if not answered."""
    st, j = e.req('GET', '/%s/_stats/refresh' % index)
    if st != 200:
        return None
    r = j.get('_all', {}).get('primaries', {}).get('refresh', {})
    return int(r.get('total', 0)), int(r.get('total_time_in_millis', 0))


def refresh_line(r0, r1, secs):
    """(ms a refresh, ms between refreshes) from two refresh_stats, printed;
    the engine refreshes again `refresh_interval` after its last refresh
    ended (a fixed delay), so a slower refresh lengthens the period and the
    searchable lag with it. None without a refresh between them."""
    if not r0 or not r1 or r1[0] <= r0[0]:
        return None
    n = r1[0] - r0[0]
    print('  the index refreshed %d times: %.0f ms a refresh on average, one every %.0f ms'
          % (n, (r1[1] - r0[1]) / n, 1000 * secs / n))
    return (r1[1] - r0[1]) / n, 1000 * secs / n


def raw_lag(b, url, index, kind, refresh, rate, rnd):
    """The engine's own lag for the stream of a lag run, with no source and
    no tool: every 10 ms one _bulk of rate/100 documents sent at once on one
    connection, random documents of the loaded `index` posted again as they
    are and document 1 carrying the next sequence number (flat: row 1's ts;
    nested: root 1 with its child 1's rnd); the lag of each from its send
    to its answer (acknowledged) and to the first _search that shows it
    (searchable, the same ProbePoller as the tools'). A floor for any tool
    at that rate: nothing is read from MariaDB or built. Returns (p50, p99,
    missing) of searchable, (p50, p99) of acknowledged and (0, engine CPU
    s, changes, written/s)."""
    nested = kind == 'nested'
    if kind not in b.raw_lines:  # read once a run: id -> its action and document lines
        lines = b.raw_lines[kind] = {}
        with open(b.files[kind], 'rb') as f:
            for act in f:
                lines[int(json.loads(act)['index']['_id'])] = act + f.readline()
    lines = b.raw_lines[kind]
    probe = json.loads(lines[1].split(b'\n', 1)[1])
    slot = next(c for c in probe['children'] if int(c['id']) == 1) if nested else probe
    field = 'rnd' if nested else 'ts'
    e = Engine(url)
    e.req('PUT', '/%s/_settings' % index,
          {'index': {'refresh_interval': None if refresh in ('1s', 'default') else refresh}})
    st, j = e.req('GET', '/%s/_doc/1' % index)
    if st != 200:
        raise RuntimeError('raw lag: GET /%s/_doc/1 answered HTTP %d %s' % (index, st, json.dumps(j)[:300]))
    src = j['_source']
    cur = next(c for c in src['children'] if int(c['id']) == 1) if nested else src
    base = max(int(cur[field]), 0) + 1
    cpu = lambda: engine_cpu(b.engine_pgid[url])  # noqa: E731
    quiet = wait_quiet(cpu)
    poller = ProbePoller(url, index, 0.01, nested=nested)
    poll_cores = poller_cores(cpu, poller)
    host, port = url.split('//', 1)[1].rsplit(':', 1)
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    rng = random.Random(9)
    secs, tick = b.lag_secs, 0.01
    per = max(1, round(rate * tick))
    ticks = int(secs / tick)
    nrows = len(lines)
    sends, answers = [], []
    e0, r0 = cpu(), refresh_stats(e, index)
    t0 = now()
    for k in range(1, ticks + 1):
        d = t0 + (k - 1) * tick - now()
        if d > 0:
            time.sleep(d)
        slot[field] = base + k
        body = b''.join(lines[i] for i in rng.sample(range(2, nrows + 1), per - 1)) + \
            b'{"index":{"_id":"1"}}\n' + json.dumps(probe).encode() + b'\n'
        sends.append(now())
        c.request('POST', '/%s/_bulk' % index, body=body, headers={'Content-Type': 'application/x-ndjson'})
        r = c.getresponse()
        r.read()
        answers.append(now())
        if r.status != 200:
            print('  raw lag: _bulk answered HTTP %d' % r.status)
    tw = now()
    c.close()
    deadline = now() + 60
    while poller.value.seen_at(base + ticks) is None and now() < deadline:
        time.sleep(0.05)
    t_end = now()
    r1 = refresh_stats(e, index)
    poller.stop = True
    poller.join()
    refr = refresh_line(r0, r1, t_end - t0)
    lags, missing = probe_lags(poller.value, base, sends, t_end)
    alags = [a_ - s_ for a_, s_ in zip(answers, sends)]
    p50, p99, a50, a99 = (1000 * pct(x, q) for x, q in ((lags, .5), (lags, .99), (alags, .5), (alags, .99)))
    ecpu = max(0.0, cpu() - e0 - poll_cores * (t_end - t0))
    written = ticks * per / (tw - t0)
    print('  raw lag, %s (no tool: the documents sent to the engine at once), refresh %s, %d changes/s for %d s (%.0f '
          'sent a second): answered p50 %.0f ms, p99 %.0f ms; searchable p50 %.0f ms, p99 %.0f ms, max %.0f ms%s; '
          'engine cpu for the writes %.1f s (%.0f µs a change; the poller alone: %.2f cores, not counted%s)'
          % (kind, refresh, rate, secs, written, a50, a99, p50, p99, 1000 * max(lags),
             ' (LOWER BOUNDS: %d of %d probes not seen)' % (missing, ticks) if missing else '',
             ecpu, 1e6 * ecpu / (ticks * per), poll_cores, '' if quiet else '; the engine was still busy after 60 s'))
    b.record(dict(tool='raw _bulk', engine=b.engine_name[url], round=rnd, kind=kind, refresh=refresh, rate=rate,
                  written=written, p50=p50, p99=p99, lower_bound=missing > 0, ack=(a50, a99), tool_cpu=0,
                  engine_cpu=ecpu, changes=ticks * per, refresh_ms=refr and refr[0],
                  refresh_period_ms=refr and refr[1]))
    return (p50, p99, missing > 0), (a50, a99), (0.0, ecpu, ticks * per, written)


def sql_ndjson(a, path, sqltext):
    """The rows of sqltext (one action line + one document each) into path."""
    with open(path, 'w') as f:
        subprocess.run(['mariadb', '--no-defaults', '-h', '127.0.0.1', '-P', str(a.mysql_port), '-u', 'root',
                        '--batch', '--skip-column-names', '--raw', a.db, '-e', sqltext], stdout=f, check=True)
    return path


def dump_index(url, index, path):
    """Every document of index (_id and _source, as the engine holds them)
    into an NDJSON bulk file, and the index's mappings: the exact documents
    a tool wrote, for the raw load of the same work."""
    st, j = raw_bulk._req(url, 'GET', '/%s/_mapping' % index)  # floats stay floats (not Decimal)
    mappings = next(iter(j.values()))['mappings']
    st, j = raw_bulk._req(url, 'POST', '/%s/_search?scroll=2m' % index, {'size': 5000, 'sort': ['_doc']})
    n = 0
    with open(path, 'w') as f:
        while True:
            hits = j.get('hits', {}).get('hits', [])
            if not hits:
                break
            for h in hits:
                f.write(json.dumps({'index': {'_id': h['_id']}}) + '\n')
                f.write(json.dumps(h['_source']) + '\n')
                n += 1
            st, j = raw_bulk._req(url, 'POST', '/_search/scroll', {'scroll': '2m', 'scroll_id': j['_scroll_id']})
    return mappings, n


def index_work(url, index):
    """What the engine did to an index (its primaries' _stats): indexing
    milliseconds, refreshes, flushes, merges and their milliseconds, the
    throttled milliseconds; printed beside each load."""
    try:
        st, j = raw_bulk._req(url, 'GET', '/%s/_stats/indexing,refresh,flush,merge,segments' % index)
        p = j['_all']['primaries']
    except Exception:
        return {}
    return dict(index_ms=p['indexing']['index_time_in_millis'], throttle_ms=p['indexing'].get(
                    'throttle_time_in_millis', 0), refreshes=p['refresh']['total'],
                refresh_ms=p['refresh']['total_time_in_millis'], flushes=p['flush']['total'],
                merges=p['merges']['total'], merge_ms=p['merges']['total_time_in_millis'],
                segments=p['segments']['count'])


def build_row(sql, meta, docs, secs):
    """searchsync's build as its own bookkeeping has it (reindex_runs,
    reindex_run_jobs): seconds from queued to the alias switched, to its
    first job's start and its last job's end, beside the bench's wall time
    (from the tool's start to a _count of every document): the rest is the
    daemon's start, the switch and the _count's polling."""
    try:
        r = sql.q('SELECT TIMESTAMPDIFF(MICROSECOND, r.started_at, r.finished_at) / 1e6, '
                  'TIMESTAMPDIFF(MICROSECOND, r.started_at, MIN(j.started_at)) / 1e6, '
                  'TIMESTAMPDIFF(MICROSECOND, r.started_at, MAX(j.finished_at)) / 1e6 '
                  'FROM `%s`.reindex_runs r LEFT JOIN `%s`.reindex_run_jobs j ON j.run_id = r.id '
                  'GROUP BY r.id ORDER BY r.id LIMIT 1' % (meta, meta))
    except Exception as ex:
        print('  (no build bookkeeping: %s)' % ex)
        return {}
    if not r:
        return {}
    f = lambda v: float(v) if v not in ('NULL', '') else None  # noqa: E731
    run, first, done = (f(x) for x in r[0][:3])
    print('  (its build: %.2f s queued to switched = %.0f docs/s; first job at %.2f s, last job done at %.2f s; '
          'the bench\'s %.2f s from the start)' % (run or 0, docs / run if run else 0, first or 0, done or 0, secs))
    return dict(build_s=run, build_first_job_s=first, build_jobs_done_s=done, wall_s=secs,
                build_rate=docs / run if run else None)


def remark(path, want):
    """A copy of a replacement file (beside it, '2' before .ndjson) with
    REPLACE_MARK changed to REPLACE_MARK2: rnd is never negative in the
    data, so the mark is the only '"rnd": -1' in it, once a document."""
    out = path[:-len('.ndjson')] + '2.ndjson'
    old, new = '"rnd": %d' % REPLACE_MARK, '"rnd": %d' % REPLACE_MARK2
    with open(path) as f:
        text = f.read()
    n = text.count(old)
    if n != want:
        raise RuntimeError('%s: %d marks, %d documents' % (path, n, want))
    with open(out, 'w') as f:
        f.write(text.replace(old, new))
    return out


def raw_round(b, url, rnd):
    """The engine's raw _bulk in round rnd, at the (connections, documents a
    request) that tuning found best for each kind: loads into a fresh index
    created as searchsync creates a version it builds (raw_bulk.INDEX_BODY;
    the plain documents of the SQL oracle under the engine's dynamic mapping,
    and, once searchsync's flat load has been dumped, its exact documents
    under its own mapping), each timed from the first request to the
    _refresh after the last; then the documents the UPDATE phases change
    posted again over the loaded index (its settings back to the engine's
    defaults) and timed to a _count, as the tools' UPDATE phases are."""
    out, lag_runs = {}, {}
    tu = b.tuned[url]
    for kind, mp in (('flat', None), ('nested', NESTED_MAPPING)):
        if kind not in b.kinds:
            continue
        par, size = tu[kind]
        idx = 'pf_raw_%s' % kind
        st = {}
        wait_quiet(lambda: engine_cpu(b.engine_pgid[url]))
        e0 = engine_cpu(b.engine_pgid[url])
        out[kind] = raw_bulk.load(url, idx, b.files[kind], par, size, raw_bulk.index_body(mp), st, flush=True)
        out[kind + '_cpu'] = dict(engine=engine_cpu(b.engine_pgid[url]) - e0, sender=st.get('sender_cpu'))
        if b.load_only:
            raw_bulk.delete(url, idx)
            continue
        want = b.updates if kind == 'flat' else b.child_updates
        # twice, as the tools' UPDATE phases replace the same documents
        # twice: beside the writer, then from a backlog over an index that
        # holds the first pass's deleted copies (more to merge). The
        # first pass pairs with the phase beside the writer, the second
        # (key _replace2) with the backlog.
        for sfx, mark in (('', REPLACE_MARK), ('2', REPLACE_MARK2)):
            q = {'term': {'rnd': mark}} if kind == 'flat' else \
                {'nested': {'path': 'children', 'query': {'term': {'children.rnd': mark}}}}
            rst, k = {}, kind + '_replace' + sfx
            wait_quiet(lambda: engine_cpu(b.engine_pgid[url]))  # the merges before, as before the tools' phases
            out[k] = raw_bulk.replace(url, idx, b.files[kind + '-replace' + sfx], par, size, q, want,
                                      timeout=env_int('PEERS_TIMEOUT', 1800), stats=rst,
                                      cpu=lambda: engine_cpu(b.engine_pgid[url]))
            out[k + '_answered'] = want / rst['answered'] if rst.get('answered') else None
            out[k + '_engine_cpu'] = rst.get('cpu_answered')
            out[k + '_engine_cpu_count'] = rst.get('cpu_secs')
        if b.raw_lag and (kind == 'flat' or b.lag_nested):
            lr = lag_runs.setdefault(kind, {'lag': {}, 'ack': {}, 'lag_cpu': {}})
            for refresh in b.lag_refresh:
                for rate in b.lag_rates:
                    lr['lag'][(refresh, rate)], lr['ack'][(refresh, rate)], lr['lag_cpu'][(refresh, rate)] = \
                        raw_lag(b, url, idx, kind, refresh, rate, rnd)
        raw_bulk.delete(url, idx)
    ex = b.exact.get(url)
    if ex:
        par, size = tu.get('flat_exact', tu.get('flat', (8, 1000)))
        wait_quiet(lambda: engine_cpu(b.engine_pgid[url]))
        e0, st, w0 = engine_cpu(b.engine_pgid[url]), {}, write_tasks(Engine(url))
        i0, j0 = box_idle(), jit_cpu(b.engine_pgid[url])
        out['flat_exact'] = raw_bulk.load(url, 'pf_raw_exact', ex[0], par, size,
                                          raw_bulk.index_body(ex[1]), st, flush=True)
        out['flat_exact_cpu'] = dict(engine=engine_cpu(b.engine_pgid[url]) - e0, sender=st.get('sender_cpu'),
                                     idle=box_idle() - i0, jit=jit_cpu(b.engine_pgid[url]) - j0)
        out['flat_exact_work'] = index_work(url, 'pf_raw_exact')
        w1 = write_tasks(Engine(url))
        if w1 is not None and w0 is not None:
            out['flat_exact_work']['bulks'] = w1 - w0
        wait_quiet(lambda: engine_cpu(b.engine_pgid[url]))
        out['flat_exact_cpu']['engine_quiet'] = engine_cpu(b.engine_pgid[url]) - e0
        print('  (engine CPU until quiet: %.1f s)' % out['flat_exact_cpu']['engine_quiet'])
        print('  (the engine\'s work on the raw load of the same documents: %s)' % out['flat_exact_work'])
        print('raw _bulk on %s, round %d: searchsync\'s exact documents (%d x %d) %s docs/s (its _refresh %.2f s, '
              '_flush %.2f s), engine CPU %.1f s (JIT %.2f s), curl %.2f s, the box idle %.2f core-s over %.2f s; '
              'plain documents %s docs/s, engine CPU %s s'
              % (b.engine_name[url], rnd, par, size, '%.0f' % out['flat_exact'] if out['flat_exact'] else 'NOT DONE',
                 st.get('refresh_secs') or 0, st.get('flush_secs') or 0,
                 out['flat_exact_cpu']['engine'], out['flat_exact_cpu']['jit'], st.get('sender_cpu') or 0,
                 out['flat_exact_cpu']['idle'],
                 st.get('secs') or 0,
                 '%.0f' % out['flat'] if out.get('flat') else '-',
                 '%.1f' % out['flat_cpu']['engine'] if out.get('flat_cpu') else '-'))
        raw_bulk.delete(url, 'pf_raw_exact')
    if b.load_only:
        b.record(dict(tool='raw _bulk', engine=b.engine_name[url], round=rnd, **out))
        out['lag_runs'] = {}
        return out
    fmt = lambda v: 'NOT DONE' if v is None else '%.0f' % v  # noqa: E731
    fmt2 = lambda v: '?' if v is None else '%.2f' % v  # noqa: E731
    print('raw _bulk on %s, round %d (flat %d x %d, nested %d x %d: connections x documents a request): '
          'flat load %s docs/s (searchsync\'s exact documents and mapping: %s), nested load %s roots/s; '
          'the UPDATE phases\' documents posted again over the loaded index, timed to a _count: flat %s docs/s, '
          'nested %s roots/s (every request answered: flat %s docs/s, nested %s roots/s; the engine\'s CPU until '
          'then: flat %s s, nested %s s; until the _count: flat %s s, nested %s s); the second pass: flat %s, '
          'nested %s (answered: flat %s, nested %s)'
          % (b.engine_name[url], rnd, tu['flat'][0], tu['flat'][1], tu['nested'][0], tu['nested'][1],
             fmt(out['flat']), fmt(out.get('flat_exact')), fmt(out['nested']), fmt(out['flat_replace']),
             fmt(out['nested_replace']), fmt(out['flat_replace_answered']), fmt(out['nested_replace_answered']),
             fmt2(out['flat_replace_engine_cpu']), fmt2(out['nested_replace_engine_cpu']),
             fmt2(out['flat_replace_engine_cpu_count']), fmt2(out['nested_replace_engine_cpu_count']),
             fmt(out['flat_replace2']), fmt(out['nested_replace2']), fmt(out['flat_replace2_answered']),
             fmt(out['nested_replace2_answered'])))
    b.record(dict(tool='raw _bulk', engine=b.engine_name[url], round=rnd, **out))
    out['lag_runs'] = lag_runs  # the raw lag runs by kind (each also a JSON line of its own)
    return out


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
        self.lag_refresh = (os.environ.get('PEERS_LAG_REFRESH') or '1s 100ms').split()
        self.raw_lag = os.environ.get('PEERS_RAW_LAG', '1') != '0'  # the engine's floor beside each lag run
        self.raw_lines = {}  # kind -> {id: action + document lines} for raw_lag
        self.lag_rates = [int(x) for x in (os.environ.get('PEERS_LAG_RATES') or str(self.lag_rate)).split()]
        self.lag_nested = os.environ.get('PEERS_LAG_NESTED', '1') == '1'
        self.results_path = os.path.join(a.tmp, 'results.jsonl') if not os.environ.get('PEERS_JSONL') \
            else os.environ['PEERS_JSONL']
        self.next_id = 1
        # PEERS_LOAD_ONLY=1: the flat load alone (each tool's, the raw
        # loads of the plain and of searchsync's exact documents), no
        # UPDATE, lag or nested phase; PEERS_TUNE_EXACT: the raw of
        # searchsync's exact documents tuned on the first that many of
        # them (0: at the plain documents' best shape)
        self.load_only = os.environ.get('PEERS_LOAD_ONLY') == '1'
        self.warmup = env_int('PEERS_WARMUP', 1)
        self.kinds = ('flat',) if self.load_only else ('flat', 'nested')
        self.tune_exact = env_int('PEERS_TUNE_EXACT', 0) if 'PEERS_TUNE_EXACT' in os.environ else 100000
        self.marker = int(self.m.q('SELECT COALESCE(MAX(rnd), 0) FROM flat')[0][0])
        self.engine_name = {a.es7: 'Elasticsearch 7.10.2', a.opensearch: 'OpenSearch 2.19'}
        self.engine_pgid = {a.es7: a.es7_pgid, a.opensearch: a.opensearch_pgid}

    def mysql_cpu(self):
        """MariaDB's CPU seconds (its writer-beside phases include the
        writer's statements; from a backlog, only what the tool reads)"""
        return tool_cpu(self.a.mysql_pid) if self.a.mysql_pid else 0.0

    def record(self, row):
        """one JSON line a measure, for the plots and the sizing model"""
        with open(self.results_path, 'a') as f:
            f.write(json.dumps(row) + '\n')

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
    ap.add_argument('--mysql-pid', type=int, default=0)
    ap.add_argument('--peers', default='gme,pgsync')
    a = ap.parse_args()
    b = Bench(a)
    rounds = env_int('ROUNDS', 4)
    print('data: %d rows in flat; %d roots with %d children; %d single-row UPDATEs and %d child UPDATEs, '
          '%d a transaction; lag at %s changes/s (refresh %s) for %d s a run; %d rounds'
          % (b.flat_rows, b.roots, int(b.m.q('SELECT COUNT(*) FROM child')[0][0]), b.updates,
             b.child_updates, b.txn, '/'.join(map(str, b.lag_rates)), '/'.join(b.lag_refresh), b.lag_secs, rounds))
    # the raw loads' documents, as the SQL oracle has them: every row, and
    # the UPDATE phases' documents marked (flat: rnd; nested: child 1's rnd)
    cols = lambda cs, t='', mark=None: ', '.join(  # noqa: E731
        "'%s', %s" % (c, REPLACE_MARK if c == mark else t + c) for c in cs)
    nested_sql = ("SELECT CONCAT('{\"index\":{\"_id\":\"', r.id, '\"}}\\n', JSON_OBJECT(%s, 'children', "
                  "(SELECT JSON_ARRAYAGG(JSON_OBJECT(%s)) FROM child c WHERE c.root_id = r.id))) FROM root r %s "
                  "ORDER BY r.id")
    b.files = {
        'flat': sql_ndjson(a, os.path.join(a.tmp, 'raw-flat.ndjson'),
                           "SELECT CONCAT('{\"index\":{\"_id\":\"', id, '\"}}\\n', JSON_OBJECT(%s)) FROM flat "
                           "ORDER BY id" % cols(FLAT_COLS)),
        'flat-replace': sql_ndjson(a, os.path.join(a.tmp, 'raw-flat-replace.ndjson'),
                                   "SELECT CONCAT('{\"index\":{\"_id\":\"', id, '\"}}\\n', JSON_OBJECT(%s)) FROM flat "
                                   "WHERE id <= %d ORDER BY id" % (cols(FLAT_COLS, mark='rnd'), b.updates)),
        'nested': sql_ndjson(a, os.path.join(a.tmp, 'raw-nested.ndjson'),
                             nested_sql % (cols(ROOT_COLS, 'r.'), cols(CHILD_COLS, 'c.'), '')),
        # the roots whose first child the child UPDATE phase changes, that
        # child marked (IF: the other children as they are)
        'nested-replace': sql_ndjson(a, os.path.join(a.tmp, 'raw-nested-replace.ndjson'),
                                     nested_sql % (cols(ROOT_COLS, 'r.'),
                                                   ', '.join("'%s', %s" % (c, 'IF(c.id = (r.id - 1) * 5 + 1, %d, c.rnd)'
                                                                            % REPLACE_MARK if c == 'rnd' else 'c.' + c)
                                                             for c in CHILD_COLS),
                                                   'WHERE r.id <= %d' % b.child_updates)),
    }
    for kind in ('flat', 'nested'):
        b.files[kind + '-replace2'] = remark(b.files[kind + '-replace'],
                                             b.updates if kind == 'flat' else b.child_updates)
    pairs = []
    for peer in a.peers.split(','):
        pairs.append({'gme': (a.es7, Gme), 'pgsync': (a.opensearch, Pgsync), 'none': (a.es7, None),
                      'es7': (a.es7, None), 'opensearch': (a.opensearch, None)}[peer])
    # the raw load tuned once per engine and kind: the (connections,
    # documents a request) it takes best (raw_bulk.tune)
    b.tuned, b.exact = {}, {}
    b.tpars = tpars = tuple(int(x) for x in (os.environ.get('PEERS_TUNE_PARS') or '2 4 8 16').split())
    b.tsizes = tsizes = tuple(int(x) for x in (os.environ.get('PEERS_TUNE_SIZES') or '500 1000 2000 5000').split())
    for url in dict.fromkeys(u for u, _ in pairs):
        b.tuned[url] = {}
        for kind, mp, sample in (('flat', None, 100000), ('nested', NESTED_MAPPING, 30000)):
            if kind not in b.kinds:
                continue
            best, table = raw_bulk.tune(url, b.files[kind], raw_bulk.index_body(mp), sample_docs=sample,
                                        pars=tpars, sizes=tsizes, index='pf_raw_tune')
            b.tuned[url][kind] = best
            b.record(dict(tool='raw _bulk tuning', engine=b.engine_name[url], kind=kind, best=best,
                          table={'%dx%d' % k: v for k, v in table.items()}))
        sys.stdout.flush()
    baseline = bool(os.environ.get('PEERS_SS_BASELINE_INI') or os.environ.get('PEERS_SS_BASELINE_BIN'))
    b.ss_names = ('searchsync',) + (('searchsync-baseline',) if baseline else ())
    results = {}  # (tool name, engine) -> list of per-round dicts
    for url, Peer in pairs:
        tools = [Searchsync(a, url, a.tmp)] + ([SearchsyncBaseline(a, url, a.tmp)] if baseline else []) + \
            ([Peer(a, url, a.tmp)] if Peer else [])
        for rnd in range(1 - b.warmup, rounds + 1):
            # two tools: in turn first; more: each first in turn; the raw
            # load last in odd rounds and first in even ones, so that no
            # side always meets the engine as the other left it
            order = (tools if rnd % 2 else tools[::-1]) if len(tools) < 3 else \
                tools[(rnd - 1) % len(tools):] + tools[:(rnd - 1) % len(tools)]
            warm = rnd < 1  # a warm-up round: run, printed, not counted
            if warm:
                print('warm-up round %d of %d (not counted: the engine\'s JVM compiles its hot paths)'
                      % (rnd + b.warmup, b.warmup))
            raw_first = rnd % 2 == 0 and url in b.exact
            if raw_first:
                raw = raw_round(b, url, rnd)
                if not warm:
                    results.setdefault(('raw _bulk', url), []).append(raw)
            for t in order:
                for kind in b.kinds:
                    if kind == 'nested' and not t.nested:
                        continue
                    try:
                        r = Run(b, t, kind, rnd).go()
                    except Exception as ex:  # one tool failing must not hide the others' figures
                        print('  %s %s round %d FAILED: %s' % (t.name, kind, rnd, ex))
                        t.stop()
                        r = {}
                    if not warm:
                        results.setdefault((t.name, url), []).append(r)
                    b.record(dict(tool=t.name, engine=b.engine_name[url], round=rnd, kind=kind,
                                  **{k: v for k, v in r.items() if not isinstance(v, dict)}))
                    sys.stdout.flush()
            if not raw_first:
                raw = raw_round(b, url, rnd)
                if not warm:
                    results.setdefault(('raw _bulk', url), []).append(raw)
            print('  (the engine\'s JIT compilers so far: %.1f CPU s, not counted in its CPU)'
                  % jit_cpu(b.engine_pgid[url]))
            sys.stdout.flush()
    table = report(b, pairs, results, rounds)
    with open(a.out, 'w') as f:
        f.write(table + '\n')
    b.m.close()
    ok = all(r for k, rs in results.items() for r in rs)
    return 0 if ok else 1


def fmt(v, f='%.0f'):
    return '–' if v is None else f % v


def pct_of(x, y):
    return None if x is None or not y else 100.0 * x / y


def report_load(b, pairs, results):
    """PEERS_LOAD_ONLY's table: each tool's flat load beside the raw loads
    of its round, medians (ranges) of the rounds, and the CPU seconds of
    each process per 100k documents."""
    rng = lambda xs, f='%.0f': '–' if not [x for x in xs if x is not None] else '%s (%s–%s)' % (  # noqa: E731
        f % median(xs), f % min(x for x in xs if x is not None), f % max(x for x in xs if x is not None))
    per = lambda v: None if v is None else 1e5 * v / b.flat_rows  # noqa: E731
    out = ['| tool (engine) | flat load docs/s | % of the raw of the same documents | % of the plain raw | '
           'build alone (queued to switched) docs/s, % of the same raw | wall / build s | '
           'CPU s per 100k docs: tool / MariaDB / engine (the box idle) |', '|---|---|---|---|---|---|---|']
    for url, Peer in pairs:
        raws = results[('raw _bulk', url)]
        for name in b.ss_names + ((Peer.name,) if Peer else ()):
            prs = list(zip(results.get((name, url), []), raws))
            prs = [(r, w) for r, w in prs if r.get('flat_load')]
            cpu = lambda k: median([per(r.get('flat_load_cpu', {}).get(k)) for r, _ in prs])  # noqa: E731
            out.append('| %s (%s) | %s | %s | %s | %s, %s | %s / %s | %s / %s / %s (%s) |' % (
                name, b.engine_name[url], rng([r['flat_load'] for r, _ in prs]),
                rng([pct_of(r['flat_load'], w.get('flat_exact')) for r, w in prs], '%.1f%%'),
                rng([pct_of(r['flat_load'], w.get('flat')) for r, w in prs], '%.1f%%'),
                rng([r.get('build_rate') for r, _ in prs]),
                rng([pct_of(r.get('build_rate'), w.get('flat_exact')) for r, w in prs], '%.1f%%'),
                fmt(median([r.get('wall_s') for r, _ in prs]), '%.2f'),
                fmt(median([r.get('build_s') for r, _ in prs]), '%.2f'),
                fmt(cpu('tool'), '%.2f'), fmt(cpu('mariadb'), '%.2f'), fmt(cpu('engine'), '%.2f'),
                fmt(cpu('idle'), '%.2f')))
        tu = b.tuned[url]
        ex = tu.get('flat_exact', tu['flat'])
        out.append('| raw _bulk (%s), searchsync\'s exact documents and mapping, %d x %d | %s | 100%% | | | | '
                   '– / – / %s (%s) |' % (b.engine_name[url], ex[0], ex[1], rng([w.get('flat_exact') for w in raws]),
                                          fmt(median([per(w.get('flat_exact_cpu', {}).get('engine')) for w in raws]),
                                              '%.2f'),
                                          fmt(median([per(w.get('flat_exact_cpu', {}).get('idle')) for w in raws]),
                                              '%.2f')))
        out.append('| raw _bulk (%s), plain documents, dynamic mapping, %d x %d | %s | | 100%% | | | – / – / %s |'
                   % (b.engine_name[url], tu['flat'][0], tu['flat'][1], rng([w.get('flat') for w in raws]),
                      fmt(median([per(w.get('flat_cpu', {}).get('engine')) for w in raws]), '%.2f')))
    text = '\n'.join(out)
    print(text)
    return text


def report(b, pairs, results, rounds):
    """The tables (medians of the rounds) on stdout; returned as text."""
    if b.load_only:
        return report_load(b, pairs, results)
    out = ['| tool (engine) | flat load docs/s | % of the tuned raw load: plain documents / searchsync\'s exact '
           'documents | root + 5 children load roots/s | % of the tuned raw load | tool CPU ms per 1k docs (load) |',
           '|---|---|---|---|---|---|']
    upd = ['| tool (engine) | phase | searchable docs/s | % of the raw replacement (to a _count) | '
           'acknowledged docs/s | % of the raw replacement (every request answered) | tool CPU ms per 1k docs |',
           '|---|---|---|---|---|---|---|']
    for url, Peer in pairs:
        raws = results[('raw _bulk', url)]
        for name in b.ss_names + ((Peer.name,) if Peer else ()):
            rs = results.get((name, url), [])
            flat = list(zip([r for r in rs if 'flat_load' in r], raws))
            nest = list(zip([r for r in rs if 'nested_load' in r], raws))
            # per round: the tool against the raw load of the same round
            ratio = lambda pairs_, k, rk: median([pct_of(r.get(k), w.get(rk)) for r, w in pairs_])  # noqa: E731
            na = 'n/a' if Peer and not Peer.nested and name not in b.ss_names else '–'
            out.append('| %s (%s) | %s | %s / %s | %s | %s | %s |' % (
                name, b.engine_name[url], fmt(median([r['flat_load'] for r, _ in flat])),
                fmt(ratio(flat, 'flat_load', 'flat'), '%.0f%%'), fmt(ratio(flat, 'flat_load', 'flat_exact'), '%.0f%%'),
                fmt(median([r['nested_load'] for r, _ in nest])) if nest else na,
                fmt(ratio(nest, 'nested_load', 'nested'), '%.0f%%') if nest else na,
                fmt(median([r['cpu_load'] for r, _ in flat]), '%.1f')))
            for key, label, prs, rk in (('flat_upd', 'flat UPDATEs, writer beside', flat, 'flat_replace'),
                                        ('flat_backlog', 'flat UPDATEs from a backlog', flat, 'flat_replace2'),
                                        ('child_upd', 'child UPDATEs, writer beside (roots)', nest, 'nested_replace'),
                                        ('child_backlog', 'child UPDATEs from a backlog (roots)', nest,
                                         'nested_replace2')):
                if not prs:
                    continue
                upd.append('| %s (%s) | %s | %s | %s | %s | %s | %s |' % (
                    name, b.engine_name[url], label, fmt(median([r.get(key) for r, _ in prs])),
                    fmt(ratio(prs, key, rk), '%.0f%%'),
                    fmt(median([r.get(key + '_ack') for r, _ in prs])) if name in b.ss_names else 'not exposed',
                    fmt(ratio(prs, key + '_ack', rk + '_answered'), '%.0f%%') if name in b.ss_names else '–',
                    fmt(median([r.get('cpu_upd') for r, _ in prs]), '%.1f') if key == 'flat_upd' else ''))
        out.append('| raw _bulk (%s), tuned: flat %dx%d, nested %dx%d | %s | (exact documents: %s) | %s | | |'
                   % (b.engine_name[url], b.tuned[url]['flat'][0], b.tuned[url]['flat'][1],
                      b.tuned[url]['nested'][0], b.tuned[url]['nested'][1],
                      fmt(median([w.get('flat') for w in raws])), fmt(median([w.get('flat_exact') for w in raws])),
                      fmt(median([w.get('nested') for w in raws]))))
        for sfx, what in (('', 'replacement of the same documents'), ('2', 'the same, its second pass')):
            upd.append('| raw _bulk (%s) | %s | flat %s, nested %s | | answered: flat %s, nested %s | | |'
                       % (b.engine_name[url], what, fmt(median([w.get('flat_replace' + sfx) for w in raws])),
                          fmt(median([w.get('nested_replace' + sfx) for w in raws])),
                          fmt(median([w.get('flat_replace%s_answered' % sfx) for w in raws])),
                          fmt(median([w.get('nested_replace%s_answered' % sfx) for w in raws]))))
    out += [''] + upd
    out += ['', '| tool (engine) | kind | refresh | changes/s (written) | searchable p50 / p99 ms (each round\'s p99) | '
            'acknowledged p50 / p99 ms | engine CPU µs a change (each round) | tool CPU µs a change | '
            'load average (each round) | bulk requests a second |',
            '|---|---|---|---|---|---|---|---|---|---|']
    for url, Peer in pairs:
        for name in b.ss_names + ((Peer.name,) if Peer else ()) + ('raw _bulk',):
            rs = results.get((name, url), [])
            keys = []
            for r in rs:
                for k in list(r.get('lag', {})) + [k for lr in r.get('lag_runs', {}).values() for k in lr['lag']]:
                    if k not in keys:
                        keys.append(k)
            for kind in ('flat', 'nested'):
                for key in keys:
                    if name == 'raw _bulk':
                        runs = [r['lag_runs'][kind] for r in rs
                                if key in r.get('lag_runs', {}).get(kind, {}).get('lag', {})]
                    else:
                        runs = [r for r in rs if key in r.get('lag', {}) and ('flat_load' in r) == (kind == 'flat')]
                    if not runs:
                        continue
                    lag = [r['lag'][key] for r in runs]
                    ack = [r['ack'][key] for r in runs if key in r.get('ack', {})]
                    cpu = [r['lag_cpu'][key] for r in runs]
                    out.append('| %s (%s) | %s | %s | %d (%s) | %s%s / %s (%s) | %s | %s (%s) | %s | %s | %s |' % (
                        name, b.engine_name[url], kind, key[0], key[1], fmt(median([c[3] for c in cpu])),
                        '≥' if any(x[2] for x in lag) else '', fmt(median([x[0] for x in lag])),
                        fmt(median([x[1] for x in lag])), ', '.join(fmt(x[1]) for x in lag),
                        '%s / %s' % (fmt(median([x[0] for x in ack])), fmt(median([x[1] for x in ack])))
                        if ack else ('not exposed' if name not in b.ss_names + ('raw _bulk',) else '–'),
                        fmt(median([1e6 * c[1] / c[2] for c in cpu])), ', '.join(fmt(1e6 * c[1] / c[2]) for c in cpu),
                        fmt(median([1e6 * c[0] / c[2] for c in cpu])),
                        ', '.join(fmt(c[4], '%.1f') if len(c) > 4 else '–' for c in cpu),
                        fmt(median([c[5] for c in cpu if len(c) > 5]), '%.1f')))
    text = '\n'.join(out)
    print()
    print('medians of %d round(s) (each ratio: the tool against the raw load of its own round):' % rounds)
    print(text)
    return text


if __name__ == '__main__':
    sys.exit(main())
