#!/usr/bin/env bash
# Builds the package and its tests with ThreadSanitizer and runs the test suite under it. Any
# report fails the script: TSan makes the test process (and any instrumented child it runs, such
# as fetch-attachment) exit with status 66, and every process's reports, kept in files, are
# printed. Extra arguments go to `swift test`.
#
# The Swift modules are instrumented (`-Xswiftc -sanitize=thread`), in the usual build directory:
# the C targets keep the debug build's objects, since their commands do not change. Those are
# BoringSSL twice (swift-crypto's and swift-nio-ssl's, about 780 files: 300 s of this machine's
# 2 cores), NIO's system-call shims and this package's thin shims over libcurl and libmagic
# (`CCurl`, `CMagic`). TSan sees none of their memory accesses, as it never saw libcurl's or
# libmagic's (system libraries), and still sees every lock they take through pthreads; what it
# checks is this package's Swift code and its dependencies'. On 2026-11-28 the
# build took 387 s this way, after the debug build, where its own directory (`--sanitize=thread
# --scratch-path .build-tsan`) took 678–699 s. The price: the next `swift build` compiles the
# Swift modules again, without TSan.
#
# Skipped under TSan, because they assert timings that TSan's slowdown (several times, on every
# memory access) breaks, not behaviour that TSan would check any better:
# - DeadlineTests: each outcome within 100 ms of its deadline;
# - LoadTestTests: the load test's children checked against 100 ms deadline bounds, and its
#   scenarios sized for uninstrumented binaries;
# - HostileNameServerTests: a payload's deadline against a lookup that never ends, checked in
#   child processes run in a network namespace (TSan's builds of mock-cdn and fetch-attachment);
# - CLITests/demo: the demo's examples run against one deadline (6 s), one of them expected to miss it
#   and every other expected to make it;
# - CLITests/queueHint (and queueHintUnderLowFileLimit, which the pattern matches too): three
#   payloads of 2.5 s each against a 4 s timeout, one connection at a time, whose details depend
#   on which ran out where;
# - CLIRobustnessTests/payloadAtTheLimit: ten runs of the CLI that only parse their input, a
#   minute of CPU under TSan beside the suites with one-minute limits;
# - ResourceTests: campaigns of 3,000 payloads under `ulimit -n 1024`, sized for uninstrumented
#   binaries (TSan multiplies their time and memory); the cache and concurrency suites run the
#   same code paths under TSan;
# - ConcurrencyTests/twoThousandConnections: it counts the connections libcurl opens while the
#   server holds every response back 15 s; under TSan opening 2,000 takes longer than that, so
#   libcurl reuses some, and the suite's 2-minute limit cannot hold a longer wait.
# Skipped under TSan because what they check lies between processes, which TSan does not see:
# - CacheCrashTests: SIGKILL at 52 points of a batch and more, each a child process killed and
#   another that recovers the cache; the cache's in-process concurrency runs under TSan in the
#   other cache suites (CacheTests, CacheSafetyTests, CacheHolderTests, EvictionOrderTests…).
#   Alone under TSan it took 158 s of CPU, where the whole run took 382 s on two cores
#   (2026-11-28).
# The other tests' generous deadlines (10 s and up, never the thing under test) are made
# ATTACHMENT_FETCHER_TEST_TIME_SCALE times longer, and CLIRobustnessTests leaves out its memory
# bounds (TSan's shadow memory multiplies every peak).
#
# Locks: the package uses one lock type, `Locked` (NSLock, a pthread mutex TSan intercepts), and
# NIO's `NIOLockedValueBox` in the mock CDN, never `Synchronization.Mutex`, whose futex TSan does
# not see on Linux. Suppressions, if any, are in scripts/tsan-suppressions.txt, each with its
# reason.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build
log="$scratch/tsan-test.log"
# A Synchronization.Mutex in the package's own code would make TSan report its contended critical
# sections (see "Locks" above): refused here rather than found as a rare report under load.
if grep -rnE '\bMutex\s*[<(]' Sources Tests Fuzz --include='*.swift'; then
    echo "tsan.sh: use Locked (AttachmentFetcher/Locked.swift), not Synchronization.Mutex, whose futex ThreadSanitizer cannot see" >&2
    exit 1
fi
swift build --build-tests -Xswiftc -sanitize=thread
echo "tsan.sh: built after ${SECONDS} s" >&2
mkdir -p "$scratch"
# Every instrumented process writes its reports to a file of its own here (`log_path`, suffixed
# with its process id): a child whose output a test discards (fetch-attachment under
# CommandRunner.withRunning) still leaves what it found, printed below.
reports="$PWD/$scratch/tsan-reports"
rm -rf "$reports"
mkdir -p "$reports"
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt halt_on_error=0 second_deadlock_stack=1 history_size=4 log_path=$reports/report ${TSAN_OPTIONS:-}"
status=0
export ATTACHMENT_FETCHER_TEST_TIME_SCALE="${ATTACHMENT_FETCHER_TEST_TIME_SCALE:-6}"
# At most 8 tests at once, as scripts/test.sh says why.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}"
swift test --skip-build --skip 'DeadlineTests|LoadTestTests|ResourceTests|HostileNameServerTests|CLITests/demo|CLITests/queueHint|CLIRobustnessTests/payloadAtTheLimit|ConcurrencyTests/twoThousandConnections|CacheCrashTests' "$@" 2>&1 \
    | tee "$log" || status=$?
if compgen -G "$reports/report.*" > /dev/null; then
    cat "$reports"/report.* >&2
    echo "ThreadSanitizer reported $(cat "$reports"/report.* | grep -c 'WARNING: ThreadSanitizer') issue(s), in $(ls "$reports" | wc -l) process(es); reports in $reports" >&2
    exit 1
fi
exit "$status"
