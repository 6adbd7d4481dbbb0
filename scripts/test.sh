#!/usr/bin/env bash
# The test command: unit tests, then the end-to-end and interop suite in
# tests/, which builds the real binaries and drives them on loopback with
# independent clients: npm packages (installed here from tests/interop's
# lock file), Debian's python3-jwcrypto, python3-authlib, python3-httpx,
# python3-h2 and python3-requests, curl and the JDK (installed here when missing), and Go's jwx
# (tests/jwxclient, a module of its own), against local-kms, AWS KMS's API
# on loopback (tests/localkms, a module of its own); and the deployment files, the
# systemd units with systemd-analyze (Debian's systemd, installed here when
# missing).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== npm packages for the interop tests"
npm ci --prefix tests/interop --no-audit --no-fund --ignore-scripts --loglevel=error

echo "== Debian packages for the interop and deployment tests"
missing=()
for module in jwcrypto authlib httpx h2 requests; do
  /usr/bin/python3 -c "import $module" 2>/dev/null || missing+=("python3-$module")
done
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v curl >/dev/null || missing+=(curl)
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

echo "== go vet"
go vet ./...
(cd tests/jwxclient && go vet ./...)
(cd tests/localkms && go vet ./...)

echo "== unit tests"
go test -race -count=1 $(go list ./... | grep -v '/tests$')

echo "== end-to-end and interop tests"
go test -count=1 -timeout 30m ./tests/...
