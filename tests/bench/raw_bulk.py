#!/usr/bin/env python3
"""tests/bench/raw_bulk.py — the search engine's raw `_bulk` rate, tuned: the
ceiling a sync tool's load is compared with. Python stdlib only;
imported by the benchmarks (tests/bench/peers_driver.py first).

Input: an NDJSON file of action + document line pairs, e.g.
    {"index":{"_id":"1"}}
    {"id": 1, "name": "item 1", ...}
as peers_driver.py builds them with SQL. The file is split once (cached
beside it, outside every timing) into files of `size` documents, an action
line and its document never apart; one curl process posts them with
`--parallel --parallel-max par` (par HTTP/1.1 connections kept open, the
files taken in order, no versions). The sender cannot be the limit: curl
only streams files into sockets, measured (wait4 rusage of the curl
process, in `stats['sender_cpu']`) at about 0.5-2% of one core at
40-60k documents/s from 2 to 16 connections, against the engine's 180-200%
on a 2-core box.

API (url: 'http://host:port'; every rate is documents a second):
  INDEX_BODY    what the engine takes best for a bulk load and what
                searchsync creates a version it builds with
                (sync/mapping/index_mapping.c): 1 shard, 0 replicas,
                refresh_interval -1, translog.durability async
  index_body(mappings=None) -> INDEX_BODY with these mappings
  split(path, size) -> the pre-split files (cached in PATH.split-SIZE/)
  count_docs(path) -> the documents in an NDJSON file
  load(url, index, path, par, size, index_body, stats=None) -> docs/s
                (the index created fresh with index_body; from the first
                request to the `_refresh` after the last; the index stays,
                loaded: delete() it, or replace() into it. None when the
                index does not hold every document afterwards)
  tune(url, path, index_body, sample_docs=100000, pars=(2, 4, 8, 16),
       sizes=(500, 1000, 2000, 5000)) -> ((par, size), {(par, size): docs/s})
                (each pair loads the first sample_docs documents once into
                a scratch index, after one warm-up load; the table printed)
  replace(url, index, path, par, size, count_query, want, timeout=1800,
          stats=None, cpu=None, params=None, poll_while=None) -> docs/s or None
                (the given documents posted again over a loaded index whose
                settings are first put back to the engine's defaults, the
                1 s refresh and a translog written on every request, as
                searchsync leaves a version it has built; timed until
                `_count` of count_query, polled every 250 ms, shows `want`,
                as a sync tool's UPDATE phase is timed; stats['answered']: the
                seconds until every request was answered; params: a query
                string for each _bulk, e.g. searchsync's filter_path;
                poll_while: _count also polled that often while posting,
                so that the index is not search-idle. None: timeout)
  delete(url, index)
stats, when given a dict, gets: docs, secs, requests, non200 (requests not
answered 200), sender_cpu (seconds of the curl process), par, size; load()
also refresh_secs and flush_secs (the final _refresh's and _flush's shares
of secs).
"""
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

now = time.monotonic

INDEX_BODY = {'settings': {'index': {'number_of_shards': 1, 'number_of_replicas': 0,
                                     'refresh_interval': '-1', 'translog': {'durability': 'async'}}}}


def index_body(mappings=None):
    """INDEX_BODY, with mappings (e.g. {'properties': {'children':
    {'type': 'nested'}}}) when given."""
    b = json.loads(json.dumps(INDEX_BODY))
    if mappings:
        b['mappings'] = mappings
    return b


def _req(url, method, path, body=None, timeout=120):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    try:
        c.request(method, path, body=None if body is None else json.dumps(body),
                  headers={'Content-Type': 'application/json'} if body is not None else {})
        r = c.getresponse()
        data = r.read()
        return r.status, (json.loads(data) if data else {})
    finally:
        c.close()


def delete(url, index):
    _req(url, 'DELETE', '/' + index)


def _count(url, index, query=None):
    try:
        st, j = (_req(url, 'GET', '/%s/_count' % index) if query is None
                 else _req(url, 'POST', '/%s/_count' % index, {'query': query}))
    except (OSError, http.client.HTTPException, ValueError):
        return 0
    return int(j.get('count', 0)) if st == 200 else 0


def count_docs(path):
    with open(path, 'rb') as f:
        return sum(1 for _ in f) // 2


def split(path, size):
    """The files of `size` documents (2 * size lines) of path, in order;
    made once into PATH.split-SIZE/ (a .done file marks it complete)."""
    d = '%s.split-%d' % (path, size)
    done = os.path.join(d, '.done')
    if not os.path.exists(done):
        os.makedirs(d, exist_ok=True)
        k, n, g = 0, 0, None
        with open(path, 'rb') as f:
            for line in f:
                if g is None:
                    g = open(os.path.join(d, 'b%06d' % k), 'wb')
                g.write(line)
                n += 1
                if n == 2 * size:
                    g.close()
                    g, n, k = None, 0, k + 1
        if g is not None:
            g.close()
        open(done, 'w').close()
    return sorted(os.path.join(d, x) for x in os.listdir(d) if x.startswith('b'))


def _sample(path, docs):
    """The first `docs` documents of path (path itself when it has no more)."""
    if count_docs(path) <= docs:
        return path
    out = '%s.sample-%d' % (path, docs)
    if not os.path.exists(out):
        with open(path, 'rb') as f, open(out + '.tmp', 'wb') as g:
            for i, line in enumerate(f):
                if i == 2 * docs:
                    break
                g.write(line)
        os.rename(out + '.tmp', out)
    return out


def _post(url, index, files, par, stats, params=None):
    """One curl process, par parallel connections, every file one _bulk
    request; returns when all are answered."""
    cfg = files[0] + '.curl-%d' % os.getpid() if files else None
    target = '%s/%s/_bulk%s' % (url, index, '?' + params if params else '')
    with open(cfg, 'w') as f:
        for i, name in enumerate(files):
            if i:
                f.write('next\n')
            f.write('url = "%s"\ndata-binary = "@%s"\nheader = "Content-Type: application/x-ndjson"\n'
                    'output = "/dev/null"\nsilent\nwrite-out = "%%{http_code}\\n"\n' % (target, name))
    p = subprocess.Popen(['curl', '-s', '--parallel', '--parallel-max', str(par), '--parallel-immediate',
                          '-K', cfg], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    os.unlink(cfg)
    codes = out.split()
    if stats is not None:
        stats['requests'] = len(codes)
        stats['non200'] = sum(1 for c in codes if c != '200')
        stats['sender_cpu'] = ru.ru_utime + ru.ru_stime
    if p.returncode:
        print('raw_bulk: curl exited with status %d' % p.returncode, file=sys.stderr)


def load(url, index, path, par, size, index_body, stats=None, flush=False):
    """Every document of path into `index`, created fresh with index_body:
    docs/s from the first request to the _refresh after the last (None when
    the index then holds fewer documents than the file: rejected requests,
    see stats['non200']). flush: to the _flush after that _refresh too, as
    a load under an asynchronous translog must end to be durable (a build
    flushes its version before the switch)."""
    st = {} if stats is None else stats
    files = split(path, size)
    docs = count_docs(path)
    delete(url, index)
    s, j = _req(url, 'PUT', '/' + index, index_body)
    if s != 200:
        raise RuntimeError('raw_bulk: creating %s: HTTP %d %s' % (index, s, json.dumps(j)[:300]))
    t0 = now()
    _post(url, index, files, par, st)
    t1 = now()
    _req(url, 'POST', '/%s/_refresh' % index)
    st['refresh_secs'] = now() - t1
    if flush:
        t2 = now()
        _req(url, 'POST', '/%s/_flush' % index)
        st['flush_secs'] = now() - t2
    secs = now() - t0
    got = _count(url, index)
    st.update(docs=docs, secs=secs, par=par, size=size)
    if got != docs:
        print('raw_bulk: %s holds %d of %d documents after the load (%d of %d requests not answered 200)'
              % (index, got, docs, st.get('non200', 0), st.get('requests', 0)), file=sys.stderr)
        return None
    return docs / secs


def tune(url, path, index_body, sample_docs=100000, pars=(2, 4, 8, 16), sizes=(500, 1000, 2000, 5000),
         index='raw_bulk_tune', warmup=True, out=sys.stdout):
    """The (par, size) of the highest load rate of the first sample_docs
    documents of path, and the table of every rate tried (printed)."""
    sample = _sample(path, sample_docs)
    docs = count_docs(sample)
    if warmup:  # the engine's JIT and caches: the first pair is not the cold one
        load(url, index, sample, pars[len(pars) // 2], sizes[len(sizes) // 2], index_body)
    table, cpu = {}, {}
    for par in pars:
        for size in sizes:
            st = {}
            table[(par, size)] = load(url, index, sample, par, size, index_body, st)
            cpu[(par, size)] = st.get('sender_cpu', 0) / st['secs'] if st.get('secs') else 0
    delete(url, index)
    best = max((k for k in table if table[k]), key=lambda k: table[k], default=(pars[0], sizes[0]))
    print('raw _bulk tuning on %s: %d documents of %s, docs/s by connections (rows) and documents a request '
          '(columns); the sender (curl) used %.1f-%.1f%% of a core' % (
              url, docs, os.path.basename(path), 100 * min(cpu.values()), 100 * max(cpu.values())), file=out)
    print('  %6s' % 'par' + ''.join('%9d' % s for s in sizes), file=out)
    for par in pars:
        print('  %6d' % par + ''.join('%9s' % ('%.0f' % table[(par, s)] if table[(par, s)] else 'failed')
                                      for s in sizes), file=out)
    print('  best: %d connections, %d documents a request' % best, file=out)
    out.flush()
    return best, table


def replace(url, index, path, par, size, count_query, want, timeout=1800, stats=None, cpu=None, params=None,
            poll_while=None):
    """The documents of path posted again over the loaded `index`, its
    refresh interval and translog durability first put back to the
    engine's defaults; docs/s until _count of count_query (polled every
    250 ms) shows `want` documents, None after timeout seconds. With cpu (a
    function giving the engine's CPU seconds), stats['cpu_answered'] is
    the engine's CPU until the last request was answered, and
    stats['cpu_secs'] until the _count showed them all. With poll_while
    (seconds), _count is also polled that often while the requests are
    posted, as a bench polls the index searchsync is writing: an index
    no search has reached for 30 s is search-idle, and the engine skips
    its scheduled refreshes (6 in a 1M replacement against searchsync's
    23, polled throughout)."""
    st = {} if stats is None else stats
    files = split(path, size)
    docs = count_docs(path)
    _req(url, 'PUT', '/%s/_settings' % index, {'index': {'refresh_interval': None,
                                                         'translog': {'durability': None}}})
    done, poller = threading.Event(), None

    def poll():
        while not done.wait(poll_while):
            _count(url, index, count_query)
    if poll_while:
        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
    c0 = cpu() if cpu else None
    t0 = now()
    try:
        _post(url, index, files, par, st, params)
    finally:
        done.set()
        if poller:
            poller.join()
    st.update(docs=docs, par=par, size=size, answered=now() - t0)
    if cpu:
        st['cpu_answered'] = cpu() - c0
    while now() - t0 < timeout:
        if _count(url, index, count_query) >= want:
            st['secs'] = now() - t0
            if cpu:
                st['cpu_secs'] = cpu() - c0
            return docs / st['secs']
        time.sleep(0.25)
    return None


if __name__ == '__main__':  # raw_bulk.py URL FILE.ndjson [nested]: tune and print
    sys.dont_write_bytecode = True
    mp = {'properties': {'children': {'type': 'nested'}}} if sys.argv[3:] == ['nested'] else None
    tune(sys.argv[1], sys.argv[2], index_body(mp))
