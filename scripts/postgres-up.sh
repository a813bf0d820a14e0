#!/usr/bin/env bash
# Starts the local PostgreSQL cluster if it is not accepting connections and,
# given a name, creates that database. Tests create their own databases.
set -euo pipefail
host=${PGHOST:-127.0.0.1}
port=${PGPORT:-5432}
user=${PGUSER:-postgres}

if ! command -v pg_isready >/dev/null 2>&1; then
  echo "postgres-up: PostgreSQL client tools not found; installing postgresql" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

if ! pg_isready -h "$host" -p "$port" -q; then
  version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$version" ]; then
    echo "postgres-up: no PostgreSQL cluster configured under /etc/postgresql" >&2
    exit 1
  fi
  echo "postgres-up: starting PostgreSQL $version" >&2
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || pg_ctlcluster "$version" main start
  for _ in $(seq 1 60); do
    pg_isready -h "$host" -p "$port" -q && break
    sleep 0.5
  done
  pg_isready -h "$host" -p "$port" -q || { echo "postgres-up: PostgreSQL did not start" >&2; exit 1; }
fi

if [ $# -gt 0 ]; then
  db=$1
  exists=$(psql -h "$host" -p "$port" -U "$user" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")
  if [ "$exists" != "1" ]; then
    psql -h "$host" -p "$port" -U "$user" -d postgres -qc "CREATE DATABASE \"$db\"" >/dev/null
    echo "postgres-up: created database $db" >&2
  fi
fi
