#!/usr/bin/env python3
"""seed_from_binlog: cut binlog files into fuzz seeds for fuzz_binlog.c.

usage: seed_from_binlog.py OUTDIR BINLOG_FILE...
Each seed is one mode byte (bit 0 checksums, bit 1 MariaDB, bit 2 no
synthetic format event) followed by the file's FORMAT_DESCRIPTION event and
the events of one transaction (GTID .. XID/COMMIT, table maps included).
Seeds with the same sequence of event types are kept once."""
import os
import struct
import sys


def events(data):
    off = 4  # magic
    while off + 19 <= len(data):
        size = struct.unpack_from('<I', data, off + 9)[0]
        if size < 19 or off + size > len(data):
            return
        yield data[off + 4], data[off:off + size]
        off += size


def main():
    out, files = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    seen = set()
    n = 0
    for path in files:
        data = open(path, 'rb').read()
        fde = None
        mariadb = False
        txn = []
        for etype, ev in events(data):
            if etype == 15:
                fde = ev
                mariadb = b'MariaDB' in ev[19 + 2:19 + 52]
                continue
            txn.append((etype, ev))
            if etype in (16, 2, 4) or len(txn) > 40:
                sig = tuple(t for t, _ in txn)
                if fde and sig not in seen and sum(len(e) for _, e in txn) < 32768:
                    seen.add(sig)
                    mode = 1 | (2 if mariadb else 0) | 4
                    name = 'binlog-%s-%03d' % (os.path.basename(path).replace('.', '_'), n)
                    with open(os.path.join(out, name), 'wb') as f:
                        f.write(bytes([mode]) + fde + b''.join(e for _, e in txn))
                    n += 1
                txn = []
    print('%d seeds' % n)


if __name__ == '__main__':
    main()
