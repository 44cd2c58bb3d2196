#!/usr/bin/env python3
"""row_filter_server.py — the row filter's cases (tests/fixtures/row_filter/
cases.tsv) evaluated by a real server, to compare with the evaluator's.

A table of the fixture's columns gets one row per case (the base row with the
case's changes); each case's condition is run as SELECT (cond) FROM that table
for its row (read as a truth, as WHERE reads it), all in one batch through the mariadb client (its connection as
searchsync's: utf8mb4, time_zone '+00:00'). A column whose collation the
server lacks (MySQL's _0900_, MariaDB's _nopad_) is left out, and so are the
cases that read it.

Every T, F and N case must give the server's 1, 0 or NULL: a difference is
printed and the exit status is 1. U cases (the evaluator leaves them to the
server) are counted with what the server said. The last line:
  <server>: N cases, N agree, N differ, N left to the server (...), N skipped

usage: row_filter_server.py FIXTURE DATABASE -- CLIENT-ARGS...
(CLIENT-ARGS: how to reach the server with the mariadb client, e.g.
 -h 127.0.0.1 -P 3306 -u root)
"""
import re
import subprocess
import sys


def unescape(s):
    out = bytearray()
    i = 0
    b = s.encode("utf-8")
    while i < len(b):
        if b[i:i + 2] == b"\\t":
            out.append(9)
            i += 2
        elif b[i:i + 2] == b"\\\\":
            out.append(92)
            i += 2
        elif b[i:i + 2] == b"\\x" and i + 4 <= len(b):
            out.append(int(b[i + 2:i + 4], 16))
            i += 4
        else:
            out.append(b[i])
            i += 1
    return bytes(out)


def load(path):
    cols, base, cases = [], b"", []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if fields[0] == "col":
                cols.append((fields[1], fields[2], None if fields[3] == "-" else fields[3]))
            elif fields[0] == "base":
                base = unescape(fields[1])
            else:
                cases.append((n, fields[0], unescape(fields[1]),
                              unescape(fields[2] if len(fields) > 2 else "")))
    return cols, base, cases


def spec(row, s):
    """apply a SPEC (bytes) to row (dict name -> bytes or None)"""
    for part in s.split(b"|") if s else []:
        if b"=" in part:
            k, v = part.split(b"=", 1)
            row[k.decode()] = v
        else:
            row[part.decode()] = None
    return row


def literal(coltype, v):
    if v is None:
        return "NULL"
    t = coltype.lower()
    if t.startswith("bit") or t.startswith("varbinary") or t.startswith("binary"):
        return "X'%s'" % v.hex() if v else "''"
    if t.startswith(("varchar", "char", "enum", "set", "text", "json")):
        return "_utf8mb4 X'%s'" % v.hex() if v else "''"
    return "'%s'" % v.decode().replace("'", "''")


def client(args, sql):
    p = subprocess.run(["mariadb", "--no-defaults", "--batch", "--skip-column-names",
                        "--default-character-set=utf8mb4", "--force"] + args,
                       input=sql.encode(), capture_output=True)
    if p.returncode != 0: # a case the server refuses gives no answer (below)
        sys.stderr.write(p.stderr.decode(errors="replace"))
    return p.stdout.decode(errors="replace")


def main():
    if len(sys.argv) < 4 or sys.argv[3] != "--":
        sys.exit(__doc__)
    cols, base, cases = load(sys.argv[1])
    db, args = sys.argv[2], sys.argv[4:]
    version = client(args, "SELECT VERSION();").strip()
    have = set(client(args, "SELECT COLLATION_NAME FROM information_schema.COLLATIONS;").split())
    kept = [c for c in cols if c[2] is None or c[2] in have]
    missing = [c[0] for c in cols if c not in kept]
    names = {c[0] for c in kept}
    ddl = ",\n  ".join(
        "`%s` %s%s NULL" % (n, t, (" CHARACTER SET %s COLLATE %s" % (co.split("_")[0], co)) if co else "")
        for n, t, co in kept)
    sql = ["SET SESSION time_zone = '+00:00';",
           "CREATE DATABASE IF NOT EXISTS `%s`;" % db, "USE `%s`;" % db,
           "DROP TABLE IF EXISTS rf;",
           "CREATE TABLE rf (\n  case_no INT PRIMARY KEY,\n  %s) ENGINE=InnoDB;" % ddl]
    run, skipped = [], 0
    for n, want, cond, s in cases:
        row = spec(spec({}, base), s)
        words = set(re.findall(rb"`?([A-Za-z_][A-Za-z_0-9]*)`?", cond))
        if any(w.decode() in missing for w in words):
            skipped += 1
            continue
        vals = ", ".join(literal(t, row.get(name)) for name, t, _ in kept)
        sql.append("INSERT INTO rf VALUES (%d, %s);" % (n, vals))
        run.append((n, want, cond))
    for n, want, cond in run:
        # IF() reads the condition as WHERE does (a bare value as a truth)
        c = cond.decode()
        sql.append("SELECT %d, IF((%s) IS NULL, NULL, IF((%s), 1, 0)) FROM rf WHERE case_no = %d;"
                   % (n, c, c, n))
    out = client(args, "\n".join(sql) + "\n")
    got = {}
    for line in out.splitlines():
        k, _, v = line.partition("\t")
        got[int(k)] = v
    agree = differ = 0
    undecided = {}
    for n, want, cond in run:
        v = got.get(n, "?")
        server = {"1": "T", "0": "F", "NULL": "N"}.get(v, "?" + v)
        if want == "U":
            undecided[server] = undecided.get(server, 0) + 1
        elif server == want:
            agree += 1
        else:
            differ += 1
            print("line %d: %s — the evaluator says %s, %s says %s"
                  % (n, cond.decode(errors="replace"), want, version, v))
    print("%s: %d cases, %d agree, %d differ, %d left to the server (%s), %d skipped (%s)"
          % (version, len(run), agree, differ, sum(undecided.values()),
             ", ".join("%s %d" % kv for kv in sorted(undecided.items())), skipped,
             "columns " + " ".join(missing) if missing else "none"))
    client(args, "DROP DATABASE `%s`;" % db)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
