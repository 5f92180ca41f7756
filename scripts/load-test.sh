#!/usr/bin/env bash
# Builds the release binaries and replays the synchronized-spike scenarios against the bundled
# mock CDN on 127.0.0.1, comparing fetch-attachment with curl --parallel and URLSession.
# Arguments go to load-test, e.g. --scenario distinct-urls --runs 3 --tmpfs --svg docs/latency-cdf.svg
#
# The Swift executables (fetch-attachment and the URLSession baseline alike) are built as they would be
# deployed: `--static-swift-stdlib`, which spares each process ~20 ms of dynamic linking of the
# Swift runtime and Foundation at start-up. They go to .build-static/, so that switching
# between this and a normal build never rebuilds either (the first run builds for a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=(swift build -c release --static-swift-stdlib --scratch-path .build-static)
for product in fetch-attachment urlsession-fetch load-test; do
    "${build[@]}" --product "$product"
done
exec "$("${build[@]}" --show-bin-path)/load-test" "$@"
