#!/bin/sh
# build.sh OUTDIR builds the programs of the container image into OUTDIR:
# hdc-edge, hdc-backend, hdc and hdc-healthcheck, statically linked. Nothing
# here needs cgo (SQLite is modernc.org/sqlite, in Go), so CGO_ENABLED=0
# gives binaries that run on an image with no C library.
#
# deploy/Containerfile runs this script and tests/deploy/deploy_test.go runs it too,
# then checks that every binary it built is static: the image and the test
# cannot build differently. GOOS and GOARCH pass through, for an image of
# another platform; GOFLAGS too.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."

CGO_ENABLED=0 exec go build -trimpath -ldflags='-s -w' -o "$out/" \
	./cmd/hdc-edge ./cmd/hdc-backend ./cmd/hdc ./deploy/hdc-healthcheck
