#!/usr/bin/env bash
# Installs what is needed and runs the test suite (Swift Testing, all over loopback).
#
# The deadline tests and the load test's (which checks deadlines in a child) run in a process of
# their own: they check that an outcome arrives within 100 ms of its deadline, and the other suites
# (which spawn CLI processes and push 50 MB bodies) would otherwise compete with them for this
# machine's two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --build-tests
swift test --skip-build --skip 'DeadlineTests|LoadTestTests' "$@"
swift test --skip-build --filter 'DeadlineTests|LoadTestTests' "$@"
