#!/usr/bin/env python3
"""tests/bench/cpu_burner.py: keep a fixed share of one CPU busy until killed.

usage: cpu_burner.py SHARE     (SHARE in 0..1, e.g. 0.28 = 28% of one CPU)

bench_reindex.sh runs it beside a plain bulk load to take away the CPU that a
reindex's own reading (the daemon plus MariaDB) takes on a machine shared with
the engine. The plain load with that CPU taken away shows what any loader that
has to read its documents first could reach on the same box.

It works in 10 ms slices, busy for SHARE of each slice and asleep for the
rest, so the CPU is taken evenly over the load and not in one burst.
"""
import sys
import time


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cpu_burner.py SHARE (0..1 of one CPU)")
    share = min(max(float(sys.argv[1]), 0.0), 1.0)
    slice_s = 0.01
    while True:
        start = time.monotonic()
        while time.monotonic() - start < slice_s * share:
            pass
        rest = slice_s - (time.monotonic() - start)
        if rest > 0:
            time.sleep(rest)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
