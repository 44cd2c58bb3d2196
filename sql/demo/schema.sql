-- sql/demo/schema.sql — the demo / test e-commerce schema (database `shop`).
-- Owns: table shapes only; rows come from sql/demo/generate.sh.
--
-- How the tables map onto search documents (index `products`):
--   products        root table: one document per product
--   brands          one-to-one object   (products.brand_id)
--   categories      metadata shared by many products; its name changes
--                   (delay-effect refresh of every product in the category)
--   skus            one-to-many nested array (skus.product_id)
--     warehouses    one-to-one object inside each nested sku (skus.warehouse_id)
--     sku_barcodes  third level: nested array inside each sku (sku_barcodes.sku_id)
--   tags            many-to-many through product_tags
--   reviews         parent/child: a review is a child document of its product
--     review_replies  grandchild: child document of a review (join field chain)
--
-- No FOREIGN KEY constraints on purpose: InnoDB's cascaded changes never reach
-- the binlog, so a sync tool cannot see them. Foreign-key columns are indexed.
-- A loader that applies this file to another database drops the two lines
-- below that name `shop`.
CREATE DATABASE IF NOT EXISTS shop CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
USE shop;

CREATE TABLE brands (
  id          INT UNSIGNED NOT NULL PRIMARY KEY,
  name        VARCHAR(100) NOT NULL,
  country     CHAR(2)      NOT NULL,
  founded     YEAR         NULL,
  website     VARCHAR(255) NULL,
  updated_at  TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  UNIQUE KEY uk_brands_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE categories (
  id          INT UNSIGNED NOT NULL PRIMARY KEY,
  parent_id   INT UNSIGNED NULL,
  name        VARCHAR(100) NOT NULL,
  slug        VARCHAR(120) NOT NULL,
  updated_at  TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  KEY idx_categories_parent (parent_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE warehouses (
  id          INT UNSIGNED NOT NULL PRIMARY KEY,
  code        VARCHAR(16)  NOT NULL,
  name        VARCHAR(100) NOT NULL,
  city        VARCHAR(100) NOT NULL,
  country     CHAR(2)      NOT NULL,
  UNIQUE KEY uk_warehouses_code (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE products (
  id           BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  brand_id     INT UNSIGNED   NULL,
  category_id  INT UNSIGNED   NULL,
  name         VARCHAR(255)   NOT NULL,
  description  TEXT           NULL,
  price        DECIMAL(12,2)  NOT NULL,
  status       ENUM('draft','active','discontinued') NOT NULL DEFAULT 'draft',
  created_at   DATETIME(3)    NOT NULL,
  updated_at   TIMESTAMP(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  weight       FLOAT          NULL,
  attrs        JSON           NULL,
  KEY idx_products_brand (brand_id),
  KEY idx_products_category (category_id),
  KEY idx_products_updated (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE skus (
  id            BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  product_id    BIGINT UNSIGNED NOT NULL,
  sku_code      VARCHAR(32)   NOT NULL,
  color         VARCHAR(32)   NULL,
  size          VARCHAR(16)   NULL,
  price         DECIMAL(12,2) NOT NULL,
  stock         INT           NOT NULL DEFAULT 0,
  warehouse_id  INT UNSIGNED  NULL,
  updated_at    TIMESTAMP(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  UNIQUE KEY uk_skus_code (sku_code),
  KEY idx_skus_product (product_id),
  KEY idx_skus_warehouse (warehouse_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE sku_barcodes (
  id       BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  sku_id   BIGINT UNSIGNED NOT NULL,
  barcode  VARCHAR(32) NOT NULL,
  kind     ENUM('EAN13','UPC','INTERNAL') NOT NULL,
  KEY idx_sku_barcodes_sku (sku_id),
  KEY idx_sku_barcodes_barcode (barcode)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tags (
  id    INT UNSIGNED NOT NULL PRIMARY KEY,
  name  VARCHAR(64)  NOT NULL,
  UNIQUE KEY uk_tags_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE product_tags (
  product_id  BIGINT UNSIGNED NOT NULL,
  tag_id      INT UNSIGNED    NOT NULL,
  PRIMARY KEY (product_id, tag_id),
  KEY idx_product_tags_tag (tag_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE reviews (
  id          BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  product_id  BIGINT UNSIGNED NOT NULL,
  rating      TINYINT UNSIGNED NOT NULL,
  title       VARCHAR(200) NULL,
  body        TEXT         NULL,
  author      VARCHAR(100) NOT NULL,
  created_at  DATETIME(3)  NOT NULL,
  KEY idx_reviews_product (product_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE review_replies (
  id          BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  review_id   BIGINT UNSIGNED NOT NULL,
  author      VARCHAR(100) NOT NULL,
  body        TEXT         NULL,
  created_at  DATETIME(3)  NOT NULL,
  KEY idx_review_replies_review (review_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
