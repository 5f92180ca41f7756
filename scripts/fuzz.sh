#!/usr/bin/env bash
# Fuzzes the payload reader and vendor recognition with libFuzzer and AddressSanitizer, for a
# bounded time (default 60 s; the first argument overrides it). A crash, a sanitizer report or a
# broken invariant (see Fuzz/PayloadFuzzer.swift) fails the script, and the input that caused it
# is left in .build-fuzz/ (crash-*, to replay: .build-fuzz/payload-fuzzer .build-fuzz/crash-…).
#
# The fuzzer is compiled with swiftc from the sources it exercises (the reader, the vendor
# schemas, the content readers, the media types), not through SwiftPM: libFuzzer brings its own main().
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build-fuzz
mkdir -p "$out/corpus"
sources=(Sources/AttachmentFetcher/Payload/*.swift Sources/AttachmentFetcher/Content/*.swift Sources/AttachmentFetcher/Outcome.swift
    Sources/AttachmentFetcher/OutcomeJSON.swift Sources/AttachmentFetcher/Hex.swift Sources/AttachmentFetcher/Inspection/MediaType.swift
    Sources/AttachmentFetcher/Inspection/ISOBaseMedia.swift
    Fuzz/PayloadFuzzer.swift)
# gold warns about every ASan helper symbol it cannot export: noise.
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name AttachmentFetcher -package-name AttachmentFetcher \
    "${sources[@]}" -o "$out/payload-fuzzer" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
# New inputs go to .build-fuzz/corpus; the checked-in seeds (Fuzz/corpus: the vendors' example
# payloads) are read, never written. APNs caps a payload at 4 KB: twice that is explored.
"$out/payload-fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" Fuzz/corpus
