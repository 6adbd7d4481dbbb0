#!/usr/bin/env bash
# The test command: unit tests, then the end-to-end and interop suite in
# tests/, which builds the real binaries and drives them on loopback with
# independent npm clients (installed here from tests/interop's lock file).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== npm packages for the interop tests"
npm ci --prefix tests/interop --no-audit --no-fund --ignore-scripts --loglevel=error

echo "== go vet"
go vet ./...

echo "== unit tests"
go test -race -count=1 $(go list ./... | grep -v '/tests$')

echo "== end-to-end and interop tests"
go test -count=1 -timeout 30m ./tests/...
