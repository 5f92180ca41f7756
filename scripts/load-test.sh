#!/usr/bin/env bash
# Builds the release binaries and replays the synchronized-spike scenarios against the bundled
# mock CDN on 127.0.0.1, comparing fetch-attachment with curl --parallel and URLSession.
# Arguments go to load-test, e.g. --scenario distinct-urls --runs 3 --tmpfs --svg docs/latency-cdf.svg
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
for product in fetch-attachment urlsession-fetch load-test; do
    swift build -c release --product "$product"
done
exec "$(swift build -c release --show-bin-path)/load-test" "$@"
