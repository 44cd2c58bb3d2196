#!/usr/bin/env python3
"""osc_writer.py — a seeded writer of the library schema (osc_lib.sh).

usage: osc_writer.py init SEED BOOKS
       osc_writer.py run SEED BOOKS RATE CTL_DIR

The library: book (root) -> copy (one-to-many) -> loan (one-to-many below a
copy), book -> publisher (one-to-one through book.publisher_id), book <->
genre through the link table book_genre.

`init` prints the first rows (multi-row INSERTs). `run` builds the same rows
in memory from the same seed, then prints SQL transactions on stdout, RATE a
second, for the `mariadb` client (run with --force: a statement that meets a
table that an online schema change tool has renamed away for a moment fails
alone, and the writer goes on). It keeps its own picture of the rows (it is
their only writer), so each statement names rows that exist, ids that are
free, or harmless no-ops. The mix: book inserts (with copies, loans, links),
updates, deletes (with their children, or leaving them orphaned), primary-key
changes of a book (its children follow) and of a copy (its loans follow),
publisher moves, copy moves between books, loan moves between copies, link
inserts and deletes, renames of a publisher or a genre (every book that
embeds it changes), multi-statement transactions.

Control files in CTL_DIR:
  stop   the writer exits (after the transaction it is at)
  pause  holds a token: the writer prints `SELECT 'paused TOKEN';` once (so the
         client's output says when every earlier transaction has run) and
         waits until the file is gone
At the end a summary line goes to stderr:
  writer: seed S, N transactions in T s; op=count ...
"""
import os
import random
import sys
import time

PUBLISHERS = 20
# every INSERT names its columns: the tools add columns to the tables
COLUMNS = {"book": "(id, title, isbn, publisher_id, pages, price, updated_at)",
           "copy": "(id, book_id, barcode, shelf)", "loan": "(id, copy_id, member, due)",
           "book_genre": "(book_id, genre_id)"}
GENRES = 12
OPS = [("book_upd", 18), ("copy_upd", 10), ("loan_ins", 9), ("loan_upd", 7), ("book_ins", 7),
       ("copy_ins", 7), ("link_ins", 6), ("link_del", 5), ("loan_del", 5), ("copy_move", 4),
       ("loan_move", 4), ("book_del", 3), ("copy_del", 3), ("pub_move", 3), ("multi", 3),
       ("book_key", 2), ("copy_key", 2), ("pub_upd", 1), ("genre_upd", 1)]


def q(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


class Library:
    """The writer's picture of the rows."""

    def __init__(self, rnd, n_books):
        self.rnd = rnd
        self.books = {}   # id -> set of copy ids
        self.copies = {}  # id -> [book id, set of loan ids]
        self.loans = {}   # id -> copy id
        self.links = set()  # (book id, genre id)
        self.next_book = 1
        self.next_copy = 1
        self.next_loan = 1
        self.init_sql = []
        rows_b, rows_c, rows_l, rows_g = [], [], [], []
        for _ in range(n_books):
            b, cs, ls, gs = self.new_book()
            rows_b.append(b)
            rows_c += cs
            rows_l += ls
            rows_g += gs
        self.init_sql.append("INSERT INTO publisher (id, name, country) VALUES %s;" % ",".join(
            "(%d, %s, %s)" % (p, q("publisher %d" % p), q(["de", "fr", "us", "jp"][p % 4]))
            for p in range(1, PUBLISHERS + 1)))
        self.init_sql.append("INSERT INTO genre (id, name) VALUES %s;" % ",".join(
            "(%d, %s)" % (g, q("genre %d" % g)) for g in range(1, GENRES + 1)))
        for table, rows in (("book", rows_b), ("copy", rows_c), ("loan", rows_l),
                            ("book_genre", rows_g)):
            for i in range(0, len(rows), 500):
                self.init_sql.append("INSERT INTO %s %s VALUES %s;" % (table, COLUMNS[table], ",".join(rows[i:i + 500])))

    # ---- row texts (and the picture updated)
    def book_row(self, b):
        r = self.rnd
        pub = "NULL" if r.random() < 0.05 else str(r.randint(1, PUBLISHERS + 1))  # +1: a dangling one
        return "(%d, %s, %s, %s, %d, %d.%02d, '2024-%02d-%02d %02d:%02d:%02d.%03d')" % (
            b, q("book %d it's r%d" % (b, r.randint(0, 10 ** 6))), q("978-%010d" % r.randint(0, 10 ** 10 - 1)),
            pub, r.randint(40, 1200), r.randint(1, 199), r.randint(0, 99), r.randint(1, 12),
            r.randint(1, 28), r.randint(0, 23), r.randint(0, 59), r.randint(0, 59), r.randint(0, 999))

    def copy_row(self, c, b):
        self.copies[c] = [b, set()]
        if b in self.books:
            self.books[b].add(c)
        return "(%d, %d, %s, %s)" % (c, b, q("BC-%08d" % c), q("shelf %d" % self.rnd.randint(1, 60)))

    def loan_row(self, l, c):
        self.loans[l] = c
        if c in self.copies:
            self.copies[c][1].add(l)
        return "(%d, %d, %s, '2025-%02d-%02d')" % (l, c, q("member %d" % self.rnd.randint(1, 500)),
                                                   self.rnd.randint(1, 12), self.rnd.randint(1, 28))

    def new_book(self):
        b = self.next_book
        self.next_book += 1
        self.books[b] = set()
        cs, ls, gs = [], [], []
        for _ in range(self.rnd.randint(0, 4)):
            c = self.next_copy
            self.next_copy += 1
            cs.append(self.copy_row(c, b))
            for _ in range(self.rnd.randint(0, 2)):
                ln = self.next_loan
                self.next_loan += 1
                ls.append(self.loan_row(ln, c))
        for g in self.rnd.sample(range(1, GENRES + 1), self.rnd.randint(0, 3)):
            self.links.add((b, g))
            gs.append("(%d, %d)" % (b, g))
        return self.book_row(b), cs, ls, gs

    # ---- picks
    def pick(self, d):
        # (dicts keep insertion order: the same seed picks the same rows)
        keys = list(d)
        return keys[self.rnd.randrange(len(keys))] if keys else None

    def drop_copy(self, c):
        b, loans = self.copies.pop(c)
        for ln in loans:
            self.loans.pop(ln, None)
        if b in self.books:
            self.books[b].discard(c)

    # ---- operations: (sql, kind)
    def op(self, kind):
        r = self.rnd
        if kind == "book_ins":
            b, cs, ls, gs = self.new_book()
            sql = "INSERT INTO book %s VALUES %s;" % (COLUMNS["book"], b)
            if cs:
                sql += "INSERT INTO copy %s VALUES %s;" % (COLUMNS["copy"], ",".join(cs))
            if ls:
                sql += "INSERT INTO loan %s VALUES %s;" % (COLUMNS["loan"], ",".join(ls))
            if gs:
                sql += "INSERT INTO book_genre %s VALUES %s;" % (COLUMNS["book_genre"], ",".join(gs))
            return sql
        b = self.pick(self.books)
        if b is None:
            return self.op("book_ins")
        if kind == "book_upd":
            return ("UPDATE book SET title = %s, pages = pages + 1, price = %d.%02d, "
                    "updated_at = '2025-%02d-%02d 10:00:00.%03d' WHERE id = %d;"
                    % (q("book %d upd r%d" % (b, r.randint(0, 10 ** 6))), r.randint(1, 199),
                       r.randint(0, 99), r.randint(1, 12), r.randint(1, 28), r.randint(0, 999), b))
        if kind == "pub_move":
            return "UPDATE book SET publisher_id = %s WHERE id = %d;" % (
                "NULL" if r.random() < 0.1 else str(r.randint(1, PUBLISHERS)), b)
        if kind == "pub_upd":
            p = r.randint(1, PUBLISHERS)
            return "UPDATE publisher SET name = %s WHERE id = %d;" % (q("publisher %d r%d" % (p, r.randint(0, 10 ** 6))), p)
        if kind == "genre_upd":
            g = r.randint(1, GENRES)
            return "UPDATE genre SET name = %s WHERE id = %d;" % (q("genre %d r%d" % (g, r.randint(0, 10 ** 6))), g)
        if kind == "book_del":
            copies = self.books.pop(b)
            orphan = r.random() < 0.2  # the children stay (their documents go with the book's)
            sql = "DELETE FROM book WHERE id = %d;" % b
            gs = [g for (bb, g) in self.links if bb == b]
            if not orphan:
                cl = sorted(copies)
                for c in cl:
                    self.drop_copy(c)
                if cl:
                    ids = ",".join(map(str, cl))
                    sql += "DELETE FROM loan WHERE copy_id IN (%s);DELETE FROM copy WHERE id IN (%s);" % (ids, ids)
                for g in gs:
                    self.links.discard((b, g))
                sql += "DELETE FROM book_genre WHERE book_id = %d;" % b
            else:
                for c in copies:  # orphans: no book to hold them any more
                    self.copies[c][0] = -b
                for g in gs:
                    self.links.discard((b, g))
                    self.links.add((-b, g))
            return sql
        if kind == "book_key":
            n = self.next_book
            self.next_book += 1
            copies = self.books.pop(b)
            self.books[n] = copies
            for c in copies:
                self.copies[c][0] = n
            for g in [g for (bb, g) in self.links if bb == b]:
                self.links.discard((b, g))
                self.links.add((n, g))
            return ("UPDATE book SET id = %d WHERE id = %d;UPDATE copy SET book_id = %d WHERE book_id = %d;"
                    "UPDATE book_genre SET book_id = %d WHERE book_id = %d;" % (n, b, n, b, n, b))
        if kind == "copy_ins":
            c = self.next_copy
            self.next_copy += 1
            return "INSERT INTO copy %s VALUES %s;" % (COLUMNS["copy"], self.copy_row(c, b))
        if kind == "link_ins":
            free = [g for g in range(1, GENRES + 1) if (b, g) not in self.links]
            if not free:
                return self.op("book_upd")
            g = free[r.randrange(len(free))]
            self.links.add((b, g))
            return "INSERT INTO book_genre %s VALUES (%d, %d);" % (COLUMNS["book_genre"], b, g)
        if kind == "link_del":
            gs = [g for (bb, g) in self.links if bb == b]
            if not gs:
                return self.op("link_ins")
            g = gs[r.randrange(len(gs))]
            self.links.discard((b, g))
            return "DELETE FROM book_genre WHERE book_id = %d AND genre_id = %d;" % (b, g)
        c = self.pick(self.copies)
        if c is None:
            return self.op("copy_ins")
        if kind == "copy_upd":
            return "UPDATE copy SET shelf = %s WHERE id = %d;" % (q("shelf %d" % r.randint(1, 60)), c)
        if kind == "copy_move":
            old = self.copies[c][0]
            if old in self.books:
                self.books[old].discard(c)
            self.copies[c][0] = b
            self.books[b].add(c)
            return "UPDATE copy SET book_id = %d WHERE id = %d;" % (b, c)
        if kind == "copy_del":
            self.drop_copy(c)
            return "DELETE FROM loan WHERE copy_id = %d;DELETE FROM copy WHERE id = %d;" % (c, c)
        if kind == "copy_key":
            n = self.next_copy
            self.next_copy += 1
            bk, loans = self.copies.pop(c)
            self.copies[n] = [bk, loans]
            if bk in self.books:
                self.books[bk].discard(c)
                self.books[bk].add(n)
            for ln in loans:
                self.loans[ln] = n
            return ("UPDATE copy SET id = %d WHERE id = %d;UPDATE loan SET copy_id = %d WHERE copy_id = %d;"
                    % (n, c, n, c))
        if kind == "loan_ins":
            ln = self.next_loan
            self.next_loan += 1
            return "INSERT INTO loan %s VALUES %s;" % (COLUMNS["loan"], self.loan_row(ln, c))
        ln = self.pick(self.loans)
        if ln is None:
            return self.op("loan_ins")
        if kind == "loan_upd":
            return "UPDATE loan SET due = '2026-%02d-%02d', member = %s WHERE id = %d;" % (
                r.randint(1, 12), r.randint(1, 28), q("member %d" % r.randint(1, 500)), ln)
        if kind == "loan_move":
            old = self.loans[ln]
            if old in self.copies:
                self.copies[old][1].discard(ln)
            self.loans[ln] = c
            self.copies[c][1].add(ln)
            return "UPDATE loan SET copy_id = %d WHERE id = %d;" % (c, ln)
        if kind == "loan_del":
            c0 = self.loans.pop(ln)
            if c0 in self.copies:
                self.copies[c0][1].discard(ln)
            return "DELETE FROM loan WHERE id = %d;" % ln
        raise ValueError(kind)


def main():
    mode, seed, n_books = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lib = Library(random.Random(seed), n_books)
    out = sys.stdout
    if mode == "init":
        out.write("\n".join(lib.init_sql) + "\n")
        return 0
    rate, ctl = float(sys.argv[4]), sys.argv[5]
    rnd = random.Random(seed * 7919 + 1)
    lib.rnd = rnd
    deck = [k for k, w in OPS for _ in range(w)]
    counts = {k: 0 for k, _ in OPS}
    txns = 0
    t0 = time.monotonic()
    interval = 1.0 / rate
    due = time.monotonic()
    stopf, pausef = os.path.join(ctl, "stop"), os.path.join(ctl, "pause")
    while not os.path.exists(stopf):
        if os.path.exists(pausef):
            try:
                with open(pausef) as f:
                    token = f.read().strip()
            except OSError:
                continue
            out.write("SELECT 'paused %s';\n" % token)
            out.flush()
            while os.path.exists(pausef) and not os.path.exists(stopf):
                time.sleep(0.05)
            due = time.monotonic()
            continue
        kind = deck[rnd.randrange(len(deck))]
        counts[kind] += 1
        if kind == "multi":
            sql = "".join(lib.op(k) for k in (deck[rnd.randrange(len(deck))] for _ in range(rnd.randint(2, 5)))
                          if k != "multi")
        else:
            sql = lib.op(kind)
        out.write("START TRANSACTION;" + sql + "COMMIT;\n")
        txns += 1
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
    sys.stderr.write("writer: seed %d, %d transactions in %.1f s; %s\n"
                     % (seed, txns, time.monotonic() - t0,
                        " ".join("%s=%d" % (k, v) for k, v in sorted(counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
