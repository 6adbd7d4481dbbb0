#!/usr/bin/env bash
# A throwaway Redis server for the rate limit tests of a fleet, set up as
# docs/deploy.md sets up a fleet's Redis: TLS only, the default user off,
# one ACL user for the edges with a password and no command but those the
# edges run, on the gateway's keys alone.
#
#   eval "$(bash scripts/redis.sh start /tmp/hdc-redis)"   # exports HDC_TEST_REDIS_URL, _PASSWORD_FILE, _CA
#   go test ./caddymodule/ratelimit/ && go test ./tests/e2e/ -run RateLimit
#   bash scripts/redis.sh stop /tmp/hdc-redis
#
# start installs Debian's redis-server package (and openssl) when missing
# (as root), makes in DIR (which must not exist yet) a password, an
# authority and the server's certificate for 127.0.0.1, the ACL file and
# redis.conf, starts the server on a free loopback port, no persistence,
# and prints the export lines of its URL (naming the user), the password's
# file and the authority's certificate. `redis-server DIR/redis.conf`
# starts it again on the same port. stop stops it and deletes DIR.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1 dir=$2
user=hdc-edge

# install installs the Debian packages of the commands named that are
# missing, as root.
install() {
  local missing=()
  for c in "$@"; do command -v "$c" >/dev/null || missing+=("$c"); done
  [ ${#missing[@]} -eq 0 ] && return
  [ "$(id -u)" -eq 0 ] || { echo "missing: ${missing[*]} (apt-get install redis-server openssl)" >&2; exit 1; }
  echo "installing redis-server and openssl from Debian's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends redis-server redis-tools openssl >&2
  # Only the throwaway server below is wanted, not the package's own.
  { systemctl disable --now redis-server || service redis-server stop || true; } >/dev/null 2>&1
}

# certificates makes an authority and a certificate of 127.0.0.1 it issued.
certificates() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=hdc-test-redis-ca \
    -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" 2>/dev/null
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -addext basicConstraints=critical,CA:FALSE \
    -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -keyout "$dir/redis-key.pem" -out "$dir/redis.pem" 2>/dev/null
}

# answers reports whether the server on port answers the user's PING; the
# password goes in REDISCLI_AUTH, never on a command line.
answers() {
  REDISCLI_AUTH=$(cat "$dir/password") redis-cli --tls --cacert "$dir/ca.pem" -h 127.0.0.1 -p "$1" --user "$user" \
    ping 2>/dev/null | grep -q PONG
}

case $cmd in
start)
  [ -e "$dir" ] && { echo "$dir exists; pick a new directory" >&2; exit 1; }
  install redis-server redis-cli openssl
  umask 077
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  openssl rand -hex 24 >"$dir/password"
  certificates
  # The ACL holds the password's SHA-256, not the password. The edges run
  # PING, HELLO (AUTH), and their Lua scripts (EVALSHA, EVAL) whose calls
  # are TIME, GET, SET, INCRBY, DECRBY and EXPIRE, on their keys: hdc:rl:*
  # (the quotas) and rate:hdc:rl:* (the rates, as go-redis/redis_rate
  # names them).
  printf 'user default off\nuser %s on #%s ~hdc:rl:* ~rate:hdc:rl:* resetchannels -@all +hello +auth +ping +evalsha +eval +time +get +set +incrby +decrby +expire\n' \
    "$user" "$(tr -d '\n' <"$dir/password" | sha256sum | cut -d' ' -f1)" >"$dir/users.acl"
  # A random port, again on a clash. No persistence: a disposable server.
  for _ in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    cat >"$dir/redis.conf" <<EOF
bind 127.0.0.1
port 0
tls-port $port
tls-cert-file $dir/redis.pem
tls-key-file $dir/redis-key.pem
tls-ca-cert-file $dir/ca.pem
tls-auth-clients no
aclfile $dir/users.acl
dir $dir
save ""
appendonly no
daemonize yes
pidfile $dir/redis.pid
logfile $dir/server.log
EOF
    redis-server "$dir/redis.conf" >/dev/null 2>&1 || true
    for _ in $(seq 50); do
      answers "$port" && break
      sleep 0.1
    done
    if answers "$port"; then
      echo "$port" >"$dir/port"
      break
    fi
    [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
    tail -n 5 "$dir/server.log" >&2 || true
  done
  [ -f "$dir/port" ] || { echo "Redis did not start" >&2; exit 1; }
  echo "export HDC_TEST_REDIS_URL='rediss://$user@127.0.0.1:$port/0'"
  echo "export HDC_TEST_REDIS_PASSWORD_FILE='$dir/password'"
  echo "export HDC_TEST_REDIS_CA='$dir/ca.pem'"
  ;;
stop)
  # The edges' user may not SHUTDOWN: a signal stops the server.
  if [ -f "$dir/redis.pid" ]; then
    pid=$(cat "$dir/redis.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -rf "$dir"
  ;;
*) usage ;;
esac
