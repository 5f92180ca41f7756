@testable import AttachmentFetcher
import Crypto
import Foundation
import MockCDN
import SystemPackage
import Testing

/// A process killed anywhere leaves nothing a later run serves as a whole body; processes in
/// other PID namespaces never take each other's downloads for a crash's leftovers.
// The limit guards against a hang, and grows with the other generous bounds under ThreadSanitizer
// (ATTACHMENT_FETCHER_TEST_TIME_SCALE): 52 killed runs and a whole one took about 4 minutes
// there on a slow machine.
@Suite("Cache crashes: SIGKILL at many points, PID namespaces", .timeLimit(.minutes(4 * TestTiming.scale)))
struct CacheCrashTests {
    /// Every entry in `cache` is whole: a regular file with its metadata, whose size matches it
    /// and whose bytes are the mock CDN's JPEG of that size (every URL here is one); and nothing
    /// named is left in `tmp/`. Returns how many entries there are.
    private func checkEntries(in cache: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let entries = cache + "/entries"
        var count = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: entries) {
            let file = try FileDescriptor.open(FilePath(entries + "/" + name), .readOnly, options: [.noFollow])
            defer { try? file.close() }
            let status = try file.stat()
            #expect(status.type == .regular, "\(name)", sourceLocation: sourceLocation)
            let bytes = try #require(try Syscalls.attribute(CacheEntryMetadata.attributeName, of: file), sourceLocation: sourceLocation)
            let metadata = try #require(CacheEntryMetadata.decode(bytes), sourceLocation: sourceLocation)
            #expect(metadata.size == Int(status.size), "\(name)", sourceLocation: sourceLocation)
            let body = try Data(contentsOf: URL(fileURLWithPath: entries + "/" + name))
            #expect(Array(body) == SyntheticMedia.body(extension: "jpg", size: metadata.size), "\(name)", sourceLocation: sourceLocation)
            count += 1
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/tmp").isEmpty, sourceLocation: sourceLocation)
        return count
    }

    @Test("SIGKILL at 52 points of a batch leaves only whole entries, and a later run serves the right bytes")
    func killedAtManyPoints() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.cacheDirectory)
            var killedWithEntries = 0
            var lastRun: [String] = []
            // Eight distinct URLs per run, their bodies ending at staggered times.
            func lines(_ run: String) -> (paths: [String], text: String) {
                let paths = (0..<8).map { "/media/k\(run)-\($0).jpg?bytes=\(60_000 + $0 * 10_000)&delay_ms=\($0 * 15)" }
                return (paths, paths.map { String(decoding: fixture.braze($0), as: UTF8.self) }.joined(separator: "\n") + "\n")
            }
            // How long a whole run takes on this machine, in this build (several times longer
            // under ThreadSanitizer): the kill points are spread over it.
            let started = ContinuousClock.now
            let whole = try await CommandRunner.run(
                "fetch-attachment",
                ["--batch", "-", "--cache-dir", cache, "--output-dir", fixture.directory + "/whole", "--allow-private-networks"],
                stdin: Data(lines("whole").text.utf8), timeout: .seconds(120))
            #expect(whole.status == 0, "\(whole.stderr)")
            let span = max(started.duration(to: .now), .milliseconds(400))
            let entriesDirectory = cache + "/entries"
            for run in 0..<52 {
                let (paths, text) = lines("\(run)")
                let before = try checkEntries(in: cache)
                // Even runs: killed at a time spread over the whole run's span. Odd runs: killed
                // as soon as the run has stored 1 to 6 of its 8 entries, whatever this machine's
                // load makes of the span (under load, every timed kill may come before the first
                // entry).
                let delay = span * run / 52
                let storedBeforeKill = run.isMultiple(of: 2) ? nil : 1 + (run / 2) % 6
                let (status, _) = try await CommandRunner.withRunning(
                    "fetch-attachment",
                    ["--batch", "-", "--cache-dir", cache, "--output-dir", fixture.directory + "/k\(run)", "--allow-private-networks"],
                    stdin: Data(text.utf8)
                ) { program in
                    if let storedBeforeKill {
                        // Polled every 2 ms, for at most 30 s.
                        for _ in 0..<15_000 {
                            let count = (try? FileManager.default.contentsOfDirectory(atPath: entriesDirectory).count) ?? 0
                            if count >= before + storedBeforeKill { break }
                            try await Task.sleep(for: .milliseconds(2))
                        }
                    } else {
                        try await Task.sleep(for: delay)
                    }
                    program.send(SIGKILL)
                }
                // Killed after it had stored some of its own entries, before it had them all.
                let entries = try checkEntries(in: cache)
                if status == SIGKILL, entries > before { killedWithEntries += 1 }
                lastRun = paths
            }
            // Some kills came while entries were being made, not only before or after.
            #expect(killedWithEntries > 0)
            // A later run: every body it gets is the origin's, served or downloaded.
            let next = try fixture.anotherFetcher()
            for path in lastRun {
                let outcome = await next.process(fixture.braze(path))
                #expect(outcome.status == .attached)
                let file = try #require(outcome.attachments.first?.path)
                let size = Int(path.split(separator: "=")[1].split(separator: "&")[0])!
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: file))) == SyntheticMedia.body(extension: "jpg", size: size))
            }
            await next.shutdown()
        }
    }

    /// Whether this machine lets us make PID namespaces (root, or unprivileged user namespaces).
    /// Run through swift-subprocess: Foundation's `Process.run()` can crash a process with many
    /// descriptors open (see `SelfSignedCertificate.make`).
    static func canUnshare() async -> Bool {
        let result = try? await CommandRunner.run("/usr/bin/unshare", ["--pid", "--fork", "--mount-proc", "/bin/true"], timeout: .seconds(30))
        return result?.status == 0
    }

    /// Whether this machine lets us mount a tmpfs in a mount namespace of our own.
    static func canMount() async -> Bool {
        let result = try? await CommandRunner.run(
            "/usr/bin/unshare", ["-rm", "/bin/sh", "-c", "mount -t tmpfs tmpfs /mnt"], timeout: .seconds(30))
        return result?.status == 0
    }

    @Test(
        "An output directory on another file system than the cache gets copies: a miss, its waiters and a later hit",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func outputOnAnotherFileSystem() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.cacheDirectory)
            let output = fixture.directory + "/elsewhere"
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            let lines = ["/media/far.jpg?bytes=30000&delay_ms=300", "/media/far.jpg?bytes=30000&delay_ms=300", "/media/near.png?bytes=4000&cache_control=no-store"]
                .map { String(decoding: fixture.braze($0), as: UTF8.self) }.joined(separator: "\n") + "\n"
            // The tmpfs is mounted in a namespace of the test's own; two runs, the second all hits.
            let script = #"mount -t tmpfs tmpfs "$1" && "$0" --batch - --json --cache-dir "$2" --output-dir "$1" --allow-private-networks < "$3" && "$0" --batch - --json --cache-dir "$2" --output-dir "$1" --allow-private-networks < "$3" && ls "$1" | wc -l"#
            let input = fixture.directory + "/campaign.jsonl"
            try Data(lines.utf8).write(to: URL(fileURLWithPath: input))
            let result = try await Self.inMountNamespace(script, [output, cache, input])
            let outputLines = result.stdout.split(separator: "\n")
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(outputLines.count == 7 && outputLines.dropLast().allSatisfy { $0.contains(#""status":"attached""#) }, "\(result.stdout)")
            #expect(outputLines.last == "6", "\(result.stdout)")
            #expect(fixture.server.stats().requestsPerURL.values.reduce(0, +) == 3, "\(fixture.server.stats().requestsPerURL)")
        }
    }

    @Test(
        "A full disk under the cache loses no payload whose output directory has room; under both, it is storage, said of the directory, leaving nothing behind, and a body that fits is served after",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func fullDisk() async throws {
        try await Fixture.with(cached: true) { fixture in
            let small = fixture.directory + "/small"
            let roomy = fixture.directory + "/roomy"
            for directory in [small, roomy] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            let big = try Self.writeLine(fixture.braze("/media/big.jpg?bytes=3000000"), in: fixture.directory + "/big.json")
            let fits = try Self.writeLine(fixture.braze("/media/fits.jpg?bytes=20000"), in: fixture.directory + "/fits.json")
            // A 1 MiB tmpfs holds the cache and the output; the 3 MB body cannot fit. Then the
            // same body with the output directory elsewhere: served from there, not kept.
            let script = #"mount -t tmpfs -o size=1m tmpfs "$1" && "$0" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks "$2"; "$0" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks "$3"; "$0" --json --cache-dir "$1/cache" --output-dir "$4" --allow-private-networks "$2"; ls -A "$1/cache/tmp" "$1/out""#
            let result = try await Self.inMountNamespace(script, [small, big, fits, roomy])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let full = try #require(lines.first)
            #expect(full.contains(#""reason":"storage""#) && full.contains("No space left on device"), "\(full)")
            #expect(full.contains("\(small)/out") && !full.contains("/proc/self/fd"), "\(full)")
            #expect(lines.count > 2 && lines[1].contains(#""status":"attached""#), "\(result.stdout)")
            #expect(lines.count > 2 && lines[2].contains(#""status":"attached""#) && lines[2].contains(#""bytes":3000000"#), "\(result.stdout)")
            #expect(result.stderr.contains("the cache could not take every body"), "\(result.stderr)")
            // Nothing in tmp/, and only the file that fitted in the output directory.
            #expect(lines.dropFirst(3).filter { !$0.isEmpty && !$0.hasSuffix(":") }.count == 1, "\(result.stdout)")
        }
    }

    @Test(
        "A disk full of the cache's own old entries makes room: the least recently used entries no output links go, and every new body is attached and kept, saying so once",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func fullDiskMakesRoom() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/small"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            // A 2 MiB tmpfs: the first campaign's 15 bodies (1.5 MB) fill most of it; their
            // outputs go. The second campaign's 15 fit only if old entries go. One body at a
            // time: bodies streaming together take the room one of them made before its one
            // retry (a known limit of making room), which this test is not about.
            let script = #"""
                mount -t tmpfs -o size=2m tmpfs "$1" || exit 9
                "$0" --batch "$2" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks >/dev/null; rm -rf "$1/out"
                "$0" --batch "$3" --concurrency 1 --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks; echo "status $?"
                "$0" cache stats --json --cache-dir "$1/cache"
                """#
            let result = try await Self.inMountNamespace(script, [place, try Self.campaign(fixture, "old", 1...15), try Self.campaign(fixture, "new", 1...15)])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let failed = lines.filter { $0.hasPrefix("{\"attachments\"") && !$0.contains(#""status":"attached""#) }
            #expect(lines.filter { $0.contains(#""status":"attached""#) }.count == 15, "\(failed.first ?? "")\n\(result.stderr)")
            #expect(lines.contains("status 0"), "\(result.stderr)")
            let stderr = result.stderr.unwrapped
            #expect(!stderr.contains("could not take every body"), "\(result.stderr)")
            #expect(stderr.contains("to make room"), "\(result.stderr)")
            // Each new body downloaded once at most twice (a write that ran out of room is tried
            // again once), and kept: the cache holds the 15 new entries.
            let stats = fixture.server.stats()
            let newRequests = (1...15).map { stats.requestsPerPath["/media/new\($0).jpg"] ?? 0 }
            #expect(newRequests.allSatisfy { (1...2).contains($0) }, "\(newRequests)")
            let cacheStats = try #require(Self.cacheStats(lines), "\(result.stdout)")
            #expect((cacheStats["entries"] as? Int).map { $0 >= 15 } == true, "\(cacheStats)")
        }
    }

    @Test(
        "A burst that outgrows a small cache disk keeps what it stored: making room takes no entry used in the last seconds of this run (the burst's own), so the bodies that do not fit go unkept instead of evicting the ones that did",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func burstKeepsItsEntries() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/small"
            let output = fixture.directory + "/out"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            // 40 bodies of 100 KB at once, a 2 MiB disk for the cache, the output elsewhere
            // (copies: every entry could be evicted to free its blocks).
            let script = #"""
                mount -t tmpfs -o size=2m tmpfs "$1" || exit 9
                "$0" --batch "$2" --json --timeout 20 --cache-dir "$1/cache" --output-dir "$3" --allow-private-networks; echo "status $?"
                "$0" cache stats --json --cache-dir "$1/cache"
                """#
            let result = try await Self.inMountNamespace(script, [place, try Self.campaign(fixture, "burst", 1...40), output])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.filter { $0.contains(#""status":"attached""#) }.count == 40, "\(result.stderr)")
            #expect(lines.contains("status 0"), "\(result.stderr)")
            #expect(!result.stderr.unwrapped.contains("to make room"), "\(result.stderr)")
            let cacheStats = try #require(Self.cacheStats(lines), "\(result.stdout)")
            #expect((cacheStats["entries"] as? Int).map { $0 >= 8 } == true, "\(cacheStats) \(result.stderr)")
        }
    }

    @Test(
        "Making room evicts about twice the body's size, not the whole cache: on a disk filled by other data, where that much can never be free, most entries stay",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func fullDiskEvictsOnlyWhatItNeeds() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/small"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            let kept = try Self.campaign(fixture, "kept", 1...20)
            let big = try Self.writeLine(fixture.braze("/media/big.jpg?bytes=400000"), in: fixture.directory + "/big.json")
            // 4 MiB: 2 MB of somebody's data, 20 entries of 100 KB (their outputs gone), about
            // 0.19 MB free; a 400 KB body runs out of room and wants 800 KB freed.
            let script = #"""
                mount -t tmpfs -o size=4m tmpfs "$1" || exit 9
                head -c 2000000 /dev/zero > "$1/other-data"
                "$0" --batch "$2" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks >/dev/null; rm -rf "$1/out"
                "$0" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks "$3"; echo "status $?"
                "$0" cache stats --json --cache-dir "$1/cache"
                """#
            let result = try await Self.inMountNamespace(script, [place, kept, big])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains("status 0"), "\(result.stdout)\(result.stderr)")
            let cacheStats = try #require(Self.cacheStats(lines), "\(result.stdout)")
            // 8 or so of the 20 went (a few more if the retry met a short disk again), and the new one came.
            let entries = try #require(cacheStats["entries"] as? Int)
            #expect((11...15).contains(entries), "\(cacheStats) \(result.stderr)")
        }
    }

    @Test(
        "A disk full of entries that outputs still link (removing them frees nothing) keeps them: the payloads that do not fit are storage, said of the disk",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func fullDiskOfLinkedEntries() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/small"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            // The first campaign's 15 entries are linked from its outputs, kept: removing them
            // would free nothing, and they stay.
            let script = #"""
                mount -t tmpfs -o size=2m tmpfs "$1" || exit 9
                "$0" --batch "$2" --json --cache-dir "$1/cache" --output-dir "$1/kept" --allow-private-networks >/dev/null
                "$0" --batch "$3" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks; echo "status $?"
                echo "kept $(ls "$1/kept" | wc -l)"
                "$0" cache stats --json --cache-dir "$1/cache"
                """#
            let result = try await Self.inMountNamespace(script, [place, try Self.campaign(fixture, "linked", 1...15), try Self.campaign(fixture, "more", 1...15)])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains("status 1"), "\(result.stdout)\(result.stderr)")
            #expect(lines.contains { $0.contains(#""reason":"storage""#) && $0.contains("No space left on device") }, "\(result.stdout)")
            let cacheStats = try #require(Self.cacheStats(lines), "\(result.stdout)")
            // The 15 linked entries are all still there.
            #expect((cacheStats["entries"] as? Int).map { $0 >= 15 } == true, "\(cacheStats)")
            #expect(lines.contains("kept 15"), "\(result.stdout)")
        }
    }

    @Test(
        "cache clear and cache prune on a read-only cache say what they could not remove, and exit 1",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func clearReadOnly() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/ro"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            let payload = try Self.writeLine(fixture.braze("/media/kept.jpg?bytes=2000"), in: fixture.directory + "/kept.json")
            let script = #"mount -t tmpfs tmpfs "$1" && "$0" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks "$2" >/dev/null && mount -o remount,ro "$1" && "$0" cache prune --cache-max-bytes 1 --cache-dir "$1/cache"; echo "prune status $?"; "$0" cache clear --cache-dir "$1/cache"; echo "status $?"; "$0" cache stats --json --cache-dir "$1/cache""#
            let result = try await Self.inMountNamespace(script, [place, payload])
            #expect(result.stdout.contains("prune status 1") && result.stdout.contains("\nstatus 1"), "\(result.stdout)\(result.stderr)")
            #expect(result.stderr.components(separatedBy: "cannot remove \(place)/cache/entries/").count == 3 && result.stderr.contains("Read-only file system"), "\(result.stderr)")
            #expect(result.stdout.contains(#""entries":1"#), "\(result.stdout)")
        }
    }

    @Test(
        "A cache on a read-only file system (a warmed cache in an image's read-only layer) serves its entries and downloads the rest into the output directory, saying so",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func readOnlyCacheServes() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/ro"
            let output = fixture.directory + "/out"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            let stored = try Self.writeLine(fixture.braze("/media/warmed.jpg?bytes=3000"), in: fixture.directory + "/stored.json")
            let missing = try Self.writeLine(fixture.braze("/media/absent.jpg?bytes=4000"), in: fixture.directory + "/missing.json")
            // Warmed on a writable tmpfs, then made read-only; the output directory is on another
            // file system, which takes copies.
            let script = #"""
                mount -t tmpfs tmpfs "$1" && "$0" --json --cache-dir "$1/cache" --output-dir "$1/warm" --allow-private-networks "$3" >/dev/null && mount -o remount,ro "$1" || exit 9
                for payload in "$3" "$4"; do "$0" --json --cache-dir "$1/cache" --output-dir "$2" --allow-private-networks "$payload"; echo "status $?"; done
                "$0" cache stats --json --cache-dir "$1/cache"
                """#
            let result = try await Self.inMountNamespace(script, [place, output, stored, missing])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.filter { $0 == "status 0" }.count == 2, "\(result.stdout)\(result.stderr)")
            #expect(lines.filter { $0.contains(#""status":"attached""#) }.count == 2, "\(result.stdout)")
            #expect(result.stderr.unwrapped.contains("this cache's entries are served, and no download is added to them"), "\(result.stderr)")
            // The warmed entry came from the cache; the missing one from the origin, once; the cache still holds one entry.
            #expect(fixture.server.stats().requestsPerPath["/media/warmed.jpg"] == 1)
            #expect(fixture.server.stats().requestsPerPath["/media/absent.jpg"] == 1)
            #expect(result.stdout.contains(#""entries":1"#), "\(result.stdout)")
            let files = try FileManager.default.contentsOfDirectory(atPath: output)
            #expect(files.count == 2, "\(files)")
        }
    }

    @Test(
        "A stale entry of a read-only cache that the origin confirms (304) is served from the open entry, and the cache's write problem said; not lost as storage",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func readOnlyCacheRevalidates() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/ro"
            let output = fixture.directory + "/out"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            // Stale at once (no-cache), with a validator: every use asks the origin, which answers 304.
            let payload = try Self.writeLine(fixture.braze("/media/confirmed.jpg?bytes=3000&cache_control=no-cache&etag=%22v1%22"), in: fixture.directory + "/confirmed.json")
            let script = #"""
                mount -t tmpfs tmpfs "$1" && "$0" --json --cache-dir "$1/cache" --output-dir "$1/warm" --allow-private-networks "$3" >/dev/null && mount -o remount,ro "$1" || exit 9
                for run in 1 2; do "$0" --json --cache-dir "$1/cache" --output-dir "$2" --allow-private-networks "$3"; echo "status $?"; done
                """#
            let result = try await Self.inMountNamespace(script, [place, output, payload])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.filter { $0 == "status 0" }.count == 2, "\(result.stdout)\(result.stderr)")
            #expect(lines.filter { $0.contains(#""status":"attached""#) && $0.contains(#""bytes":3000"#) }.count == 2, "\(result.stdout)")
            let stats = fixture.server.stats()
            #expect(stats.requestsPerPath["/media/confirmed.jpg"] == 3 && stats.notModifiedResponses == 2, "\(stats)")
            #expect(result.stderr.unwrapped.contains("cannot refresh"), "\(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: output).count == 2)
        }
    }

    @Test(
        "A cache on a file system without extended attributes (ramfs; tmpfs before Linux 6.6) says so when it opens, keeps nothing, and every payload is attached",
        .enabled("unshare -rm cannot mount here") { await CacheCrashTests.canMount() })
    func noExtendedAttributes() async throws {
        try await Fixture.with(cached: true) { fixture in
            let place = fixture.directory + "/ramfs"
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
            let payload = try Self.writeLine(fixture.braze("/media/plain.jpg?bytes=3000"), in: fixture.directory + "/plain.json")
            let script = #"""
                mount -t ramfs ramfs "$1" || exit 9
                for run in 1 2; do "$0" --json --cache-dir "$1/cache" --output-dir "$1/out" --allow-private-networks "$2"; echo "status $?"; done
                "$0" cache stats --json --cache-dir "$1/cache"
                """#
            let result = try await Self.inMountNamespace(script, [place, payload])
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.filter { $0 == "status 0" }.count == 2, "\(result.stdout)\(result.stderr)")
            #expect(lines.filter { $0.contains(#""status":"attached""#) }.count == 2, "\(result.stdout)")
            // Said when the cache opens, in words that name the cause, each run; not as a failure
            // to store each body.
            let stderr = result.stderr.unwrapped
            #expect(
                stderr.components(separatedBy: "keeps no extended attributes").count - 1 == 2
                    && stderr.contains("this cache's entries are served, and no download is added to them"), "\(result.stderr)")
            #expect(!stderr.contains("cannot store"), "\(result.stderr)")
            // Nothing kept: each run downloads; `cache stats` says why.
            #expect(fixture.server.stats().requestsPerPath["/media/plain.jpg"] == 2)
            let stats = try #require(Self.cacheStats(lines), "\(result.stdout)")
            #expect(stats["entries"] as? Int == 0)
            #expect((stats["store_problem"] as? String)?.contains("keeps no extended attributes") == true, "\(stats)")
        }
    }

    /// Runs `script` with `sh -c` in a user and mount namespace of its own (`unshare -rm`, where
    /// it may mount file systems), `$0` the fetch-attachment binary and `$1`… `arguments`.
    private static func inMountNamespace(_ script: String, _ arguments: [String]) async throws -> CommandRunner.Result {
        try await CommandRunner.run(
            "/usr/bin/unshare", ["-rm", "/bin/sh", "-c", script, CommandRunner.fetchAttachmentPath] + arguments, stdin: Data(),
            timeout: .seconds(60))
    }

    private static func writeLine(_ payload: Data, in path: String) throws -> String {
        try payload.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A batch file of Braze payloads for `/media/<name><n>.jpg`, 100 KB each, for each `n`.
    private static func campaign(_ fixture: Fixture, _ name: String, _ range: ClosedRange<Int>) throws -> String {
        let lines = range.map { String(decoding: fixture.braze("/media/\(name)\($0).jpg?bytes=100000"), as: UTF8.self) }
        return try writeLine(Data((lines.joined(separator: "\n") + "\n").utf8), in: fixture.directory + "/\(name).jsonl")
    }

    /// The object of `cache stats --json`, the last line of `lines`.
    private static func cacheStats(_ lines: [String]) -> [String: Any]? {
        lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test(
        "Two processes in different PID namespaces on one cache do not delete each other's downloads",
        .enabled("unshare --pid is refused here") { await CacheCrashTests.canUnshare() })
    func pidNamespaces() async throws {
        try await Fixture.with(cached: true) { fixture in
            let cache = try #require(fixture.cacheDirectory)
            let program = CommandRunner.fetchAttachmentPath
            // The first: started after 80 other processes in its namespace, so that its pid there
            // (above 80) names no process or thread in the second's; twenty slow bodies.
            let lines = (0..<20).map { String(decoding: fixture.braze("/media/ns\($0).jpg?bytes=200000&rate=150000"), as: UTF8.self) }
                .joined(separator: "\n") + "\n"
            let first = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: first) }
            let server = fixture.server
            async let slow = CommandRunner.run(
                "/usr/bin/unshare",
                ["--pid", "--fork", "--mount-proc", "/bin/sh", "-c", "for i in $(seq 80); do /bin/true; done; exec \"$0\" \"$@\"", program, "--batch", "-", "--cache-dir", cache,
                 "--output-dir", first, "--allow-private-networks", "--deadline", "30"],
                stdin: Data(lines.utf8))
            // Once its bodies stream, the second starts in a namespace of its own (pid 1 there).
            try await TestTiming.wait(atMost: .seconds(5)) { server.stats().bytesSent >= 100_000 }
            let second = try await CommandRunner.run(
                "/usr/bin/unshare",
                ["--pid", "--fork", "--mount-proc", program, "--cache-dir", cache, "--output-dir", fixture.directory + "/second",
                 "--allow-private-networks"],
                stdin: fixture.braze("/media/other.png?bytes=2000"))
            #expect(second.status == 0, "\(second.stderr)")
            let result = try await slow
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: first).count == 20)
        }
    }
}
