@testable import AttachmentFetcher
import Foundation
import MockCDN
import Logging
import Testing

/// A mock CDN on 127.0.0.1, a fetcher writing into a fresh temporary directory, and helpers to
/// build payloads and inspect what is left on disk.
struct Fixture: Sendable {
    let server: MockCDNServer
    let fetcher: PushAttachmentFetcher
    let directory: String

    /// Runs `body` with a fresh server and fetcher, then shuts both down and removes the directory.
    /// With `cached`, the fetcher uses a cache in `<directory>/../cache` of its own; with
    /// `typeAnswerDelay`, its engine gets each detected type that much later; the server serves
    /// `filesDirectory` as `/files/NAME`.
    static func with<R: Sendable>(
        timeout: Duration = .seconds(10) * TestTiming.scale,
        cached: Bool = false,
        typeAnswerDelay: Duration = .zero,
        filesDirectory: String = Fixture.mediaDirectory,
        configure: (inout PushAttachmentFetcher.Configuration) -> Void = { _ in },
        _ body: (Fixture) async throws -> R
    ) async throws -> R {
        let server = try await MockCDNServer.start(eventLoopThreads: 1, filesDirectory: filesDirectory)
        let root = try makeTemporaryDirectory()
        let directory = root + "/out"
        var configuration = PushAttachmentFetcher.Configuration(outputDirectory: directory, timeout: timeout)
        if cached { configuration.cache = .init(directory: root + "/cache") }
        // The mock CDN is on loopback, which the default address policy refuses.
        configuration.addressPolicy.allowsPrivateNetworks = true
        configure(&configuration)
        let fetcher: PushAttachmentFetcher
        do {
            fetcher = try PushAttachmentFetcher(
                configuration: configuration,
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
                classifier: MediaClassifier(answerDelay: typeAnswerDelay))
        } catch {
            try? await server.shutdown()
            throw error
        }
        let fixture = Fixture(server: server, fetcher: fetcher, directory: fetcher.configuration.outputDirectory)
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            let result = try await body(fixture)
            await fetcher.shutdown()
            try await server.shutdown()
            return result
        } catch {
            await fetcher.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    /// The real-media corpus (`Tests/Fixtures/media`, made by `Tests/Fixtures/make-media.sh`),
    /// which the fixture's server serves as `/files/NAME`.
    static let mediaDirectory: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Support/, AttachmentFetcherTests/, Tests/
        return url.appendingPathComponent("Fixtures/media").path
    }()

    /// The cache directory, when the fixture has one.
    var cacheDirectory: String? { fetcher.configuration.cache?.directory }

    /// A second fetcher on the same output and cache directories (a "second run").
    func anotherFetcher(configure: (inout PushAttachmentFetcher.Configuration) -> Void = { _ in }) throws -> PushAttachmentFetcher {
        var configuration = fetcher.configuration
        configure(&configuration)
        return try PushAttachmentFetcher(configuration: configuration)
    }

    /// A Braze payload for `path` on the mock CDN.
    func braze(_ path: String, type: String? = nil) -> Data {
        Payloads.braze(url: server.url(path), type: type)
    }

    /// Processes a Braze payload for `path`.
    func fetch(_ path: String, type: String? = nil) async -> Outcome {
        await fetcher.process(braze(path, type: type))
    }

    /// Every file name in the output directory, hidden temporary files included (one marker
    /// entry when the directory cannot be listed, so that "empty" is never a listing failure).
    func filesLeft() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory).sorted()) ?? ["<cannot list \(directory)>"]
    }
}

/// Payloads in the vendors' shapes.
enum Payloads {
    static func braze(url: String, type: String? = nil) -> Data {
        let typePart = type.map { #","type":"\#($0)""# } ?? ""
        return Data(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"ab":{"att":{"url":"\#(url)"\#(typePart)}},"c":null}"#.utf8)
    }

    static func moengage(url: String, mediaType: String = "image") -> Data {
        Data(#"{"aps":{"mutable-content":1,"alert":{"title":"Message","body":"msg"}},"moengage":{"media-type":"\#(mediaType)","media-attachment":"\#(url)","cid":"0000_L_0"},"app_extra":{}}"#.utf8)
    }
}

/// How many of this process's descriptors are files made in `directory` (a nameless file's
/// link in /proc reads `<directory>/#<inode> (deleted)`, the directory under the name it has now).
func descriptors(in directory: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.filter { name in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name))?.hasPrefix(directory + "/") == true
    }.count
}

func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "attachment-fetcher-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

extension Outcome {
    /// The reason's code, or "attached".
    var result: String { reason?.code ?? "attached" }

    /// The warnings, less the one about plain http (App Transport Security's on iOS, cleartext
    /// traffic on Android) that every URL of the loopback test server gets.
    var warningsBesidesPlainHTTP: [String] { warnings.filter { !$0.contains(" is plain http: ") } }
}

/// How many times longer than usual the tests' generous deadlines are (those not under test):
/// `ATTACHMENT_FETCHER_TEST_TIME_SCALE`, which scripts/tsan.sh sets because ThreadSanitizer slows
/// everything down several times; 1 otherwise.
enum TestTiming {
    static let scale: Int = ProcessInfo.processInfo.environment["ATTACHMENT_FETCHER_TEST_TIME_SCALE"].flatMap { Int($0) } ?? 1

    /// Polls `condition` every `interval` until it holds or `limit` has passed, whichever comes
    /// first: for a test to wait on something the server or the file system will see soon. It
    /// asserts nothing; the test checks the condition itself afterwards.
    static func wait(
        atMost limit: Duration, every interval: Duration = .milliseconds(10), until condition: () async throws -> Bool
    ) async throws {
        let end = ContinuousClock.now.advanced(by: limit)
        while try await !condition(), ContinuousClock.now < end {
            try await Task.sleep(for: interval)
        }
    }
}

extension MockCDNServer {
    /// `body`'s result, with this server shut down however `body` ends: a failure of `body` is
    /// thrown, not the shutdown's that follows it.
    func shuttingDown<Result>(after body: () async throws -> Result) async throws -> Result {
        let result: Result
        do {
            result = try await body()
        } catch {
            try? await shutdown()
            throw error
        }
        try await shutdown()
        return result
    }
}
