#!/usr/bin/env bash
# Fuzz targets.
#
#   bash scripts/fuzz.sh --list                    every target: "PACKAGE TARGET" lines
#   bash scripts/fuzz.sh --all DURATION            every target for DURATION
#   bash scripts/fuzz.sh --build DIR               the fuzzing binaries, into DIR
#   bash scripts/fuzz.sh --run DIR DURATION        every target for DURATION, from
#                                                  DIR's binaries, as CI does
#   bash scripts/fuzz.sh PACKAGE TARGET DURATION   fuzz one target, e.g.
#   bash scripts/fuzz.sh ./internal/jwe FuzzRead 8h
#
# The list is read from the sources (a func FuzzXxx(f *testing.F) in a
# _test.go file), not by compiling the packages. A failing input is written
# under the package's testdata/fuzz/TARGET, where `go test` then runs it as
# a regression test; commit it with the fix.
#
# --all builds each package's fuzzing test binary once (go test -c -fuzz,
# which instruments it as go test -fuzz does), as many at a time as the
# machine has cores, and runs its targets from it, as many at a time,
# each with one worker:
# every target still fuzzes for DURATION, and no package is linked once a
# target. The new inputs it finds go where go test -fuzz keeps them
# ($GOCACHE/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

list() {
  local funcs list
  funcs=$(git ls-files '*_test.go' | xargs grep -H '^func Fuzz' || true)
  list=$(sed -nE 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\([a-z]+ \*testing\.F\) \{$#./\1 \2#p' <<<"$funcs" | sort)
  if [ "$(grep -c . <<<"$funcs")" -ne "$(grep -c . <<<"$list")" ]; then
    echo "fuzz.sh: a func Fuzz... line is not of the form func FuzzXxx(f *testing.F) {:" >&2
    echo "$funcs" >&2
    exit 1
  fi
  echo "$list"
}

# retrying runs its arguments, a fuzzing command, once more when it failed
# on Go 1.26's fuzz coordinator's race: "context deadline exceeded" when
# -fuzztime runs out while a worker is busy (golang/go#75804, fixed in Go
# 1.27), with no input failed and no reproducer written. Any other
# failure, or a reproducer, fails. Its output goes to standard output.
retrying() {
  local log rc attempt
  log=$(mktemp)
  for attempt in 1 2; do
    set +e
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" -ne 0 ] && [ "$attempt" -eq 1 ] && grep -q 'context deadline exceeded' "$log" &&
      ! grep -qE 'Failing input written|panic:' "$log"; then
      echo "-- the fuzz coordinator's deadline race (golang/go#75804), no failing input; once more"
      continue
    fi
    rm -f "$log"
    return "$rc"
  done
}

# build builds each package's fuzzing test binary into the directory $1,
# as many at a time as the machine has cores: go test -c takes one package
# with -fuzz, and a link runs on one core.
build() {
  local bins=$1
  cut -d' ' -f1 <<<"$(list)" | uniq | xargs -P "$(nproc)" -I{} bash -c \
    'go test -c -vet=off -fuzz=. -o "$0/$(tr / _ <<<"$1").test" "$1"' "$bins" {}
}

# run fuzzes every target for $2 from the binaries build made in $1,
# several at a time.
run() {
  local jobs pkg target targets
  bins=$1 duration=$2
  cache=$(go env GOCACHE)/fuzz
  jobs=$(nproc)
  targets=$(list)
  echo "targets: $(grep -c . <<<"$targets"), $jobs at a time"
  export -f retrying
  export bins cache duration
  # Each line: the package's directory, its import path, the target.
  while read -r pkg target; do
    echo "$pkg $(go list "$pkg") $target"
  done <<<"$targets" | xargs -P "$jobs" -L 1 bash -c '
    dir=$0 path=$1 target=$2
    out=$(cd "$dir" && retrying "$bins/$(tr / _ <<<"$dir").test" -test.run="^\$" -test.fuzz="^${target}\$" \
      -test.fuzztime="$duration" -test.parallel=1 -test.fuzzcachedir="$cache/$path")
    rc=$?
    printf -- "-- %s %s\n%s\n" "$dir" "$target" "$(tail -n 3 <<<"$out")"
    [ "$rc" -eq 0 ] || { echo "$out"; echo "FAIL $dir $target"; exit 255; }'
}

case "${1:-}" in
--list)
  list
  exit 0
  ;;
--all)
  [ $# -eq 2 ] || { echo "usage: $0 --all DURATION" >&2; exit 2; }
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  build "$dir"
  run "$dir" "$2"
  exit 0
  ;;
--build)
  [ $# -eq 2 ] || { echo "usage: $0 --build DIR" >&2; exit 2; }
  build "$2"
  exit 0
  ;;
--run)
  [ $# -eq 3 ] || { echo "usage: $0 --run DIR DURATION" >&2; exit 2; }
  run "$2" "$3"
  exit 0
  ;;
esac
[ $# -eq 3 ] || { echo "usage: $0 --list | --all DURATION | --build DIR | --run DIR DURATION | PACKAGE TARGET DURATION" >&2; exit 2; }
pkg=$1 target=$2 duration=$3
retrying go test -run='^$' -fuzz="^${target}\$" -fuzztime="$duration" "$pkg"
