#!/usr/bin/env python3
"""soft_delete_writer.py — a seeded writer of a soft-delete application
(t_run_root_filter.sh): items flagged deleted and restored, drafted and
published, renamed (some names only the server can judge against a LIKE: a
non-ASCII letter under a case-insensitive collation), their parts and notes
changed whether or not the item is in, notes hidden and shown, shops renamed,
and items moved out and in within one transaction beside other changes.

usage: soft_delete_writer.py SEED TXNS FIRST_TXN ITEMS PARTS NOTES SHOPS

Prints TXNS transactions of SQL on stdout (numbered from FIRST_TXN, so
several runs over one database never reuse an id); the test pipes them into
the `mariadb` client. The initial rows are items 1..ITEMS, parts 1..PARTS
and notes 1..NOTES over shops 1..SHOPS; new rows take ids from 10^6 *
(FIRST_TXN + 1) on. A statement may match no row (a deleted item): that is
fine SQL and part of the mix. A summary goes to stderr:
  writer: seed S, N transactions (R rolled back); op=count ...
"""
import random
import sys

OPS = [("soft_delete", 10), ("restore", 10), ("status", 8), ("rename", 6), ("price", 5),
       ("item_ins", 5), ("item_del", 2), ("part_ins", 8), ("part_upd", 8), ("part_del", 4),
       ("note_ins", 5), ("note_upd", 5), ("note_hide", 6), ("note_move", 2), ("note_del", 2),
       ("shop_rename", 2), ("out_and_in", 5), ("out_with_children", 5)]

NAMES = ["item {n}", "Item {n}", "Hidden {n}", "hidden-{n}", "HIDDEN {n}", "Café {n}",
         "CAFÉ {n}", "hiddén {n}", "Ärger {n}", "draft {n}", "hid {n}"]


def main():
    seed, txns, first, n_items, n_parts, n_notes, n_shops = (int(a) for a in sys.argv[1:8])
    rnd = random.Random(seed)
    items = list(range(1, n_items + 1))
    parts = list(range(1, n_parts + 1))
    notes = list(range(1, n_notes + 1))
    next_id = 1000000 * (first + 1)
    counts = {k: 0 for k, _ in OPS}
    deck = [k for k, w in OPS for _ in range(w)]
    out = sys.stdout
    rolled = 0

    def new_id():
        nonlocal next_id
        next_id += 1
        return next_id

    def item():
        return rnd.choice(items)

    def name():
        return rnd.choice(NAMES).format(n=rnd.randint(1, 999))

    def status():
        return rnd.choice(["draft", "live", "live", "archived"])

    def op(kind, x=None):
        x = x if x is not None else item()
        counts[kind] += 1
        if kind == "soft_delete":
            return ["UPDATE items SET deleted_at = NOW(3) WHERE id = %d AND deleted_at IS NULL" % x]
        if kind == "restore":
            return ["UPDATE items SET deleted_at = NULL WHERE id = %d" % x]
        if kind == "status":
            return ["UPDATE items SET status = '%s' WHERE id = %d" % (status(), x)]
        if kind == "rename":
            return ["UPDATE items SET name = '%s' WHERE id = %d" % (name(), x)]
        if kind == "price":
            return ["UPDATE items SET price = price + 1.25 WHERE id = %d" % x]
        if kind == "item_ins":
            i = new_id()
            items.append(i)
            deleted = "NOW(3)" if rnd.random() < 0.25 else "NULL"
            return ["INSERT INTO items (id, shop_id, name, status, deleted_at, price) VALUES "
                    "(%d, %s, '%s', '%s', %s, %d.%02d)"
                    % (i, rnd.choice([str(rnd.randint(1, n_shops)), "NULL"]), name(), status(),
                       deleted, rnd.randint(1, 500), rnd.randint(0, 99))]
        if kind == "item_del":  # its parts and notes stay, orphans
            if x in items and len(items) > 10:
                items.remove(x)
            return ["DELETE FROM items WHERE id = %d" % x]
        if kind == "part_ins":
            p = new_id()
            parts.append(p)
            return ["INSERT INTO item_parts (id, item_id, label, n) VALUES (%d, %d, 'p%d', %d)"
                    % (p, x, p % 97, rnd.randint(0, 9))]
        if kind == "part_upd":
            return ["UPDATE item_parts SET n = n + 1, label = 'u%d' WHERE id = %d"
                    % (rnd.randint(0, 99), rnd.choice(parts))]
        if kind == "part_del":
            return ["DELETE FROM item_parts WHERE id = %d" % rnd.choice(parts)]
        if kind == "note_ins":
            n = new_id()
            notes.append(n)
            return ["INSERT INTO notes (id, item_id, body, hidden) VALUES (%d, %d, 'note %d', %d)"
                    % (n, x, n, rnd.random() < 0.3)]
        if kind == "note_upd":
            return ["UPDATE notes SET body = 'edited %d' WHERE id = %d"
                    % (rnd.randint(0, 999), rnd.choice(notes))]
        if kind == "note_hide":
            return ["UPDATE notes SET hidden = 1 - hidden WHERE id = %d" % rnd.choice(notes)]
        if kind == "note_move":
            return ["UPDATE notes SET item_id = %d WHERE id = %d" % (x, rnd.choice(notes))]
        if kind == "note_del":
            return ["DELETE FROM notes WHERE id = %d" % rnd.choice(notes)]
        if kind == "shop_rename":
            return ["UPDATE shops SET name = 'shop %d' WHERE id = %d"
                    % (rnd.randint(0, 9999), rnd.randint(1, n_shops))]
        if kind == "out_and_in":  # out, changed, back in: one transaction, in at its end
            return (op("soft_delete", x) + op("part_ins", x) + op("price", item()) +
                    op("restore", x))
        # out, with children changed under it and another item changed beside
        return (op("soft_delete", x) + op("part_ins", x) + op("note_ins", x) +
                op("part_upd") + op("rename", item()))

    for t in range(txns):
        stmts = []
        for _ in range(rnd.choice([1, 1, 2, 3, 4])):
            stmts += op(rnd.choice(deck))
        end = "COMMIT"
        if rnd.random() < 0.05:
            end = "ROLLBACK"
            rolled += 1
        out.write("BEGIN;\n%s;\n%s;\n" % (";\n".join(stmts), end))
    sys.stderr.write("writer: seed %d, %d transactions (%d rolled back); %s\n"
                     % (seed, txns, rolled, " ".join("%s=%d" % kv for kv in sorted(counts.items()))))


if __name__ == "__main__":
    main()
