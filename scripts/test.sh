#!/usr/bin/env bash
# Installs what is needed and runs the test suite (Swift Testing, all over loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
