#!/usr/bin/env bash
# Fuzz targets.
#
#   bash scripts/fuzz.sh --list                    every target: "PACKAGE TARGET" lines
#   bash scripts/fuzz.sh PACKAGE TARGET DURATION   fuzz one target, e.g.
#   bash scripts/fuzz.sh ./internal/jwe FuzzRead 8h
#
# The list is read from the sources (a func FuzzXxx(f *testing.F) in a
# _test.go file), not by compiling the packages. A failing input is written
# under the package's testdata/fuzz/TARGET, where `go test` then runs it as
# a regression test; commit it with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--list" ]; then
  funcs=$(git ls-files '*_test.go' | xargs grep -H '^func Fuzz' || true)
  list=$(sed -nE 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\([a-z]+ \*testing\.F\) \{$#./\1 \2#p' <<<"$funcs" | sort)
  if [ "$(grep -c . <<<"$funcs")" -ne "$(grep -c . <<<"$list")" ]; then
    echo "fuzz.sh: a func Fuzz... line is not of the form func FuzzXxx(f *testing.F) {:" >&2
    echo "$funcs" >&2
    exit 1
  fi
  echo "$list"
  exit 0
fi
[ $# -eq 3 ] || { echo "usage: $0 --list | PACKAGE TARGET DURATION" >&2; exit 2; }
pkg=$1 target=$2 duration=$3

# Go 1.26's fuzz coordinator can report "context deadline exceeded" when
# -fuzztime runs out while a worker is busy (golang/go#75804, fixed in Go
# 1.27): no input failed, and no reproducer is written. Such a run is tried
# once more; any other failure, or a reproducer, fails.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in 1 2; do
  set +e
  go test -run='^$' -fuzz="^${target}\$" -fuzztime="$duration" "$pkg" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  [ "$rc" -eq 0 ] && exit 0
  if [ "$attempt" -eq 1 ] && grep -q 'context deadline exceeded' "$log" &&
    ! grep -qE 'Failing input written|panic:' "$log"; then
    echo "-- $target: the fuzz coordinator's deadline race (golang/go#75804), no failing input; once more"
    continue
  fi
  exit "$rc"
done
