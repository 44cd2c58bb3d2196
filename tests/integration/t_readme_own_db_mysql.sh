#!/usr/bin/env bash
# tests/integration/t_readme_own_db_mysql.sh — t_readme_own_db.sh on MySQL 8:
# README.md's own-database steps with the source and the metadata on one
# MySQL server, the user created by the README's SQL (caching_sha2_password).
exec bash "$(dirname "$0")/t_readme_own_db.sh" mysql
