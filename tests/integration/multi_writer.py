#!/usr/bin/env python3
"""multi_writer.py — a seeded writer of one server's shop (t_multi_source.sh).

usage: multi_writer.py SEED RATE STOPFILE ORDERS

Prints SQL transactions on stdout, RATE a second, until STOPFILE exists; the
test pipes them into the `mariadb` client of one source's server. Every
statement is valid whatever rows exist (inserts upsert, updates and deletes
by key find a row or none), so a writer can be stopped and another started
on the same server at any time (a server restarted under it) without a
picture of the rows. Keys: orders 1..ORDERS, items 1..3*ORDERS, the same
ranges on every server (documents of two sources share keys: their ids
carry the source). Mix: order upserts and updates, deletes of an order with
its items, item upserts (moving an item between orders too), qty updates,
item deletes, multi-statement transactions. At the end a summary on stderr:
  writer: seed S, N transactions in T s
"""
import os
import random
import sys
import time

STATUSES = ["new", "paid", "sent", "done", "void"]


def main():
    seed, rate, stopfile, n_orders = (int(sys.argv[1]), float(sys.argv[2]), sys.argv[3],
                                      int(sys.argv[4]))
    rnd = random.Random(seed)
    out = sys.stdout
    t0 = time.monotonic()
    txns = 0

    def order_upsert():
        k = rnd.randint(1, n_orders)
        c = "cust-%d" % rnd.randint(1, 60)
        tot = "%d.%02d" % (rnd.randint(0, 9999), rnd.randint(0, 99))
        st = rnd.choice(STATUSES)
        return ("INSERT INTO orders (id, customer, total, status) VALUES (%d, '%s', %s, '%s') "
                "ON DUPLICATE KEY UPDATE customer = VALUES(customer), total = VALUES(total), "
                "status = VALUES(status);" % (k, c, tot, st))

    def order_update():
        return ("UPDATE orders SET total = total + %d.%02d, status = '%s' WHERE id = %d;"
                % (rnd.randint(0, 50), rnd.randint(0, 99), rnd.choice(STATUSES),
                   rnd.randint(1, n_orders)))

    def order_delete():
        k = rnd.randint(1, n_orders)
        return "DELETE FROM order_items WHERE order_id = %d; DELETE FROM orders WHERE id = %d;" % (k, k)

    def item_upsert():
        i, o = rnd.randint(1, 3 * n_orders), rnd.randint(1, n_orders)
        return ("INSERT INTO order_items (id, order_id, sku, qty) VALUES (%d, %d, 'sku-%d', %d) "
                "ON DUPLICATE KEY UPDATE order_id = VALUES(order_id), qty = VALUES(qty);"
                % (i, o, rnd.randint(1, 500), rnd.randint(1, 9)))

    def item_qty():
        return "UPDATE order_items SET qty = qty + 1 WHERE id = %d;" % rnd.randint(1, 3 * n_orders)

    def item_delete():
        return "DELETE FROM order_items WHERE id = %d;" % rnd.randint(1, 3 * n_orders)

    ops = [(order_upsert, 20), (order_update, 25), (order_delete, 6), (item_upsert, 20),
           (item_qty, 20), (item_delete, 9)]
    deck = [f for f, w in ops for _ in range(w)]
    period = 1.0 / rate
    nxt = time.monotonic()
    while not os.path.exists(stopfile):
        n = 1 if rnd.random() < 0.8 else rnd.randint(2, 5)
        out.write("BEGIN; " + " ".join(rnd.choice(deck)() for _ in range(n)) + " COMMIT;\n")
        out.flush()
        txns += 1
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
    sys.stderr.write("writer: seed %d, %d transactions in %.1f s\n"
                     % (seed, txns, time.monotonic() - t0))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # the server (and its client) went away under it
        sys.stderr.write("writer: its client went away\n")
