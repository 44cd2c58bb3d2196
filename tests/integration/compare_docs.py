#!/usr/bin/env python3
"""compare_docs.py — compare search documents with the SQL oracle.

usage: compare_docs.py [--numbers exact|value] [--absent ID,ID...] [--show N]
                       [--ignore-field NAME]... [--label NAME] ACTUAL ORACLE [ABSENT_CSV]

ACTUAL and ORACLE are NDJSON files (or several, comma-separated), one document
a line: {"id": "...", "routing": "..."|null, "doc": {...}}. ACTUAL may also
hold {"id": "...", "absent": true} lines (tests/tools/docbuild_dump) and extra
keys such as "index" (tests/integration/engine_dump.py); they are ignored.

Failures (each is counted, the first --show are printed in detail):
  * an id twice in ACTUAL (a child indexed on two shards, or twice on one);
  * an oracle document missing from ACTUAL;
  * a document of ACTUAL without an oracle document (no row behind it);
  * a routing different from the oracle's (null = no routing);
  * a body different from the oracle's. Objects compare by keys; arrays are
    compared sorted (by "id", else "tag_id", else the whole element), since
    the order of a nested array carries no meaning for the search;
  * absent ids different from --absent (only when ACTUAL reports absents).
Numbers: --numbers exact (default) compares floats by their exact text and
integers exactly (the builder's bytes); --numbers value compares every number
by its decimal value (12 == 12.0 == 1.2E1), for documents that went through
the engine (a script may re-serialize the _source).
--ignore-field NAME drops a top-level field of every body before comparing
(the engine's copy carries delivery's version field, `ss_version`).
Both sides are keyed by id and sorted by sort(1) (which spills to disk), then
walked together, so memory stays flat at any size (long_reindex: 1.9M
documents).
Exit 0 when nothing differs, 1 otherwise; the last line is always the summary.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('\n\n')[1])
    ap.add_argument('--numbers', choices=('exact', 'value'), default='exact')
    ap.add_argument('--absent', default=None)
    ap.add_argument('--show', type=int, default=5)
    ap.add_argument('--label', default='')
    ap.add_argument('--ignore-field', action='append', default=[])
    ap.add_argument('actual')
    ap.add_argument('oracle')
    ap.add_argument('absent_csv', nargs='?', default=None)
    a = ap.parse_args()
    absent_arg = a.absent if a.absent is not None else a.absent_csv
    expect_absent = set((absent_arg or '').split(',')) - {''}

    if a.numbers == 'exact':
        def load(line):
            return json.loads(line, parse_float=lambda s: ('float', s))
    else:
        def num(s):
            return ('num', str(Decimal(s).normalize()))
        def load(line):
            return json.loads(line, parse_float=num, parse_int=num)

    def norm(v):
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            xs = [norm(x) for x in v]
            def key(x):
                if isinstance(x, dict):
                    k = x.get('id', x.get('tag_id'))
                    return (json.dumps(k, sort_keys=True), json.dumps(x, sort_keys=True))
                return ('', json.dumps(x, sort_keys=True))
            return sorted(xs, key=key)
        return v

    tmpdir = tempfile.mkdtemp(prefix='compare_docs.')
    try:
        return compare(a, load, norm, expect_absent, tmpdir)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


ID_AT_START = re.compile(r'\{\s*"id"\s*:\s*("(?:[^"\\]|\\.)*")')


def sorted_by_id(paths, tmpdir, name):
    """The documents of paths (comma-separated NDJSON files) as (id, path,
    line number, line), sorted by id: each line is keyed by its id in a
    temporary file and sorted by sort(1), which spills to disk, so memory
    stays flat whatever the number of documents."""
    keyed = os.path.join(tmpdir, name + '.keyed')
    with open(keyed, 'w', encoding='utf-8') as out:
        for path in paths.split(','):
            with open(path, encoding='utf-8') as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    m = ID_AT_START.match(line)  # both producers write the id first
                    i = json.loads(m.group(1)) if m else json.loads(line)['id']
                    k = json.dumps(i, ensure_ascii=False)
                    out.write('%s\t%s\t%d\t%s' % (k.replace('\t', ' '), path, n,
                                                 line if line.endswith('\n') else line + '\n'))
    srt = keyed + '.sorted'
    env = dict(os.environ, LC_ALL='C')
    subprocess.run(['sort', '-s', '-t', '\t', '-k1,1', '-S', '512M', '-T', tmpdir,
                    '-o', srt, keyed], check=True, env=env)
    os.unlink(keyed)
    with open(srt, encoding='utf-8') as f:
        for raw in f:
            k, path, n, line = raw.split('\t', 3)
            yield k, path, int(n), line


def groups(it):
    """Consecutive records of one id: (key, [records])."""
    cur, grp = None, []
    for rec in it:
        if rec[0] != cur and grp:
            yield cur, grp
            grp = []
        cur = rec[0]
        grp.append(rec)
    if grp:
        yield cur, grp


def compare(a, load, norm, expect_absent, tmpdir):
    bad = 0
    shown = [0]

    def problem(*msg):
        nonlocal bad
        bad += 1
        if shown[0] < a.show * 4:
            shown[0] += 1
            print(*msg)

    END = object()
    act = groups(sorted_by_id(a.actual, tmpdir, 'actual'))
    ora = groups(sorted_by_id(a.oracle, tmpdir, 'oracle'))
    absent = set()
    n_oracle = n_actual = n_dups = n_extra = details = 0
    x, y = next(act, END), next(ora, END)
    while x is not END or y is not END:
        if y is END or (x is not END and x[0] < y[0]):
            key, recs, orecs = x[0], x[1], []
            x = next(act, END)
        elif x is END or y[0] < x[0]:
            key, recs, orecs = y[0], [], y[1]
            y = next(ora, END)
        else:
            key, recs, orecs = x[0], x[1], y[1]
            x, y = next(act, END), next(ora, END)
        docs = []
        for _, path, n, line in recs:
            o = load(line)
            if o.get('absent'):
                absent.add(o['id'])
            else:
                docs.append(o)
        n_actual += len(docs)
        o = None
        if orecs:
            n_oracle += 1
            o = load(orecs[0][3])
            for _, path, n, _line in orecs[1:]:
                problem('oracle has id %s twice (%s line %d)' % (o['id'], path, n))
        if len(docs) > 1:
            n_dups += 1
            problem('duplicate document', docs[0]['id'], 'found %d times:' % len(docs),
                    json.dumps([{f: d.get(f) for f in ('index', 'routing')} for d in docs]))
        b = docs[0] if docs else None
        if o is None:
            if b is not None:
                n_extra += 1
                problem('document without a row (not in the oracle):', b['id'], 'routing',
                        json.dumps(b.get('routing')))
            continue
        if b is None:
            problem('missing document', o['id'])
            continue
        if b.get('routing') != o.get('routing'):
            problem('routing of', o['id'], json.dumps(b.get('routing')), '!= oracle',
                    json.dumps(o.get('routing')))
        bd = {f: v for f, v in b['doc'].items() if f not in a.ignore_field}
        od = {f: v for f, v in o['doc'].items() if f not in a.ignore_field}
        nb, no = norm(bd), norm(od)
        if nb != no:
            details += 1
            problem('document', o['id'], 'differs from the oracle')
            if details <= a.show:
                for f in sorted(set(nb) | set(no)):
                    if nb.get(f, '<no field>') != no.get(f, '<no field>'):
                        print('  field', f,
                              '\n    actual:', json.dumps(nb.get(f, '<no field>'), ensure_ascii=False),
                              '\n    oracle:', json.dumps(no.get(f, '<no field>'), ensure_ascii=False))
    if absent != expect_absent and (absent or expect_absent):
        problem('absent', sorted(absent), 'expected', sorted(expect_absent))
    print('%scompared %d oracle documents with %d documents (%d absent): '
          '%d duplicate ids, %d extra, %d problems'
          % (a.label + ': ' if a.label else '', n_oracle, n_actual, len(absent), n_dups,
             n_extra, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
