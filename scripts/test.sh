#!/usr/bin/env bash
# Installs what is needed and runs the test suite (Swift Testing, all over loopback).
#
# The deadline suites (the engine's, and the cache's under load), and the load test's (which checks
# deadlines in its children), each run in a process of their own, one after the other: they check
# that an outcome arrives within 100 ms of its deadline, and anything else running at the same time (CLI processes, 50 MB bodies, a load test)
# competes with them for this machine's two cores. The file-descriptor campaigns (two child
# processes of 3,000 payloads each) run in a process of their own too, so as not to be that load.
#
# At most 8 tests at once (Swift Testing's SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH; a
# toolchain without it ignores it). All 350 at once left Swift's two cooperative threads seconds
# of queued work: a cached download's detached task waited a median 0.28 s and at worst 3.9 s to
# start, and a test's 10 s budget for a 4 KB file ran out under ThreadSanitizer. With 8 the worst
# wait was 54 ms, and the suite took as long (27–30 s either way).
set -euo pipefail
cd "$(dirname "$0")/.."
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}"
bash scripts/install-deps.sh
swift build --build-tests
echo "test.sh: built after ${SECONDS} s" >&2
swift test --skip-build --skip 'DeadlineTests|LoadTestTests|ResourceTests' "$@"
for suite in '\.DeadlineTests' 'InstantDeadlineTests' 'CacheLoadDeadlineTests' 'CacheDeadlineTests' 'ResourceTests' 'LoadTestTests'; do
    swift test --skip-build --filter "$suite" "$@"
done
