import AsyncHTTPClient
import AttachmentFetcher
import Benchmark
import Foundation
import MockCDN
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Benchmarks of AttachmentFetcher through its public API, against a MockCDN started in this process
// on 127.0.0.1 (no other address is ever contacted). Metrics: wall clock, mallocs, peak resident
// memory. Tolerances are below; the p90 values they apply to are committed in ../../Thresholds/.

/// The spike: distinct URLs downloaded at once.
private let spikeCount = 200
/// The spike's body size (a JPEG).
private let spikeBytes = 20_000
/// Connections per host for every contender of the spike: AttachmentFetcher's default.
private let spikeConnections = 48

/// Everything one benchmark needs, made in its setup and torn down after its last iteration.
final class Fixture: Sendable {
    /// The loopback origin.
    let server: MockCDNServer
    /// A scratch directory, removed at teardown.
    let directory: String
    /// The fetcher under test, if the benchmark uses one.
    let fetcher: PushAttachmentFetcher?
    /// The AsyncHTTPClient baseline, if the benchmark uses it.
    let client: HTTPClient?
    /// The URLSession baseline, if the benchmark uses it.
    let session: URLSession?

    private init(
        server: MockCDNServer, directory: String, fetcher: PushAttachmentFetcher?, client: HTTPClient?, session: URLSession?
    ) {
        self.server = server
        self.directory = directory
        self.fetcher = fetcher
        self.client = client
        self.session = session
    }

    /// The fixture of the running benchmark (benchmarks run one at a time).
    private static let current = Mutex<Fixture?>(nil)

    /// The fixture made by the running benchmark's setup.
    static var shared: Fixture {
        guard let fixture = current.withLock({ $0 }) else { fatalError("the benchmark's setup did not run") }
        return fixture
    }

    /// Starts the origin and, as asked, a fetcher (with or without a cache), an AsyncHTTPClient or
    /// a URLSession.
    static func setUp(
        fetcher wantsFetcher: Bool, cache: Bool = false, client wantsClient: Bool = false, session wantsSession: Bool = false
    ) async throws {
        let server = try await MockCDNServer.start(host: "127.0.0.1", port: 0, eventLoopThreads: 1)
        let directory = NSTemporaryDirectory() + "attachment-fetcher-benchmark-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
        var fetcher: PushAttachmentFetcher?
        if wantsFetcher {
            var configuration = PushAttachmentFetcher.Configuration(outputDirectory: directory + "/out", timeout: .seconds(30))
            // The mock CDN is on loopback, which the default address policy refuses.
            configuration.addressPolicy = .init(allowsPrivateNetworks: true)
            if cache { configuration.cache = .init(directory: directory + "/cache") }
            fetcher = try PushAttachmentFetcher(configuration: configuration)
        }
        var client: HTTPClient?
        if wantsClient {
            var configuration = HTTPClient.Configuration()
            // The same per-host limit as AttachmentFetcher's default.
            configuration.connectionPool = .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: spikeConnections)
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }
        var session: URLSession?
        if wantsSession {
            // As the load test's `urlsession-fetch`: the same per-host limit, no cache.
            let configuration = URLSessionConfiguration.default
            configuration.httpMaximumConnectionsPerHost = spikeConnections
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.urlCache = nil
            session = URLSession(configuration: configuration)
        }
        let fixture = Fixture(server: server, directory: directory, fetcher: fetcher, client: client, session: session)
        current.withLock { $0 = fixture }
    }

    /// Shuts everything down and removes the scratch directory.
    static func tearDown() async throws {
        guard let fixture = current.withLock({ fixture in defer { fixture = nil }; return fixture }) else { return }
        await fixture.fetcher?.shutdown()
        try await fixture.client?.shutdown()
        fixture.session?.invalidateAndCancel()
        try await fixture.server.shutdown()
        try? FileManager.default.removeItem(atPath: fixture.directory)
    }

    /// Empties the output directory (between iterations, outside the measurement).
    func clearOutput() throws {
        let output = directory + "/out"
        for name in try FileManager.default.contentsOfDirectory(atPath: output) {
            try FileManager.default.removeItem(atPath: output + "/" + name)
        }
    }

    /// The spike's URLs.
    var spikeURLs: [String] {
        (0..<spikeCount).map { server.url("/media/spike-\($0).jpg?bytes=\(spikeBytes)") }
    }

    /// Iterations that asked for `missURLs()`.
    private let misses = Mutex(0)

    /// The spike's count of URLs no earlier call returned: each iteration's are new to the cache.
    func missURLs() -> [String] {
        let iteration = misses.withLock { count in
            defer { count += 1 }
            return count
        }
        return (0..<spikeCount).map { server.url("/media/miss-\(iteration)-\($0).jpg?bytes=\(spikeBytes)") }
    }

    /// How many files of the spike's size the output directory holds.
    func spikeFilesSaved() throws -> Int {
        let output = directory + "/out"
        return try FileManager.default.contentsOfDirectory(atPath: output).count { name in
            (try? FileManager.default.attributesOfItem(atPath: output + "/" + name)[.size] as? Int) == spikeBytes
        }
    }
}

/// The `curl` command-line tool on `PATH`, for the `curl --parallel` baseline; `nil` when it is
/// not installed.
func curlExecutable() -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/curl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// A Braze payload for `url`.
func brazePayload(_ url: String, type: String = "jpg") -> Data {
    Data(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"\#(type)"}}}"#.utf8)
}

/// Processes `payloads` all at once through `fetcher`; fails the benchmark unless every one is
/// attached (naming the first other outcome's reason), and returns whether every one was.
@discardableResult
func processAll(_ payloads: [Data], with fetcher: PushAttachmentFetcher, _ benchmark: Benchmark) async -> Bool {
    let (attached, firstFailure) = await withTaskGroup(of: Outcome.self) { group in
        for payload in payloads {
            group.addTask { await fetcher.process(payload) }
        }
        var attached = 0
        var firstFailure: String?
        for await outcome in group {
            if outcome.status == .attached {
                attached += 1
            } else if firstFailure == nil {
                firstFailure = "\(outcome.reason?.code ?? "?"): \(outcome.detail ?? "")"
            }
        }
        return (attached, firstFailure)
    }
    guard attached == payloads.count else {
        benchmark.error("only \(attached) of \(payloads.count) attached; first other outcome \(firstFailure ?? "?")")
        return false
    }
    return true
}

/// The benchmarks (discovered by the BenchmarkPlugin).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 2,
        maxDuration: .seconds(5),
        maxIterations: 50,
        thresholds: [
            // Loopback I/O on a shared 2-core machine is noisy: wide time tolerance, tighter for mallocs.
            .wallClock: BenchmarkThresholds(relative: [.p90: 50]),
            .mallocCountTotal: BenchmarkThresholds(relative: [.p90: 10]),
            .peakMemoryResident: BenchmarkThresholds(relative: [.p90: 25]),
        ]
    )

    // 200 distinct 20 KB JPEGs at once through one AttachmentFetcher (download, libmagic, rename).
    Benchmark(
        "spike-200x20KB-AttachmentFetcher",
        configuration: .init(
            setup: { try await Fixture.setUp(fetcher: true) },
            teardown: { try await Fixture.tearDown() })
    ) { benchmark in
        let fixture = Fixture.shared
        try fixture.clearOutput()
        let payloads = fixture.spikeURLs.map { brazePayload($0) }
        benchmark.startMeasurement()
        await processAll(payloads, with: fixture.fetcher!, benchmark)
        benchmark.stopMeasurement()
    }

    // The same spike with AsyncHTTPClient writing each body to a file (FileDownloadDelegate): what a
    // Swift server developer would reach for. No type check, no deadline, no atomic rename.
    Benchmark(
        "spike-200x20KB-AsyncHTTPClient",
        configuration: .init(
            setup: { try await Fixture.setUp(fetcher: false, client: true) },
            teardown: { try await Fixture.tearDown() })
    ) { benchmark in
        let fixture = Fixture.shared
        try fixture.clearOutput()
        let client = fixture.client!
        let urls = fixture.spikeURLs
        let output = fixture.directory + "/out"
        benchmark.startMeasurement()
        let saved = try await withThrowingTaskGroup(of: Bool.self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask {
                    let request = try HTTPClient.Request(url: url)
                    let delegate = try FileDownloadDelegate(path: output + "/\(index).jpg", pool: nil)
                    let progress = try await client.execute(request: request, delegate: delegate).futureResult.get()
                    return progress.receivedBytes == spikeBytes
                }
            }
            var saved = 0
            for try await ok in group where ok { saved += 1 }
            return saved
        }
        benchmark.stopMeasurement()
        if saved != urls.count { benchmark.error("only \(saved) of \(urls.count) saved") }
    }

    // The same spike with Foundation's URLSession on Linux (FoundationNetworking), each body
    // downloaded to a temporary file and moved into place: as the load test's `urlsession-fetch`.
    Benchmark(
        "spike-200x20KB-URLSession",
        configuration: .init(
            setup: { try await Fixture.setUp(fetcher: false, session: true) },
            teardown: { try await Fixture.tearDown() })
    ) { benchmark in
        let fixture = Fixture.shared
        try fixture.clearOutput()
        let session = fixture.session!
        let urls = fixture.spikeURLs.compactMap(URL.init(string:))
        let output = URL(fileURLWithPath: fixture.directory + "/out", isDirectory: true)
        benchmark.startMeasurement()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask {
                    let (temporary, _) = try await session.download(from: url)
                    try FileManager.default.moveItem(at: temporary, to: output.appendingPathComponent("\(index).jpg"))
                }
            }
            try await group.waitForAll()
        }
        benchmark.stopMeasurement()
        let saved = try fixture.spikeFilesSaved()
        if saved != urls.count { benchmark.error("only \(saved) of \(urls.count) saved") }
    }

    // The same spike with `curl --parallel --parallel-max 48` (the same libcurl, no type check), one
    // process per iteration, as the load test runs it: each iteration includes curl's start-up and
    // its 48 new connections, where the in-process contenders above keep their connections from one
    // iteration to the next (`load-test` compares whole processes alike). Only wall clock: the
    // mallocs and memory measured would be this process's, not curl's. Skipped where curl is not
    // installed, so that the other benchmarks still run.
    let curlPath = curlExecutable()
    Benchmark(
        "spike-200x20KB-curl-parallel",
        configuration: .init(
            metrics: [.wallClock],
            skip: curlPath == nil,
            // The default's wall-clock tolerance alone: its others would name metrics not measured here.
            thresholds: [.wallClock: BenchmarkThresholds(relative: [.p90: 50])],
            setup: { try await Fixture.setUp(fetcher: false) },
            teardown: { try await Fixture.tearDown() })
    ) { benchmark in
        let fixture = Fixture.shared
        try fixture.clearOutput()
        let list = fixture.directory + "/curl-urls.txt"
        let lines = fixture.spikeURLs.enumerated().map { index, url in
            "url = \"\(url)\"\noutput = \"\(fixture.directory)/out/\(index).jpg\""
        }
        try lines.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: curlPath!)  // the benchmark is skipped without it
        curl.arguments = [
            "--parallel", "--parallel-max", "\(spikeConnections)", "--silent", "--no-progress-meter", "--show-error", "--fail",
            "--config", list,
        ]
        benchmark.startMeasurement()
        try curl.run()
        curl.waitUntilExit()
        benchmark.stopMeasurement()
        let saved = try fixture.spikeFilesSaved()
        if curl.terminationStatus != 0 || saved != spikeCount {
            benchmark.error("curl exited with \(curl.terminationStatus); \(saved) of \(spikeCount) saved")
        }
    }

    // 200 payloads for one URL on a warm cache: no request, each payload gets its own file from the cache.
    Benchmark(
        "cache-hit-200-payloads",
        configuration: .init(
            setup: {
                try await Fixture.setUp(fetcher: true, cache: true)
                let fixture = Fixture.shared
                let url = fixture.server.url("/media/hit.jpg?bytes=\(spikeBytes)&cache_control=max-age%3D86400")
                let outcome = await fixture.fetcher!.process(brazePayload(url))
                guard outcome.status == .attached else {
                    throw BenchmarkSetupError(message: "warming the cache failed: \(outcome.reason?.code ?? "?")")
                }
            },
            teardown: { try await Fixture.tearDown() })
    ) { benchmark in
        let fixture = Fixture.shared
        try fixture.clearOutput()
        let url = fixture.server.url("/media/hit.jpg?bytes=\(spikeBytes)&cache_control=max-age%3D86400")
        let payloads = [Data](repeating: brazePayload(url), count: 200)
        fixture.server.resetStats()
        benchmark.startMeasurement()
        await processAll(payloads, with: fixture.fetcher!, benchmark)
        benchmark.stopMeasurement()
        let requests = fixture.server.stats().requests
        if requests != 0 { benchmark.error("a warm cache made \(requests) origin requests") }
    }

    // The spike through a fetcher with a cache: 200 distinct URLs the cache has never seen, so every
    // payload misses, downloads once and commits its entry before its output link is made.
    Benchmark(
        "cache-miss-200x20KB",
        configuration: .init(
            setup: { try await Fixture.setUp(fetcher: true, cache: true) },
            teardown: { try await Fixture.tearDown() })
    ) { benchmark in
        let fixture = Fixture.shared
        try fixture.clearOutput()
        let payloads = fixture.missURLs().map { brazePayload($0) }
        fixture.server.resetStats()
        benchmark.startMeasurement()
        let attached = await processAll(payloads, with: fixture.fetcher!, benchmark)
        benchmark.stopMeasurement()
        let requests = fixture.server.stats().requests
        if attached, requests != spikeCount { benchmark.error("\(spikeCount) misses made \(requests) origin requests") }
    }

    // Payload parsing, 1,000 payloads per iteration, none of which makes a request: a Braze
    // uninstall-tracking push (internal-push), and each vendor's attachment payload up to the URL
    // check (its URL is file://, refused before any request: invalid-url). This times JSON parsing,
    // vendor recognition and the URL check, and nothing of the network. Two spellings of the payload
    // (one with a trailing space) take turns, so that every one is parsed: the fetcher reuses the
    // reading of a payload identical to the one before it.
    for parse in parseBenchmarks {
        Benchmark(
            "parse-\(parse.name)-x1000",
            configuration: .init(
                setup: { try await Fixture.setUp(fetcher: true) },
                teardown: { try await Fixture.tearDown() })
        ) { benchmark in
            let fetcher = Fixture.shared.fetcher!
            let spellings = [Data(parse.payload.utf8), Data((parse.payload + " ").utf8)]
            for iteration in 0..<1_000 {
                let outcome = await fetcher.process(spellings[iteration % 2])
                if outcome.reason != parse.reason || outcome.vendor?.name != parse.vendor {
                    benchmark.error("unexpected outcome \(outcome.reason?.code ?? "attached") from \(outcome.vendor?.name ?? "no vendor")")
                }
                blackHole(outcome)
            }
        }
    }

    // Classification: one 20 KB PNG from the loopback origin served as image/jpeg with a jpg hint, so
    // libmagic decides (download, classify, rename; the warning says the bytes won).
    Benchmark(
        "classify-png-20KB-lying-type",
        configuration: .init(
            setup: { try await Fixture.setUp(fetcher: true) },
            teardown: { try await Fixture.tearDown() })
    ) { benchmark in
        let fixture = Fixture.shared
        let url = fixture.server.url("/media/classify.png?bytes=\(spikeBytes)&content_type=image/jpeg")
        let outcome = await fixture.fetcher!.process(brazePayload(url, type: "jpg"))
        if outcome.attachments.first?.mime != "image/png" { benchmark.error("not classified as PNG: \(outcome.reason?.code ?? "?")") }
        if let path = outcome.attachments.first?.path { try? FileManager.default.removeItem(atPath: path) }
    }
}

/// A parsing benchmark: its name, the payload, and the vendor and reason its outcome must have.
struct ParseBenchmark: Sendable {
    var name: String
    var vendor: String
    var payload: String
    var reason: FallbackReason
}

/// A Braze internal push, then each vendor's attachment payload (the shapes of VENDORS.md) with a
/// `file://` URL.
let parseBenchmarks: [ParseBenchmark] = [
    ParseBenchmark(
        name: "internal-push", vendor: "braze",
        payload: #"{"aps":{"content-available":1},"appboy_uninstall_tracking":true,"ab":{"c":"abc"}}"#,
        reason: .internalPush)
] + [
    ("braze", #"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"ab":{"att":{"url":"URL","type":"jpg"}},"c":null}"#),
    ("moengage", #"{"aps":{"mutable-content":1,"alert":{"title":"Message","body":"msg"}},"moengage":{"media-type":"image","media-attachment":"URL","cid":"0000_L_0"},"app_extra":{}}"#),
    ("airship", #"{"aps":{"mutable-content":1,"alert":"x"},"com.urbanairship.media_attachment":{"urls":[{"url":"URL","url_id":"a"}],"thumbnail_id":"a"}}"#),
    ("onesignal", #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"att":{"id1":"URL?filename=f.png"}}"#),
    ("firebase", #"{"aps":{"alert":{"body":"B"},"mutable-content":1},"fcm_options":{"image":"URL"}}"#),
    ("clevertap", #"{"aps":{"alert":"x","mutable-content":1},"wzrk_pn":true,"ct_mediaUrl":"URL","ct_mediaType":"image"}"#),
    ("iterable", #"{"aps":{"alert":"x","mutable-content":1},"itbl":{"messageId":"m","attachment-url":"URL"}}"#),
    ("customerio", #"{"aps":{"alert":"x","mutable-content":1},"CIO":{"push":{"link":"app://x","image":"URL"}},"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#),
].map { vendor, template in
    ParseBenchmark(
        name: vendor, vendor: vendor, payload: template.replacingOccurrences(of: "URL", with: "file:///media/x.jpg"),
        reason: .invalidURL)
}

/// A setup that could not prepare its benchmark.
struct BenchmarkSetupError: Error, CustomStringConvertible {
    /// What went wrong.
    var message: String
    /// The message.
    var description: String { message }
}
