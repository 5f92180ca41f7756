#!/usr/bin/env bash
# The checks CI runs after the test suite (scripts/test.sh): the payload and response fuzzers for a bounded
# time, then the test suite under ThreadSanitizer. Either failing fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
echo "ci-checks: the fuzzers ended after ${SECONDS} s" >&2
bash scripts/tsan.sh
