#!/bin/sh
# The whole test suite on a fresh Debian machine: install what the tests need, then run them.
# CI runs exactly this (from .ci/run), as root with CI=true; the namespace tests need root.
set -eu
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
exec cargo test --workspace --locked --no-fail-fast "$@"
