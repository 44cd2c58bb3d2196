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
Exit 0 when nothing differs, 1 otherwise; the last line is always the summary.
"""
import argparse
import json
import sys
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

    def lines(paths):
        for path in paths.split(','):
            with open(path, encoding='utf-8') as f:
                for n, line in enumerate(f, 1):
                    if line.strip():
                        yield path, n, line

    bad = 0
    shown = [0]

    def problem(*msg):
        nonlocal bad
        bad += 1
        if shown[0] < a.show * 4:
            shown[0] += 1
            print(*msg)

    actual, absent, dups = {}, set(), {}
    for path, n, line in lines(a.actual):
        o = load(line)
        if o.get('absent'):
            absent.add(o['id'])
            continue
        if o['id'] in actual:
            dups.setdefault(o['id'], [actual[o['id']]]).append(o)
            continue
        actual[o['id']] = o
    oracle = {}
    for path, n, line in lines(a.oracle):
        o = load(line)
        if o['id'] in oracle:
            problem('oracle has id %s twice (%s line %d)' % (o['id'], path, n))
        oracle[o['id']] = o

    for k in sorted(dups):
        problem('duplicate document', k, 'found %d times:' % len(dups[k]),
                json.dumps([{x: d.get(x) for x in ('index', 'routing')} for d in dups[k]]))
    details = 0
    for k in sorted(oracle):
        o = oracle[k]
        b = actual.get(k)
        if b is None:
            problem('missing document', k)
            continue
        if b.get('routing') != o.get('routing'):
            problem('routing of', k, json.dumps(b.get('routing')), '!= oracle',
                    json.dumps(o.get('routing')))
        bd = {f: x for f, x in b['doc'].items() if f not in a.ignore_field}
        od = {f: x for f, x in o['doc'].items() if f not in a.ignore_field}
        nb, no = norm(bd), norm(od)
        if nb != no:
            details += 1
            problem('document', k, 'differs from the oracle')
            if details <= a.show:
                for f in sorted(set(nb) | set(no)):
                    if nb.get(f, '<no field>') != no.get(f, '<no field>'):
                        print('  field', f,
                              '\n    actual:', json.dumps(nb.get(f, '<no field>'), ensure_ascii=False),
                              '\n    oracle:', json.dumps(no.get(f, '<no field>'), ensure_ascii=False))
    extra = sorted(set(actual) - set(oracle))
    for k in extra:
        problem('document without a row (not in the oracle):', k, 'routing',
                json.dumps(actual[k].get('routing')))
    if absent != expect_absent and (absent or expect_absent):
        problem('absent', sorted(absent), 'expected', sorted(expect_absent))
    print('%scompared %d oracle documents with %d documents (%d absent): '
          '%d duplicate ids, %d extra, %d problems'
          % (a.label + ': ' if a.label else '', len(oracle), len(actual) + sum(len(v) - 1 for v in dups.values()),
             len(absent), len(dups), len(extra), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
