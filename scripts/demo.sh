#!/usr/bin/env bash
# Installs what is needed, builds, and runs the bundled example payloads against the bundled
# mock CDN on 127.0.0.1 (no internet). Extra arguments go to `fetch-attachment demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --product fetch-attachment
bin="$(swift build --show-bin-path)"
status=0
"$bin/fetch-attachment" demo "$@" || status=$?
# Two lines, each path whole on its own, as the command's own output keeps them.
echo "fetch-attachment is at $bin/fetch-attachment" >&2
echo "  try: $bin/fetch-attachment --help" >&2
# A debug build: for campaigns, the release build (README, "The command line").
echo "  for campaigns: swift build -c release --product fetch-attachment" >&2
exit "$status"
