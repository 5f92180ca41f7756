#!/usr/bin/env bash
# Measures the cache's cost against curl on the same file system (loopback only, bounded):
#   - 2,000 distinct 100 KB images from the mock CDN: `curl --parallel --parallel-max 64` writing the
#     files, `fetch-attachment --batch` with its defaults (cache on, a fresh cache each run) and with
#     `--no-cache`; RUNS alternating runs of each, the median wall time;
#   - a same-URL spike: 10,000 payloads for one URL on a fresh cache, and its origin requests;
#   - a warm cache: the 2,000 URLs again on a cache that holds them, against the hard-link floor
#     (`ln` of 2,000 files of 100 KB into a fresh directory, one process);
#   - with STRACE=1, one cached cold run under `strace -c -f` (syscalls per URL), and one under
#     `strace -f -ff` to tell which thread makes the file-system calls.
# Cache and output directories are on the file system under test; each of FILESYSTEMS is measured.
#
#   swift build -c release --product mock-cdn --product fetch-attachment
#   scripts/cache-ratio.sh [BIN_DIR]        (BIN_DIR: where the two executables are; default .build/release)
#
# Environment: RUNS (default 5), FILESYSTEMS (default "$PWD/.cache-ratio /dev/shm/cache-ratio"),
# STRACE (default 1). The machine's other load blurs these numbers: run it on a quiet machine to compare.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/release}
runs=${RUNS:-5}
filesystems=${FILESYSTEMS:-"$PWD/.cache-ratio /dev/shm/cache-ratio"}
count=2000
bytes=100000
spike=10000
limit=300 # seconds any one command may take

for tool in "$bin/mock-cdn" "$bin/fetch-attachment" /usr/bin/curl; do
    [[ -x $tool ]] || { echo "cache-ratio: $tool is missing" >&2; exit 1; }
done

work=$(mktemp -d)
server_pid=
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
    for fs in $filesystems; do rm -rf "$fs"; done
}
trap cleanup EXIT

"$bin/mock-cdn" --host 127.0.0.1 --port 0 --duration 3600 >"$work/port" 2>"$work/mock-cdn.log" &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
port=$(head -n1 "$work/port")
[[ $port =~ ^[0-9]+$ ]] || { echo "cache-ratio: the mock CDN did not start" >&2; exit 1; }
base="http://127.0.0.1:$port"

payload() { printf '{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"ab":{"att":{"url":"%s"}}}\n' "$1"; }
: >"$work/distinct.jsonl"
: >"$work/spike.jsonl"
for i in $(seq 0 $((count - 1))); do payload "$base/media/ratio-$i.jpg?bytes=$bytes" >>"$work/distinct.jsonl"; done
for _ in $(seq $spike); do payload "$base/media/spike.jpg?bytes=$bytes" >>"$work/spike.jsonl"; done

now() { date +%s.%N; }
# Runs a command with a time limit; prints its wall time in seconds; fails if it fails.
timed() {
    local start end
    start=$(now)
    timeout "$limit" "$@" >"$work/last.out" 2>"$work/last.err" || { echo "cache-ratio: failed: $*" >&2; tail -n 5 "$work/last.err" >&2; return 1; }
    end=$(now)
    echo "$end - $start" | bc
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
files() { find "$1" -type f | wc -l; }
attached() { grep -o '[0-9]* attached' "$work/last.err" | head -n1 | cut -d' ' -f1; }

echo "mock CDN on $base; $count URLs of $bytes bytes; $runs alternating runs; nproc $(nproc); load $(cut -d' ' -f1-3 /proc/loadavg)"
for fs in $filesystems; do
    mkdir -p "$fs"
    echo "== $fs ($(stat -f -c %T "$fs"))"
    : >"$work/curl.t"; : >"$work/cache.t"; : >"$work/nocache.t"
    {
        for i in $(seq 0 $((count - 1))); do
            printf 'url = "%s"\noutput = "%s/curl-out/%d.jpg"\n' "$base/media/ratio-$i.jpg?bytes=$bytes" "$fs" "$i"
        done
    } >"$work/curl.config"
    for run in $(seq "$runs"); do
        rm -rf "$fs/curl-out"; mkdir -p "$fs/curl-out"
        timed curl --parallel --parallel-max 64 --silent --show-error --fail --config "$work/curl.config" >>"$work/curl.t"
        [[ $(files "$fs/curl-out") == "$count" ]] || echo "  curl run $run wrote $(files "$fs/curl-out") files" >&2

        rm -rf "$fs/out" "$fs/cache"
        timed "$bin/fetch-attachment" --batch "$work/distinct.jsonl" --allow-private-networks \
            --output-dir "$fs/out" --cache-dir "$fs/cache" >>"$work/cache.t"
        [[ $(attached) == "$count" ]] || echo "  cached run $run attached $(attached)" >&2

        rm -rf "$fs/out" "$fs/cache"
        timed "$bin/fetch-attachment" --batch "$work/distinct.jsonl" --allow-private-networks \
            --output-dir "$fs/out" --no-cache >>"$work/nocache.t"
        [[ $(attached) == "$count" ]] || echo "  uncached run $run attached $(attached)" >&2
    done
    c=$(median <"$work/curl.t"); k=$(median <"$work/cache.t"); n=$(median <"$work/nocache.t")
    echo "  curl --parallel-max 64 : median $c s  (runs: $(tr '\n' ' ' <"$work/curl.t"))"
    echo "  fetch-attachment cache : median $k s  (runs: $(tr '\n' ' ' <"$work/cache.t"))  = $(echo "scale=2; $c / $k" | bc)x curl"
    echo "  fetch-attachment --no-cache: median $n s  (runs: $(tr '\n' ' ' <"$work/nocache.t"))  = $(echo "scale=2; $c / $n" | bc)x curl"

    rm -rf "$fs/out" "$fs/cache"
    s=$(timed "$bin/fetch-attachment" --batch "$work/spike.jsonl" --allow-private-networks --output-dir "$fs/out" --cache-dir "$fs/cache")
    echo "  same-URL spike: $spike payloads in $s s, $(attached) attached; $(grep -o 'origin requests [0-9]*' "$work/last.err")"

    # Warm cache: fill it once, then alternate fetch-attachment (a fresh output directory) with the floor.
    rm -rf "$fs/out" "$fs/cache"
    timed "$bin/fetch-attachment" --batch "$work/distinct.jsonl" --allow-private-networks --output-dir "$fs/out" --cache-dir "$fs/cache" >/dev/null
    : >"$work/warm.t"; : >"$work/floor.t"
    for run in $(seq "$runs"); do
        rm -rf "$fs/out"
        timed "$bin/fetch-attachment" --batch "$work/distinct.jsonl" --allow-private-networks \
            --output-dir "$fs/out" --cache-dir "$fs/cache" >>"$work/warm.t"
        [[ $(attached) == "$count" ]] || echo "  warm run $run attached $(attached)" >&2
        grep -q "origin requests 0 " "$work/last.err" || echo "  warm run $run: $(grep -o 'origin requests [0-9]*' "$work/last.err")" >&2
        rm -rf "$fs/links"; mkdir -p "$fs/links"
        timed ln -t "$fs/links" "$fs"/curl-out/*.jpg >>"$work/floor.t"
    done
    w=$(median <"$work/warm.t"); f=$(median <"$work/floor.t")
    echo "  warm cache             : median $w s  (runs: $(tr '\n' ' ' <"$work/warm.t"))"
    echo "  hard-link floor (ln)   : median $f s  (runs: $(tr '\n' ' ' <"$work/floor.t"))  fetch-attachment = $(echo "scale=3; $f / $w * 100" | bc) % of the floor"

    if [[ ${STRACE:-1} == 1 && $fs == "${filesystems%% *}" ]]; then
        rm -rf "$fs/out" "$fs/cache"
        timeout "$limit" strace -c -f -o "$work/strace-c.txt" "$bin/fetch-attachment" --batch "$work/distinct.jsonl" \
            --allow-private-networks --output-dir "$fs/out" --cache-dir "$fs/cache" >/dev/null 2>&1
        echo "  strace -c -f, cached cold run (calls per URL = calls / $count):"
        awk -v n="$count" 'NR > 2 && $1 ~ /^[0-9.]+$/ && NF >= 5 {
            calls = $4; name = $NF; printf "    %-14s %6.2f %% time  %8d calls  %6.2f per URL\n", name, $1, calls, calls / n }' \
            "$work/strace-c.txt" | head -n 16
        grep -E '^-+|total' "$work/strace-c.txt" | tail -n 1 | sed 's/^/    /'
        # Per thread: which threads receive from sockets and which make the file calls.
        rm -rf "$fs/out" "$fs/cache" "$work/ff"; mkdir -p "$work/ff"
        timeout "$limit" strace -f -ff -o "$work/ff/t" -e trace=openat,read,write,pwrite64,recvfrom,recvmsg,linkat,link,rename,renameat,renameat2,fsync,fdatasync,flock,fcntl,fsetxattr,fgetxattr,unlink,unlinkat,fstat,newfstatat,statx \
            "$bin/fetch-attachment" --batch "$work/distinct.jsonl" --allow-private-networks \
            --output-dir "$fs/out" --cache-dir "$fs/cache" >/dev/null 2>&1 &
        local_strace=$!
        # The threads' names, read while the process runs (bounded: 20 s).
        : >"$work/names"
        for _ in $(seq 200); do
            # timeout -> strace -> fetch-attachment (whose name the kernel cuts to 15 characters)
            for pid in $(for tracer in $(pgrep -P "$local_strace"); do pgrep -x fetch-attachmen -P "$tracer"; done); do
                for task in /proc/"$pid"/task/*; do echo "${task##*/} $(cat "$task/comm" 2>/dev/null)"; done >>"$work/names"
            done
            kill -0 "$local_strace" 2>/dev/null || break
            sleep 0.1
        done
        wait "$local_strace" || true
        echo "  per thread (strace -ff; threads with over 1,000 calls): tid name: recv, openat, link*, rename*, fsync, flock/fcntl, xattr, read, write"
        for f in "$work"/ff/t.*; do
            awk -v tid="${f##*.} $(awk -v t="${f##*.}" '$1 == t { print $2; exit }' "$work/names")" '
                /^recv/ { r++ } /^openat/ { o++ } /^link/ { l++ } /^rename/ { m++ } /^f(data)?sync/ { s++ }
                /^(flock|fcntl)/ { k++ } /^f[gs]etxattr/ { x++ } /^read\(/ { rd++ } /^(p?write)/ { w++ }
                END { t = r + o + l + m + s + k + x + rd + w; if (t > 1000) printf "    %s: %d, %d, %d, %d, %d, %d, %d, %d, %d\n", tid, r, o, l, m, s, k, x, rd, w }' "$f"
        done
    fi
    rm -rf "$fs"
done
