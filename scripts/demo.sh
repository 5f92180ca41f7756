#!/usr/bin/env bash
# Installs what is needed, builds, and runs the bundled example payloads against the bundled
# mock CDN on 127.0.0.1 (no internet). Extra arguments go to `fetch-attachment demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build --product fetch-attachment
exec "$(swift build --show-bin-path)/fetch-attachment" demo "$@"
