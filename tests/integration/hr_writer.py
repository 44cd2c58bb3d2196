#!/usr/bin/env python3
"""hr_writer.py — a seeded writer of the HR schema (t_reindex_writes.sh,
t_reindex_resurrect.sh).

usage: hr_writer.py SEED RATE STOPFILE EMPLOYEES DEPARTMENTS [HOT_AFTER_FILE]

Prints SQL transactions on stdout, RATE a second, until STOPFILE exists; the
test pipes them into the `mariadb` client. It keeps its own picture of the
rows (it is their only writer), so every statement hits a row that exists or
an id that is free. The mix is the one of the failure it reproduces (a
reindex under writes: deletes, renames of the joined
department, key changes, moves, delete + re-insert of one id, nested skill
inserts, updates and deletes, multi-row transactions, one hot row). While
HOT_AFTER_FILE exists, every 50 ms an employee is renamed and one of its
skills inserted a second later, and now and then a department renamed and
one of its employees deleted a second later (the switch's window). Two
environment variables shape that window: HR_HOT_DEPT_SHARE (default 0.1), the
share of those 50 ms ticks that rename a department, and HR_HOT_DEPT_DELETES
(default 1), how many of its employees are deleted a second later. At the end
a summary line goes to stderr:
  writer: seed S, N transactions, ~R row changes in T s; op=count ...
"""
import random
import sys
import time
import os

OPS = [("update", 22), ("hot", 20), ("insert", 14), ("skill_upd", 9), ("skill_ins", 8),
       ("delete", 7), ("skill_del", 5), ("reinsert", 5), ("move_dept", 4), ("multi", 4),
       ("dept_upd", 1), ("keychange", 1)]


def main():
    seed, rate, stopfile, n_emp, n_dept = (int(sys.argv[1]), float(sys.argv[2]), sys.argv[3],
                                           int(sys.argv[4]), int(sys.argv[5]))
    hotfile = sys.argv[6] if len(sys.argv) > 6 else None
    dept_share = float(os.environ.get("HR_HOT_DEPT_SHARE", "0.1"))
    dept_deletes = int(os.environ.get("HR_HOT_DEPT_DELETES", "1"))
    rnd = random.Random(seed)
    emps = {i: [2 * i - 1, 2 * i] for i in range(1, n_emp + 1)}  # id -> skill ids
    live = list(emps)
    next_emp = n_emp + 1
    next_skill = 2 * n_emp + 1
    hot = rnd.sample(live, 5)
    counts = {k: 0 for k, _ in OPS}
    deck = [k for k, w in OPS for _ in range(w)]
    txns = rows = 0
    t0 = time.monotonic()
    out = sys.stdout

    def pick():
        return live[rnd.randrange(len(live))]

    def drop(e):
        i = live.index(e)
        live[i] = live[-1]
        live.pop()
        del emps[e]

    def emp_insert(e, dept=None):
        nonlocal next_skill
        d = dept or rnd.randint(1, n_dept)
        sk = [next_skill, next_skill + 1]
        next_skill += 2
        emps[e] = sk
        live.append(e)
        return ("INSERT INTO employee VALUES (%d, 'emp %d', %d.%02d, '2016-05-0%d 10:00:00', 1, "
                "JSON_OBJECT('n', %d, 'f', '%d.5000', 'tags', JSON_ARRAY('x')), %d);"
                "INSERT INTO skill VALUES (%d, %d, 'c', 2), (%d, %d, 'go', 4);"
                % (e, e, rnd.randint(1000, 99999), rnd.randint(0, 99), rnd.randint(1, 9), e,
                   rnd.randint(0, 9), d, sk[0], e, sk[1], e))

    def one(op):
        nonlocal next_emp, next_skill
        if op in ("update", "hot"):
            e = hot[rnd.randrange(len(hot))] if op == "hot" else pick()
            if e not in emps:
                e = pick()
            return ("UPDATE employee SET name = 'emp %d r%d', salary = salary + 1 WHERE id = %d;"
                    % (e, rnd.randint(0, 10 ** 6), e)), 1
        if op == "insert":
            e = next_emp
            next_emp += 1
            return emp_insert(e), 3
        if op == "delete":
            e = pick()
            if e in hot:
                return one("update")
            drop(e)
            return ("DELETE FROM skill WHERE employee_id = %d; DELETE FROM employee WHERE id = %d;"
                    % (e, e)), 3
        if op == "reinsert":
            e = pick()
            if e in hot:
                return one("update")
            drop(e)
            return ("DELETE FROM skill WHERE employee_id = %d; DELETE FROM employee WHERE id = %d;"
                    % (e, e)) + emp_insert(e), 6
        if op == "keychange":
            e = pick()
            if e in hot:
                return one("update")
            n = next_emp
            next_emp += 1
            sk = emps[e]
            drop(e)
            emps[n] = sk
            live.append(n)
            return ("UPDATE employee SET id = %d WHERE id = %d; UPDATE skill SET employee_id = %d "
                    "WHERE employee_id = %d;" % (n, e, n, e)), 1 + len(sk)
        if op == "move_dept":
            e = pick()
            return ("UPDATE employee SET department_id = %d WHERE id = %d;"
                    % (rnd.randint(1, n_dept), e)), 1
        if op == "dept_upd":
            d = rnd.randint(1, n_dept)
            return ("UPDATE department SET name = 'dept Back\\\\slash %d' WHERE id = %d;"
                    % (rnd.randint(0, 10 ** 5), d)), 1
        if op == "skill_ins":
            e = pick()
            s = next_skill
            next_skill += 1
            emps[e].append(s)
            return ("INSERT INTO skill VALUES (%d, %d, 'rust', %d);" % (s, e, rnd.randint(1, 5))), 1
        if op == "skill_upd":
            e = pick()
            if not emps[e]:
                return one("skill_ins")
            s = emps[e][rnd.randrange(len(emps[e]))]
            return "UPDATE skill SET level = %d WHERE id = %d;" % (rnd.randint(1, 5), s), 1
        if op == "skill_del":
            e = pick()
            if not emps[e]:
                return one("skill_ins")
            s = emps[e].pop(rnd.randrange(len(emps[e])))
            return "DELETE FROM skill WHERE id = %d;" % s, 1
        # multi: several of the above in one transaction
        sql, n = "", 0
        for _ in range(rnd.randint(2, 5)):
            op = deck[rnd.randrange(len(deck))]
            s, k = one("update" if op == "multi" else op)
            sql += s
            n += k
        return sql, n

    interval = 1.0 / rate
    due = time.monotonic()
    hot_due = 0.0
    later = []  # (due, sql): the skill inserted a second after its employee's rename
    while not os.path.exists(stopfile):
        now = time.monotonic()
        if hotfile and os.path.exists(hotfile) and now >= hot_due:
            # the switch's window: a rename, and a skill of that employee a second later
            e = pick()
            out.write("UPDATE employee SET name = 'emp %d hot%d' WHERE id = %d;\n"
                      % (e, rnd.randint(0, 10 ** 6), e))
            later.append((now + 1.0, e))
            if rnd.random() < dept_share:
                # and a department renamed (every document of it rewritten)
                # with one of its employees deleted a second later
                d = rnd.randint(1, n_dept)
                out.write("UPDATE department SET name = 'dept hot %d' WHERE id = %d;\n"
                          % (rnd.randint(0, 10 ** 5), d))
                later.append((now + 1.0, -d))
                txns += 1
                rows += 1
            hot_due = now + 0.05
            txns += 1
            rows += 1
        while later and later[0][0] <= now:
            e = later.pop(0)[1]
            if e < 0:  # the renamed department's employee to delete
                out.write("DELETE FROM employee WHERE department_id = %d AND id NOT IN (%s) "
                          "ORDER BY id DESC LIMIT %d;\n"
                          % (-e, ",".join(map(str, hot)), dept_deletes))
                # (the writer's picture: whichever row that was is gone; its
                # id is not picked again, as ids only grow or are taken from
                # the live list, which may still name it: harmless, the
                # statements on a missing row change nothing)
                txns += 1
                rows += 1
                continue
            if e in emps:  # deleted or re-keyed meanwhile: nothing to add to
                s = next_skill
                next_skill += 1
                emps[e].append(s)
                out.write("INSERT INTO skill VALUES (%d, %d, 'late', 1);\n" % (s, e))
                txns += 1
                rows += 1
        op = deck[rnd.randrange(len(deck))]
        sql, n = one(op)
        counts[op] += 1
        out.write("START TRANSACTION;" + sql + "COMMIT;\n")
        txns += 1
        rows += n
        if txns % 20 == 0:
            out.flush()
        due += interval
        rest = due - time.monotonic()
        if rest > 0:
            out.flush()
            time.sleep(rest)
        elif rest < -1:
            due = time.monotonic()
    out.flush()
    secs = time.monotonic() - t0
    sys.stderr.write("writer: seed %d, %d transactions, ~%d row changes in %.1f s; %s\n"
                     % (seed, txns, rows, secs,
                        " ".join("%s=%d" % (k, v) for k, v in sorted(counts.items()))))


if __name__ == "__main__":
    main()
