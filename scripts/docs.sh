#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    echo "usage: bash scripts/docs.sh [OUTPUT_DIR]   builds the documentation site into OUTPUT_DIR (default .build/docs)"
    exit 0
fi

bash scripts/install-deps.sh

output="${1:-.build/docs}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

docc="$(command -v docc || true)"
if [ -z "$docc" ]; then
    docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
fi

swift build --target AttachmentFetcher \
    -Xswiftc -emit-symbol-graph \
    -Xswiftc -emit-symbol-graph-dir -Xswiftc "$scratch/all" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public

mkdir -p "$scratch/symbols"
cp "$scratch"/all/AttachmentFetcher*.symbols.json "$scratch/symbols/"

"$docc" convert Sources/AttachmentFetcher/AttachmentFetcher.docc \
    --additional-symbol-graph-dir "$scratch/symbols" \
    --fallback-display-name AttachmentFetcher \
    --fallback-bundle-identifier com.example.AttachmentFetcher \
    --transform-for-static-hosting \
    --warnings-as-errors \
    --output-path "$output"

echo "documentation in $output: python3 -m http.server --directory $output, then open /documentation/attachmentfetcher/"
