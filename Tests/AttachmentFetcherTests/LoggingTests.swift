import AttachmentFetcher
import Foundation
import Logging
import MockCDN
import Testing

/// Collects log records, for assertions.
private final class RecordingLogHandler: LogHandler, Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let records = Locked<[Record]>([])
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let record = Record(
            level: event.level, message: event.message.description,
            metadata: (event.metadata ?? [:]).mapValues { "\($0)" })
        records.withLock { $0.append(record) }
    }

    var all: [Record] { records.withLock { $0 } }
}

@Suite("Logging: one record per payload, with its URL and reason", .timeLimit(.minutes(2)))
struct LoggingTests {
    @Test("The logger passed in gets the URL, vendor and reason of a fallback, and the path of an attachment")
    func records() async throws {
        let server = try await MockCDNServer.start(eventLoopThreads: 1)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let handler = RecordingLogHandler()
        let logger = Logger(label: "test") { _ in handler }
        let url404 = server.url("/media/gone.jpg?status=404")
        let urlOK = server.url("/media/ok.png?bytes=2000")
        var configuration = PushAttachmentFetcher.Configuration(outputDirectory: directory)
        configuration.addressPolicy.allowsPrivateNetworks = true  // the mock CDN is on loopback
        try await withPushAttachmentFetcher(configuration: configuration, logger: logger) { fetcher in
            _ = await fetcher.process(Payloads.braze(url: url404))
            _ = await fetcher.process(Payloads.moengage(url: urlOK))
            // A text-only push and a silent one asked for no picture: no failure, logged at debug.
            _ = await fetcher.process(Data(#"{"aps":{"alert":"B"},"ab":{}}"#.utf8))
            _ = await fetcher.process(Data(#"{"aps":{"content-available":1},"moengage":{"silentPush":1}}"#.utf8))
        }
        try await server.shutdown()
        let quiet = handler.all.filter { ["no-attachment", "internal-push"].contains($0.metadata["reason"]) }
        #expect(quiet.count == 2 && quiet.allSatisfy { $0.level == .debug }, "\(quiet.map(\.level))")
        let records = handler.all.filter { !["no-attachment", "internal-push"].contains($0.metadata["reason"]) }
        #expect(records.count == 2)
        let fallback = try #require(records.first { $0.metadata["reason"] != nil })
        #expect(fallback.level == .info)
        #expect(fallback.metadata["reason"] == "http-status")
        #expect(fallback.metadata["vendor"] == "braze")
        #expect(fallback.metadata["url"] == url404)
        let attached = try #require(records.first { $0.metadata["reason"] == nil })
        #expect(attached.metadata["url"] == urlOK)
        #expect(attached.metadata["path"]?.hasSuffix(".png") == true)
    }
}
