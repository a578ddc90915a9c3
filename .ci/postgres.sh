#!/usr/bin/env bash
# Make a PostgreSQL server reachable on 127.0.0.1:5432 with a `test` database, installing and
# starting Debian's package when the machine has none. Safe to run again: every step checks first.
# Prints nothing on success but the URL the suites use (WARREN_TEST_POSTGRES_URL).
set -euo pipefail

password=${WARREN_CI_POSTGRES_PASSWORD:-warren-ci}
# From / so the postgres user can start in a directory it may read.
as_postgres() { (cd / && runuser -u postgres -- "$@"); }

if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
  echo "postgres: installing Debian's postgresql package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi

version=$(ls /etc/postgresql | sort -V | tail -n 1)
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "postgres: starting cluster $version/main" >&2
  pg_ctlcluster --skip-systemctl-redirect "$version" main start >&2 || true
  for _ in $(seq 1 60); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
  pg_isready -h 127.0.0.1 -p 5432 -q || { echo "postgres: did not start" >&2; exit 1; }
fi

# A password for the postgres role, so the default scram line for 127.0.0.1 admits the suites.
as_postgres psql -q -v ON_ERROR_STOP=1 -c "ALTER ROLE postgres PASSWORD '$password'" >/dev/null
if [ "$(as_postgres psql -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'")" != 1 ]; then
  as_postgres createdb test
fi
echo "postgres://postgres:$password@127.0.0.1:5432/test"
