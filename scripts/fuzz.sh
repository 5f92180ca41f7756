#!/usr/bin/env bash
# Fuzzes, with libFuzzer and AddressSanitizer, for a bounded time each (default 60 s for the
# payloads and half that for the responses; the first argument overrides the first), what the
# fetcher parses of attacker-chosen input:
# - the payload fuzzer (Fuzz/PayloadFuzzer.swift): the payload reader, vendor recognition and the
#   notification's content, seeded with the vendors' example payloads (Fuzz/corpus);
# - the response fuzzer (Fuzz/ResponseFuzzer.swift): what an origin sends, response headers (the
#   cache's freshness and validators, a redirect's, HTTP dates, Content-Disposition) and bodies
#   (each format's completeness walk, ISO base media boxes, animation flags), and what another
#   user of a shared cache may write, an entry's metadata attribute; seeded with the real media
#   of Tests/Fixtures/media and a few header blocks.
# A crash, a sanitizer report or a broken invariant fails the script, and the input that caused
# it is left in .build-fuzz/ (crash-*, to replay: .build-fuzz/payload-fuzzer .build-fuzz/crash-…).
#
# Each fuzzer is compiled with swiftc from the sources it exercises, not through SwiftPM:
# libFuzzer brings its own main().
set -euo pipefail
cd "$(dirname "$0")/.."
# A crash is libFuzzer's to report (with the input that caused it): Swift's own backtracer,
# under AddressSanitizer, took minutes over it.
export SWIFT_BACKTRACE=enable=no
seconds="${1:-60}"
response_seconds=$(( (seconds + 1) / 2 ))
out=.build-fuzz
mkdir -p "$out/corpus" "$out/response-corpus" "$out/response-seeds"

# gold warns about every ASan helper symbol it cannot export: noise.
build() {
    local product=$1
    shift
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name AttachmentFetcher -package-name AttachmentFetcher \
        "$@" -o "$out/$product" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
}
build payload-fuzzer Sources/AttachmentFetcher/Payload/*.swift Sources/AttachmentFetcher/Content/*.swift \
    Sources/AttachmentFetcher/Outcome.swift Sources/AttachmentFetcher/OutcomeJSON.swift Sources/AttachmentFetcher/Hex.swift \
    Sources/AttachmentFetcher/Inspection/{MediaType,ISOBaseMedia,AnimatedImage,BodyCompleteness}.swift \
    Fuzz/PayloadFuzzer.swift
build response-fuzzer Sources/AttachmentFetcher/Inspection/{BodyCompleteness,AnimatedImage,ExifOrientation,ISOBaseMedia,MediaType}.swift \
    Sources/AttachmentFetcher/Cache/{HTTPHeader,HTTPFreshness,CacheEntryMetadata}.swift \
    Sources/AttachmentFetcher/Transfer/{SuggestedFileName,RedirectResponse}.swift \
    Fuzz/ResponseFuzzer.swift

# The response fuzzer's seeds: its first byte chooses what the rest is (see ResponseFuzzer.swift),
# odd for a body (the format: (byte / 2) % 7, in the order of the formats there), even for headers.
seed() { { printf "\\$(printf '%03o' "$1")"; cat; } > "$out/response-seeds/$2"; }
for file in Tests/Fixtures/media/*; do
    name=$(basename "$file")
    case "$name" in
        *.jpg) format=0 ;; *.png) format=1 ;; *.gif) format=2 ;; *.webp | *.wav | *.avi) format=3 ;; *.aiff) format=4 ;;
        *.mp4 | *.m4a | *.m4v | *.mov | *.heic | *.avif | *.3gp | *.3g2) format=5 ;; *.bmp) format=6 ;; *) continue ;;
    esac
    seed $((format * 2 + 1)) "$name" < "$file"
done
printf 'Cache-Control: max-age=600, no-cache="x"\r\nETag: "5f3a-1b2c"\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\nAge: 30\r\n' | seed 2 headers-cache
printf 'Expires: Sunday, 06-Nov-94 08:49:37 GMT\nVary: *\nContent-Disposition: attachment; filename*=UTF-8'"''"'a%%2Fb.jpg; filename="../c.png"\n' | seed 4 headers-expires
# A metadata attribute (selector 15): version 2, size, modification time, freshness, an ETag of
# 4 bytes, no Last-Modified, then the flags for a download time and a lifetime.
printf '\002\020\047\000\000\000\000\000\000\001\000\000\000\000\000\000\000\002\000\000\000\000\000\000\000\004\000"v1"\000\000\022\350\003\000\000\074\000\000\000' | seed 15 metadata
printf 'Cache-Control: no-store\nContent-Type: image/jpeg\nExpires: Sun Nov  6 08:49:37 1994\n' | seed 6 headers-no-store

# New inputs go to .build-fuzz/corpus and .build-fuzz/response-corpus; the seeds are read,
# never written. APNs caps a payload at 4 KB: twice that is explored; a response's headers or
# the start of its body, 64 KB.
"$out/payload-fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" Fuzz/corpus
"$out/response-fuzzer" -max_total_time="$response_seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/" "$out/response-corpus" "$out/response-seeds"
