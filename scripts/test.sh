#!/usr/bin/env bash
# The test command.
#
#   bash scripts/test.sh           every test: vet, the unit tests under the
#                                  race detector, then the end-to-end and
#                                  interop packages of tests/
#   bash scripts/test.sh --quick   vet and the unit tests without the race
#                                  detector, a package's result from Go's test
#                                  cache when nothing it depends on changed:
#                                  the loop while working, not the gate
#
# The packages of tests/ build the real binaries once per run (shared
# through HDC_TEST_BIN) and drive them on loopback with independent
# clients: npm packages (installed here from tests/interop's lock file),
# Debian's python3-jwcrypto, python3-authlib, python3-httpx, python3-h2 and
# python3-requests, the latchset jose CLI, curl and the JDK (installed here
# when missing), Go's
# jwx (tests/jwxclient, a module of its own), against local-kms, AWS KMS's
# API on loopback (tests/localkms, a module of its own); and the deployment
# files, the systemd units with systemd-analyze (Debian's systemd,
# installed here when missing), the alert rules with promtool and the
# metrics they and the dashboard name with the PromQL parser (both from
# tests/promcheck, a module of its own); and the operator console in
# Debian's headless Chromium with axe-core (tests/console, whose
# screenshots -update writes into docs/console). tests/e2e, tests/interop, tests/deploy and
# tests/console run side by side; tests/scale, whose tests time things, runs after them
# with the machine to itself.
set -euo pipefail
cd "$(dirname "$0")/.."
# -trimpath: the build cache keys a package compiled without it by its
# directory too, so a fresh clone would compile every package of the
# repository again; with it a clone reuses what an earlier one compiled.
# -ldflags=-w: test binaries without DWARF, which only a debugger reads
# (stack traces and race reports come from the symbol table): a link
# takes a quarter less (the backend's race test binary 7.0 → 5.1 CPU-s),
# and the suite links about ninety.
export GOFLAGS="${GOFLAGS:-} -trimpath -ldflags=-w"

quick=false
case "${1:-}" in
--quick) quick=true ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

# The unit packages, those whose tests take longest first: go test starts
# them first, so that none of them is the tail of the run.
slowest="./cmd/hdc/internal/opscmd ./backend ./backend/store/sqlite ./backend/store/postgres ./internal/jwe
  ./caddymodule ./internal/kidfilter ./cmd/hdc/internal/clientcmd ./backend/admin ./backend/webhook/delivery"
slowest=$(go list $slowest)
units="$slowest $(go list ./... | grep -v '/tests/' | grep -vxF "$slowest")"

if $quick; then
  echo "== go vet"
  go vet ./...
  # Go's test cache answers for a package whose sources, and the files
  # and variables its tests read, did not change since it passed: the
  # loop re-runs what an edit can have changed. The gate below runs all.
  echo "== unit tests (no race detector; unchanged packages from Go's test cache)"
  go test -vet=off $units
  echo "== the quick loop passed in ${SECONDS} s"
  exit 0
fi

echo "== npm packages for the interop tests"
npm ci --prefix tests/interop --no-audit --no-fund --ignore-scripts --loglevel=error

echo "== Debian packages for the interop and deployment tests"
missing=()
for module in jwcrypto authlib httpx h2 requests; do
  /usr/bin/python3 -c "import $module" 2>/dev/null || missing+=("python3-$module")
done
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v curl >/dev/null || missing+=(curl)
command -v jose >/dev/null || missing+=(jose)
# tests/console drives the operator console in Debian's headless Chromium.
command -v chromium >/dev/null || missing+=(chromium)
# tests/interop/JdkClient.java runs from source, which needs the compiler.
javac -version >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "the tests need ${missing[*]}: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

echo "== go vet (at ${SECONDS} s)"
go vet ./...
(cd tests/jwxclient && go vet ./...)
(cd tests/localkms && go vet ./...)
(cd tests/promcheck && go vet ./...)

# Four test binaries at a time on two cores (go test's default is one a
# core): a package waiting on its database, its children or its timers
# leaves a core to another. -vet=off: go vet ./... just ran.
#
# Every package is instrumented; modernc.org's (SQLite translated from C
# to Go, all unsafe pointer arithmetic) without the pointer checks the race
# detector turns on (-d=checkptr), which doubled a store's opening (26
# migrations: 300 ms instead of 165 ms) in every test that opens one. Its
# races are still seen; and ours, checkptr and all.
echo "== unit tests (race detector) (at ${SECONDS} s)"
go test -race -gcflags='modernc.org/...=-d=checkptr=0' -count=1 -vet=off -p 4 $units

HDC_TEST_BIN=$(mktemp -d /tmp/hdc-test-bin-XXXXXX)
export HDC_TEST_BIN
trap 'rm -rf "$HDC_TEST_BIN"' EXIT

# Six tests of a package at a time: most of them wait on their stacks'
# timers, and with four the machine was a fifth idle once tests/e2e ran
# alone (155 s for the phase; 138 s with six).
echo "== end-to-end, interop and deployment tests, side by side (at ${SECONDS} s)"
go test -count=1 -timeout 20m -vet=off -parallel "${HDC_TEST_PARALLEL:-6}" ./tests/e2e ./tests/interop ./tests/deploy ./tests/console

echo "== the fleet and the timed tests, one at a time (at ${SECONDS} s)"
go test -count=1 -timeout 20m -p 1 ./tests/scale
echo "== the test command passed in ${SECONDS} s"
