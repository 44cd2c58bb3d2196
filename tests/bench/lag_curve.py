#!/usr/bin/env python3
"""lag_curve.py RESULTS.jsonl OUTDIR — the medians of bench_lag_curve.sh's
lag runs (one JSON line each, from sync_driver.py) by mode, refresh and rate:
a markdown table on stdout (lag.md in OUTDIR too) and PNG plots drawn by
gnuplot (lag-searchable.png, lag-acknowledged.png, lag-engine-cpu.png)."""
import json
import os
import statistics
import subprocess
import sys

ACK = 'acknowledged by the engine'
SEARCH = 'searchable'


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    src, out = sys.argv[1], sys.argv[2]
    rows = [json.loads(line) for line in open(src) if line.strip()]
    if not rows:
        print('lag_curve: no lag runs in %s' % src)
        return 1
    groups = {}
    for r in rows:
        groups.setdefault((r['tag'], r['refresh'], r['rate']), []).append(r)
    tags = sorted({k[0] for k in groups})
    refreshes = sorted({k[1] for k in groups}, key=lambda s: (s != '1s', s))
    rates = sorted({k[2] for k in groups})

    def m(rs, kind, field):
        return med([(r.get(kind) or {}).get(field) for r in rs]) if kind else med([r.get(field) for r in rs])

    table = ['| mode | refresh | target changes/s | achieved | runs | acknowledged p50 / p99 ms | '
             'searchable p50 / p99 ms | engine CPU µs a change | bulk requests a second |',
             '|---|---|---|---|---|---|---|---|---|']
    fmt = lambda x: '-' if x is None else '%.0f' % x
    for tag in tags:
        for rf in refreshes:
            for rate in rates:
                rs = groups.get((tag, rf, rate))
                if not rs:
                    continue
                reqs = med([r['bulk_requests'] / r['wall_s'] for r in rs if r.get('wall_s')])
                table.append('| %s | %s | %d | %s | %d | %s / %s | %s / %s | %s | %s |' % (
                    tag, rf, rate, fmt(m(rs, None, 'changes_per_s')), len(rs),
                    fmt(m(rs, ACK, 'p50_ms')), fmt(m(rs, ACK, 'p99_ms')),
                    fmt(m(rs, SEARCH, 'p50_ms')), fmt(m(rs, SEARCH, 'p99_ms')),
                    fmt(m(rs, None, 'engine_cpu_us_per_change')), fmt(reqs)))
    text = '\n'.join(table)
    print(text)
    with open(os.path.join(out, 'lag.md'), 'w') as f:
        f.write(text + '\n')

    # one data file per (mode, refresh): rate, the medians
    files = []
    for tag in tags:
        for rf in refreshes:
            name = os.path.join(out, 'lag-%s-%s.dat' % (tag.replace('=', '_'), rf))
            with open(name, 'w') as f:
                f.write('# rate ack_p50 ack_p99 search_p50 search_p99 engine_us_per_change requests_per_s\n')
                for rate in rates:
                    rs = groups.get((tag, rf, rate))
                    if not rs:
                        continue
                    reqs = med([r['bulk_requests'] / r['wall_s'] for r in rs if r.get('wall_s')])
                    vals = [m(rs, None, 'changes_per_s'), m(rs, ACK, 'p50_ms'), m(rs, ACK, 'p99_ms'),
                            m(rs, SEARCH, 'p50_ms'), m(rs, SEARCH, 'p99_ms'),
                            m(rs, None, 'engine_cpu_us_per_change'), reqs]
                    f.write(' '.join('NaN' if v is None else '%.3f' % v for v in vals) + '\n')
            files.append((tag, rf, name))

    def plot(png, title, ylabel, cols, logy=False):
        g = ['set terminal pngcairo size 1200,480 font ",10"', 'set termoption noenhanced',
             'set output "%s"' % os.path.join(out, png),
             'set multiplot layout 1,%d title "%s"' % (len(refreshes), title),
             'set key top left', 'set grid', 'set xlabel "changes/s (achieved)"',
             'set ylabel "%s"' % ylabel, 'set logscale x']
        if logy:
            g.append('set logscale y')
        else:
            g.append('set offsets graph 0, 0, 0.05, 0.05')
        for rf in refreshes:
            g.append('set title "refresh %s"' % rf)
            parts = []
            for tag, frf, name in files:
                if frf != rf:
                    continue
                for col, what in cols:
                    parts.append('"%s" using 1:%d with linespoints title "%s %s"' % (name, col, tag, what))
            g.append('plot ' + ', '.join(parts))
        g.append('unset multiplot')
        subprocess.run(['gnuplot'], input='\n'.join(g) + '\n', text=True, check=True)

    plot('lag-searchable.png', 'searchable lag (median of the rounds)', 'ms', [(4, 'p50'), (5, 'p99')])
    plot('lag-acknowledged.png', 'acknowledged lag (median of the rounds)', 'ms', [(2, 'p50'), (3, 'p99')],
         logy=True)
    plot('lag-engine-cpu.png', 'engine CPU a change and bulk requests a second', 'µs a change / requests a s',
         [(6, 'engine µs/change'), (7, 'requests/s')], logy=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
