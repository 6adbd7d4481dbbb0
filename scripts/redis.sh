#!/usr/bin/env bash
# A throwaway Redis server for the rate limit tests of a fleet.
#
#   eval "$(bash scripts/redis.sh start /tmp/hdc-redis)"   # exports HDC_TEST_REDIS_URL
#   go test ./caddymodule/ratelimit/ && go test ./tests/e2e/ -run RateLimit
#   bash scripts/redis.sh stop /tmp/hdc-redis
#
# start installs Debian's redis-server package when no server is found (as
# root), starts one on a free loopback port with its files in DIR (which
# must not exist yet), no persistence, and prints the export line of its
# URL. stop stops the server and deletes DIR.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1 dir=$2

case $cmd in
start)
  [ -e "$dir" ] && { echo "$dir exists; pick a new directory" >&2; exit 1; }
  if ! command -v redis-server >/dev/null; then
    [ "$(id -u)" -eq 0 ] || { echo "Redis is not installed (apt-get install redis-server)" >&2; exit 1; }
    echo "installing Redis from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends redis-server >&2
    # Only the throwaway server below is wanted, not the package's own.
    { systemctl disable --now redis-server || service redis-server stop || true; } >/dev/null 2>&1
  fi
  mkdir -p "$dir"
  # A random port, again on a clash. No persistence: a disposable server.
  for _ in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save '' --appendonly no \
      --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/server.log" >/dev/null 2>&1 || true
    for _ in $(seq 50); do
      redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG && break
      sleep 0.1
    done
    if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
      echo "$port" >"$dir/port"
      break
    fi
    tail -n 5 "$dir/server.log" >&2 || true
  done
  [ -f "$dir/port" ] || { echo "Redis did not start" >&2; exit 1; }
  echo "export HDC_TEST_REDIS_URL='redis://127.0.0.1:$port/0'"
  ;;
stop)
  if [ -f "$dir/port" ]; then
    redis-cli -h 127.0.0.1 -p "$(cat "$dir/port")" shutdown nosave >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*) usage ;;
esac
