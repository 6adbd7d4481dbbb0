#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgreSQL test suites.
#
#   eval "$(bash scripts/postgres.sh start /tmp/hdc-pg)"   # exports HDC_TEST_POSTGRES_URL
#   go test ./backend/... && go test ./tests/scale/
#   bash scripts/postgres.sh stop /tmp/hdc-pg
#
# start installs Debian's postgresql package when no server is found (as
# root), creates a cluster in DIR (which must not exist yet), starts it on a
# free loopback port with its socket inside DIR, creates a role and a
# database it owns (each test creates and drops a schema of its own there),
# and prints the export line of that database's URL. stop stops the server
# and deletes DIR.
# PostgreSQL refuses to run as root, so as root the cluster belongs to the
# postgres user.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1 dir=$2

# pgbin prints the directory of the newest installed server's programs.
pgbin() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bin" ] && command -v pg_ctl >/dev/null; then
    bin=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
  fi
  [ -n "$bin" ] && [ -x "$bin/initdb" ] && echo "$bin"
}

# as runs a command as the cluster's owner.
as() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $cmd in
start)
  [ -e "$dir" ] && { echo "$dir exists; pick a new directory" >&2; exit 1; }
  if ! bin=$(pgbin); then
    [ "$(id -u)" -eq 0 ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
    echo "installing PostgreSQL from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    # Only the throwaway cluster below is wanted, not the package's own.
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/hdc-tests.conf
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
    bin=$(pgbin)
  fi
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  as "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  # A random port, again on a clash. The settings suit a disposable test
  # server: no durability, small memory.
  for _ in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    if as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=64MB" \
      start >/dev/null; then
      echo "$port" >"$dir/port"
      break
    fi
    tail -n 5 "$dir/server.log" >&2 || true
  done
  [ -f "$dir/port" ] || { echo "PostgreSQL did not start" >&2; exit 1; }
  as "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
    -c "CREATE ROLE hdc LOGIN PASSWORD 'hdc'" -c "CREATE DATABASE hdc OWNER hdc" >&2
  echo "export HDC_TEST_POSTGRES_URL='postgres://hdc:hdc@127.0.0.1:$port/hdc?sslmode=disable'"
  ;;
stop)
  if [ -d "$dir/data" ] && bin=$(pgbin); then
    as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*) usage ;;
esac
