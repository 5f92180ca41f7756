#!/usr/bin/env bash
# Installs what is needed and runs the test suite (Swift Testing, all over loopback).
#
# The deadline suites (the engine's, and the cache's under load), and the load test's (which checks
# deadlines in its children), each run in a process of their own, one after the other: they check
# that an outcome arrives within 100 ms of its deadline, and anything else running at the same time (CLI processes, 50 MB bodies, a load test)
# competes with them for this machine's two cores. The file-descriptor campaigns (two child
# processes of 3,000 payloads each) run in a process of their own too, so as not to be that load.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --build-tests
swift test --skip-build --skip 'DeadlineTests|LoadTestTests|ResourceTests' "$@"
for suite in '\.DeadlineTests' 'InstantDeadlineTests' 'CacheLoadDeadlineTests' 'CacheDeadlineTests' 'ResourceTests' 'LoadTestTests'; do
    swift test --skip-build --filter "$suite" "$@"
done
