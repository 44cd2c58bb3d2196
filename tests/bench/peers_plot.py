#!/usr/bin/env python3
"""peers_plot.py RESULTS.jsonl OUTDIR — the lag curves of bench_peers.sh
(PEERS_JSONL: one JSON line a lag run, from peers_driver.py) drawn with
gnuplot (Debian's gnuplot-nox) as PNG plots, medians over the rounds:

  peers-lag-flat.png     searchable lag p50 and p99 against the rate, one
                         panel per refresh setting, a line per tool and
                         engine (flat documents: every tool)
  peers-lag-nested.png   the same for nested documents (the tools that nest)
  peers-engine-cpu.png   the engine's CPU a change for the writes (the
                         _search poller's own CPU taken out) against the rate

and the data beside them (peers-lag-*.dat). Python stdlib only."""
import json
import os
import statistics
import subprocess
import sys


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def drawable(path, col, logy):
    """Whether column col (from 1) of a .dat file has a point to draw: a
    number, above 0 on a log scale (a lag run too short to show the writes'
    CPU beside the poller's has 0 there)."""
    for line in open(path):
        if line.startswith('#'):
            continue
        v = line.split()[col - 1]
        if v != 'NaN' and (not logy or float(v) > 0):
            return True
    return False


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rows = [json.loads(line) for line in open(src) if line.strip()]
    # the warm-up rounds (round < 1) are run but not counted
    rows = [r for r in rows if 'refresh' in r and 'p99' in r and r.get('round', 1) >= 1]
    if not rows:
        print('peers_plot: no lag runs in %s' % src)
        return 1
    groups = {}
    for r in rows:
        groups.setdefault((r['kind'], '%s (%s)' % (r['tool'], r['engine']), r['refresh'], r['rate']), []).append(r)
    refreshes = sorted({k[2] for k in groups}, key=lambda s: (s != '1s', s))
    files = {}  # (kind, tool) -> {refresh: path}
    for (kind, tool, rf, rate), rs in sorted(groups.items()):
        files.setdefault((kind, tool), {})[rf] = None
    for (kind, tool), byrf in files.items():
        for rf in byrf:
            name = os.path.join(out, 'peers-lag-%s-%s-%s.dat' % (kind, tool.split(' ')[0], rf))
            rates = sorted({k[3] for k in groups if k[:3] == (kind, tool, rf)})
            with open(name, 'w') as f:
                f.write('# %s %s refresh %s: rate written p50 p99 engine_us_per_change rounds\n' % (tool, kind, rf))
                for rate in rates:
                    rs = groups[(kind, tool, rf, rate)]
                    vals = [rate, med([r['written'] for r in rs]), med([r['p50'] for r in rs]),
                            med([r['p99'] for r in rs]),
                            med([1e6 * r['engine_cpu'] / r['changes'] for r in rs if r.get('changes')]), len(rs)]
                    f.write(' '.join('NaN' if v is None else '%.3f' % v for v in vals) + '\n')
            byrf[rf] = name

    def plot(png, title, ylabel, kinds, cols, logy=False):
        g = ['set terminal pngcairo size 1200,480 font ",10"', 'set termoption noenhanced',
             'set output "%s"' % os.path.join(out, png),
             'set multiplot layout 1,%d title "%s"' % (len(refreshes), title),
             'set key top left', 'set grid', 'set xlabel "row changes/s"', 'set ylabel "%s"' % ylabel,
             'set logscale x']
        g.append('set logscale y' if logy else 'set offsets graph 0, 0, 0.05, 0.05')
        for rf in refreshes:
            g.append('set title "refresh %s"' % rf)
            parts = []
            for (kind, tool), byrf in sorted(files.items()):
                if kind not in kinds or not byrf.get(rf):
                    continue
                for col, what in cols:
                    if not drawable(byrf[rf], col, logy):
                        continue  # gnuplot stops at a line with no point to draw
                    parts.append('"%s" using 1:%d with linespoints title "%s %s%s"'
                                 % (byrf[rf], col, tool, kind + ' ' if len(kinds) > 1 else '', what))
            if parts:
                g.append('plot ' + ', '.join(parts))
        g.append('unset multiplot')
        subprocess.run(['gnuplot'], input='\n'.join(g) + '\n', text=True, check=True)

    plot('peers-lag-flat.png', 'commit to searchable, flat documents (median of the rounds)', 'ms',
         ('flat',), [(3, 'p50'), (4, 'p99')], logy=True)
    if any(k[0] == 'nested' for k in files):
        plot('peers-lag-nested.png', 'commit to searchable, nested documents (median of the rounds)', 'ms',
             ('nested',), [(3, 'p50'), (4, 'p99')], logy=True)
    plot('peers-engine-cpu.png', 'the engine\'s CPU a change for the writes (poller taken out)', 'µs a change',
         ('flat', 'nested'), [(5, '')], logy=True)
    print('peers_plot: plots in %s' % out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
