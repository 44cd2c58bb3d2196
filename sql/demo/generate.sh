#!/usr/bin/env bash
# sql/demo/generate.sh — (re)create the demo e-commerce database and fill it
# with deterministic data at any size (1k .. 10M products).
#
# Owns: the demo data recipe. Rows are generated inside MariaDB with
# INSERT ... SELECT from the Sequence engine (seq_LO_to_HI), in chunks of
# --chunk products, every value derived from CRC32 of the row id — so the same
# --products N always yields the same rows, independent of the chunk size.
# Per product on average: 3 skus (1..5), 1.25 barcodes per sku, 2 tags (0..4),
# 1.5 reviews (0..3), 0.75 replies per review (0..2).
#
# usage: generate.sh --products N [--db shop] [--chunk 100000] [--binlog]
#                    [--host H] [--port P] [--socket S] [--user U] [--password PW]
#   The database is dropped and recreated from sql/demo/schema.sql.
#   --binlog   write the generated rows to the binlog too (default: not logged,
#              sql_log_bin=0, since an initial load is what a reindex reads)
#   Connection defaults: the harness env ($SEARCHSYNC_HARNESS_DIR/env.sh, as
#   root), else $MYSQL_HOST/$MYSQL_PORT/$MYSQL_SOCKET, else the local socket.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
N=""
DB=shop
CHUNK=100000
BINLOG=0
if [ -z "${MYSQL_PORT:-}" ] && [ -n "${SEARCHSYNC_HARNESS_DIR:-}" ]; then
    for f in "$SEARCHSYNC_HARNESS_DIR/env.sh" "$SEARCHSYNC_HARNESS_DIR/mariadb.env"; do
        # shellcheck disable=SC1090
        [ -f "$f" ] && { . "$f"; break; }
    done
fi
HOST="${MYSQL_HOST:-}"
PORT="${MYSQL_PORT:-}"
SOCKET="${MYSQL_SOCKET:-}"
USER_="${MYSQL_ROOT_USER:-root}"
PASS=""

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --products) N="$2"; shift 2 ;;
        --db) DB="$2"; shift 2 ;;
        --chunk) CHUNK="$2"; shift 2 ;;
        --binlog) BINLOG=1; shift ;;
        --host) HOST="$2"; shift 2 ;;
        --port) PORT="$2"; shift 2 ;;
        --socket) SOCKET="$2"; shift 2 ;;
        --user) USER_="$2"; shift 2 ;;
        --password) PASS="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "unknown argument: $1" >&2; usage ;;
    esac
done
case "$N" in ''|*[!0-9]*) echo "--products N is required (a positive integer)" >&2; usage ;; esac
case "$CHUNK" in ''|*[!0-9]*|0) echo "--chunk must be a positive integer" >&2; exit 2 ;; esac
case "$DB" in *[!A-Za-z0-9_]*|'') echo "--db: letters, digits and _ only" >&2; exit 2 ;; esac
[ "$N" -ge 1 ] || { echo "--products must be >= 1" >&2; exit 2; }

conn=(--no-defaults -u "$USER_" --default-character-set=utf8mb4)
[ -n "$PASS" ] && conn+=(-p"$PASS")
if [ -n "$PORT" ]; then conn+=(-h "${HOST:-127.0.0.1}" -P "$PORT")
elif [ -n "$SOCKET" ]; then conn+=(--socket="$SOCKET")
elif [ -n "$HOST" ]; then conn+=(-h "$HOST"); fi
sql() { mariadb "${conn[@]}" --batch --skip-column-names "$@"; }

# Reference table sizes grow slowly with N.
NB=$(( N / 200 )); [ "$NB" -lt 20 ] && NB=20; [ "$NB" -gt 5000 ] && NB=5000     # brands
NC=$(( N / 500 )); [ "$NC" -lt 20 ] && NC=20; [ "$NC" -gt 2000 ] && NC=2000     # categories
NT=500                                                                          # tags
NW=20                                                                           # warehouses

t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# 1. schema (into $DB)
sql -e "DROP DATABASE IF EXISTS \`$DB\`"
sed -e '/^CREATE DATABASE IF NOT EXISTS shop /d' -e '/^USE shop;/d' "$here/schema.sql" |
    { echo "CREATE DATABASE \`$DB\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci; USE \`$DB\`;"; cat; } |
    sql

# 2. data: one session, one SQL stream
gen_sql() {
    cat <<SQL
SET SESSION sql_log_bin = $BINLOG;
SET SESSION time_zone = '+00:00';
SET SESSION unique_checks = 0;
SET SESSION foreign_key_checks = 0;
SET SESSION group_concat_max_len = 65536;
SET @t0 = UNIX_TIMESTAMP(NOW(6));

INSERT INTO brands (id, name, country, founded, website, updated_at)
SELECT seq,
  CONCAT(ELT(1 + h % 20, 'Nord', 'Alto', 'Vela', 'Kestrel', 'Müller', 'Čapek', 'Åsa', 'Sol', 'Luna', 'Orca',
                         'Tundra', 'Bravo', 'Zephyr', '東京', 'Ríos', 'Pioneer', 'Maple', 'Atlas', 'Fjord', 'Ember'),
         ' ', ELT(1 + (h DIV 20) % 6, 'Works', 'Labs', '& Co', 'Outfitters', 'Gear', 'Design'), ' ', seq),
  ELT(1 + (h DIV 120) % 8, 'DE', 'US', 'FR', 'JP', 'SE', 'IT', 'CN', 'BR'),
  IF(h % 7 = 0, NULL, 1950 + (h DIV 7) % 75),
  IF(h % 5 = 0, NULL, CONCAT('https://brand', seq, '.example.com')),
  TIMESTAMP('2024-01-01') + INTERVAL (h % 31536000) SECOND
FROM (SELECT seq, CRC32(CONCAT('b', seq)) AS h FROM seq_1_to_$NB) g;

INSERT INTO categories (id, parent_id, name, slug, updated_at)
SELECT seq,
  IF(seq <= GREATEST(1, $NC DIV 10), NULL, 1 + h % GREATEST(1, $NC DIV 10)),
  CONCAT(ELT(1 + h % 16, 'Bags', 'Shoes', 'Jackets', 'Lighting', 'Kitchen', 'Audio', 'Watches', 'Furniture',
                         'Office', 'Drinkware', 'Camping', 'Cameras', 'Appliances', 'Accessories', 'Wallets', 'Speakers'), ' ', seq),
  CONCAT('cat-', seq),
  TIMESTAMP('2024-01-01') + INTERVAL (h % 31536000) SECOND
FROM (SELECT seq, CRC32(CONCAT('c', seq)) AS h FROM seq_1_to_$NC) g;

INSERT INTO tags (id, name)
SELECT seq, CONCAT(ELT(1 + h % 12, 'sale', 'new', 'eco', 'bestseller', 'limited', 'gift', 'premium', 'outdoor',
                                  'kids', 'vegan', 'handmade', 'refurbished'), '-', seq)
FROM (SELECT seq, CRC32(CONCAT('t', seq)) AS h FROM seq_1_to_$NT) g;

INSERT INTO warehouses (id, code, name, city, country)
SELECT seq, CONCAT('WH', LPAD(seq, 3, '0')),
  CONCAT(ELT(1 + (seq - 1) % 10, 'Berlin', 'Newark', 'Lyon', 'Osaka', 'Malmö', 'Milano', 'Shenzhen', 'São Paulo', 'Leeds', 'Austin'), ' DC ', seq),
  ELT(1 + (seq - 1) % 10, 'Berlin', 'Newark', 'Lyon', 'Osaka', 'Malmö', 'Milano', 'Shenzhen', 'São Paulo', 'Leeds', 'Austin'),
  ELT(1 + (seq - 1) % 10, 'DE', 'US', 'FR', 'JP', 'SE', 'IT', 'CN', 'BR', 'GB', 'US')
FROM seq_1_to_$NW;
SELECT CONCAT('reference tables: ', $NB, ' brands, ', $NC, ' categories, ', $NT, ' tags, ', $NW, ' warehouses');
SQL
    local lo=1 hi
    while [ "$lo" -le "$N" ]; do
        hi=$(( lo + CHUNK - 1 )); [ "$hi" -gt "$N" ] && hi=$N
        cat <<SQL
INSERT INTO products (id, brand_id, category_id, name, description, price, status, created_at, updated_at, weight, attrs)
SELECT p,
  1 + h1 % $NB,
  IF(h2 % 50 = 0, NULL, 1 + h2 % $NC),
  CONCAT(ELT(1 + h1 % 12, 'Classic', 'Urban', 'Eco', 'Pro', 'Ultra', 'Smart', 'Vintage', 'Compact', 'Deluxe', 'Sport', 'Travel', 'Home'), ' ',
         ELT(1 + h2 % 10, 'Red', 'Blue', 'Green', 'Black', 'White', 'Silver', 'Golden', 'Natural', 'Midnight', 'Coral'), ' ',
         ELT(1 + h3 % 16, 'Backpack', 'Sneaker', 'Jacket', 'Lamp', 'Kettle', 'Headphones', 'Watch', 'Chair', 'Desk', 'Bottle',
                          'Tent', 'Camera', 'Blender', 'Scarf', 'Wallet', 'Speaker'), ' ', p),
  IF(h3 % 40 = 0, NULL, CONCAT_WS(' ',
     ELT(1 + (h1 DIV 12) % 6, 'A durable', 'A lightweight', 'An elegant', 'A versatile', 'A compact', 'A rugged'),
     LOWER(ELT(1 + h3 % 16, 'Backpack', 'Sneaker', 'Jacket', 'Lamp', 'Kettle', 'Headphones', 'Watch', 'Chair', 'Desk', 'Bottle',
                            'Tent', 'Camera', 'Blender', 'Scarf', 'Wallet', 'Speaker')),
     'made from', ELT(1 + (h2 DIV 10) % 8, 'recycled polyester', 'full-grain leather', 'organic cotton', 'aluminium',
                                            'bamboo', 'stainless steel', 'merino wool', 'walnut wood'),
     'for', ELT(1 + (h3 DIV 16) % 6, 'everyday use.', 'the outdoors.', 'the office.', 'travel.', 'kids.', 'professionals.'),
     ELT(1 + (h1 DIV 72) % 5, 'Water resistant and easy to clean.', 'Backed by a two-year warranty.',
                              'Designed in Europe, assembled with care.', 'Ships in plastic-free packaging.',
                              'Füße, façade, naïve: UTF-8 text ✓.'),
     CONCAT('Model ', LPAD(h3 % 100000, 5, '0'), '.'))),
  (h1 % 100000) / 100 + 0.99,
  CASE h2 % 20 WHEN 0 THEN 'draft' WHEN 1 THEN 'discontinued' ELSE 'active' END,
  TIMESTAMP('2020-01-01') + INTERVAL (h3 % 126230400) SECOND + INTERVAL (h1 % 1000) * 1000 MICROSECOND,
  TIMESTAMP('2024-01-01') + INTERVAL (h2 % 31536000) SECOND + INTERVAL (h3 % 1000000) MICROSECOND,
  IF(h2 % 25 = 0, NULL, (h3 % 50000) / 1000),
  IF(h1 % 30 = 0, NULL, JSON_OBJECT(
     'material', ELT(1 + (h2 DIV 10) % 8, 'polyester', 'leather', 'cotton', 'aluminium', 'bamboo', 'steel', 'wool', 'wood'),
     'origin', ELT(1 + h1 % 6, 'CN', 'DE', 'US', 'VN', 'IT', 'PT'),
     'dims', JSON_OBJECT('w', h1 % 100, 'h', h2 % 100, 'd', h3 % 50),
     'eco', JSON_EXTRACT(IF(h3 % 3 = 0, 'true', 'false'), '$'),
     'features', JSON_ARRAY(ELT(1 + h2 % 4, 'waterproof', 'foldable', 'wireless', 'handmade'),
                            ELT(1 + h3 % 4, 'lightweight', 'recyclable', 'adjustable', 'washable'))))
FROM (SELECT seq AS p, CRC32(CONCAT('p', seq)) AS h1, CRC32(CONCAT('q', seq)) AS h2, CRC32(CONCAT('r', seq)) AS h3
      FROM seq_${lo}_to_${hi}) g;

INSERT INTO skus (id, product_id, sku_code, color, size, price, stock, warehouse_id, updated_at)
SELECT (g.p - 1) * 5 + s.seq, g.p, CONCAT('SKU-', LPAD(g.p, 10, '0'), '-', s.seq),
  ELT(1 + (g.h + s.seq) % 8, 'red', 'blue', 'green', 'black', 'white', 'grey', 'navy', 'beige'),
  ELT(1 + (g.h DIV 8 + s.seq) % 6, 'XS', 'S', 'M', 'L', 'XL', 'XXL'),
  ((g.h DIV 5) % 100000) / 100 + s.seq,
  (g.h DIV 100 + s.seq * 17) % 500,
  IF((g.h + s.seq) % 30 = 0, NULL, 1 + (g.h DIV 3 + s.seq * 7) % $NW),
  TIMESTAMP('2024-01-01') + INTERVAL ((g.h + s.seq * 86400) % 31536000) SECOND
FROM (SELECT seq AS p, CRC32(CONCAT('s', seq)) AS h FROM seq_${lo}_to_${hi}) g
JOIN seq_1_to_5 s ON s.seq <= 1 + g.h % 5;

INSERT INTO sku_barcodes (id, sku_id, barcode, kind)
SELECT k.id * 2 + s.seq - 1, k.id, CONCAT(IF(s.seq = 1, '40', '41'), LPAD(k.id, 11, '0')),
  ELT(1 + (k.h DIV 4 + s.seq) % 3, 'EAN13', 'UPC', 'INTERNAL')
FROM (SELECT id, CRC32(CONCAT('k', id)) AS h FROM skus WHERE id BETWEEN ($lo - 1) * 5 + 1 AND $hi * 5) k
JOIN seq_1_to_2 s ON s.seq <= 1 + (k.h % 4 = 0);

INSERT INTO product_tags (product_id, tag_id)
SELECT g.p, 1 + (g.p * 131 + s.seq * 7919) % $NT
FROM (SELECT seq AS p, CRC32(CONCAT('g', seq)) AS h FROM seq_${lo}_to_${hi}) g
JOIN seq_1_to_4 s ON s.seq <= g.h % 5;

INSERT INTO reviews (id, product_id, rating, title, body, author, created_at)
SELECT (g.p - 1) * 3 + s.seq, g.p,
  ELT(1 + (g.h + s.seq) % 10, 5, 5, 5, 4, 4, 4, 3, 2, 1, 5),
  IF((g.h + s.seq) % 9 = 0, NULL, ELT(1 + (g.h DIV 10 + s.seq) % 8, 'Great value', 'Does the job', 'Not as pictured',
        'Love it!', 'Broke after a month', 'Exceeded expectations', 'Okay-ish', 'Would buy again 👍')),
  CONCAT_WS(' ', ELT(1 + (g.h DIV 80 + s.seq) % 6, 'Arrived quickly.', 'Packaging was damaged.', 'Exactly what I wanted.',
        'The colour is a bit off.', 'Sehr gute Qualität.', 'Très bon produit.'),
     ELT(1 + (g.h DIV 480 + s.seq) % 5, 'Fits well.', 'Battery lasts long.', 'Sturdy build.', 'A little heavy.', 'Easy to clean.'),
     IF((g.h + s.seq) % 4 = 0, 'Customer service was helpful.', NULL)),
  ELT(1 + (g.h DIV 7 + s.seq * 3) % 12, 'anna', 'bo', 'chen', 'dana', 'emil', 'farah', 'goran', 'hana', 'ivan', 'józef', 'kai', 'lea'),
  TIMESTAMP('2021-01-01') + INTERVAL ((g.h DIV 3 + s.seq * 604800) % 126230400) SECOND + INTERVAL (g.h % 1000) * 1000 MICROSECOND
FROM (SELECT seq AS p, CRC32(CONCAT('v', seq)) AS h FROM seq_${lo}_to_${hi}) g
JOIN seq_1_to_3 s ON s.seq <= g.h % 4;

INSERT INTO review_replies (id, review_id, author, body, created_at)
SELECT (r.id - 1) * 2 + s.seq, r.id,
  IF(s.seq = 1, 'shop-support', ELT(1 + r.h % 6, 'anna', 'bo', 'chen', 'dana', 'emil', 'farah')),
  ELT(1 + (r.h DIV 6 + s.seq) % 5, 'Thanks for your feedback!', 'Sorry to hear that, we sent you a replacement.',
       'Glad you like it.', 'Agreed, mine too.', 'Could you contact support@example.com?'),
  r.created_at + INTERVAL (1 + (r.h DIV 30 + s.seq) % 1000000) SECOND
FROM (SELECT id, created_at, CRC32(CONCAT('y', id)) AS h FROM reviews WHERE id BETWEEN ($lo - 1) * 3 + 1 AND $hi * 3) r
JOIN seq_1_to_2 s ON s.seq <= (r.h % 4 = 0) * 2 + (r.h % 4 = 1);

SELECT CONCAT('products ', $lo, '..', $hi, ' done at ', ROUND(UNIX_TIMESTAMP(NOW(6)) - @t0, 1), 's');
SQL
        lo=$(( hi + 1 ))
    done
}

echo "generating $N products into \`$DB\` (chunks of $CHUNK, binlog $([ "$BINLOG" = 1 ] && echo on || echo off))"
gen_sql | sql --unbuffered --database="$DB"
sql -e "ANALYZE TABLE \`$DB\`.products, \`$DB\`.skus, \`$DB\`.sku_barcodes, \`$DB\`.product_tags, \`$DB\`.reviews, \`$DB\`.review_replies" >/dev/null
echo "row counts:"
sql -e "SELECT 'products', COUNT(*) FROM \`$DB\`.products UNION ALL SELECT 'skus', COUNT(*) FROM \`$DB\`.skus
        UNION ALL SELECT 'sku_barcodes', COUNT(*) FROM \`$DB\`.sku_barcodes UNION ALL SELECT 'product_tags', COUNT(*) FROM \`$DB\`.product_tags
        UNION ALL SELECT 'reviews', COUNT(*) FROM \`$DB\`.reviews UNION ALL SELECT 'review_replies', COUNT(*) FROM \`$DB\`.review_replies
        UNION ALL SELECT 'brands', COUNT(*) FROM \`$DB\`.brands UNION ALL SELECT 'categories', COUNT(*) FROM \`$DB\`.categories
        UNION ALL SELECT 'tags', COUNT(*) FROM \`$DB\`.tags UNION ALL SELECT 'warehouses', COUNT(*) FROM \`$DB\`.warehouses" |
    awk -F'\t' '{printf "  %-15s %12s\n", $1, $2}'
echo "generated $N products in $(elapsed)s"
