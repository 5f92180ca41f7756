import Foundation
import Logging

/// Turns push payloads into notification attachments, the way a Notification Service Extension
/// should: read the vendor's attachment key, download the file within the payload's deadline,
/// check the real bytes against iOS's attachment rules, and name the file by what it is.
///
/// One fetcher serves any number of concurrent payloads over one libcurl multi handle (one
/// thread, shared connections). `process(_:)` never throws and never returns later than the
/// payload's deadline; when anything goes wrong the outcome carries the original payload, byte
/// for byte, and a machine-readable reason.
///
/// ```swift
/// let fetcher = try AttachmentFetcher(configuration: .init(outputDirectory: "/tmp/attachments"))
/// let outcome = await fetcher.process(payloadBytes)
/// if outcome.status == .attached { print(outcome.attachments[0].path) }
/// await fetcher.shutdown()
/// ```
public final class AttachmentFetcher: Sendable {
    /// The configuration the fetcher was made with (output directory made absolute).
    public let configuration: Configuration
    private let engine: TransferEngine
    private let cache: CachedDownloads?
    /// The URLs checked so far, each checked once.
    private let urls = BoundedMemo<AttachmentURL>()
    private let logger: Logger

    /// Creates the output directory if needed and starts the download engine.
    ///
    /// - Parameters:
    ///   - configuration: where files go, the deadline, limits and concurrency.
    ///   - logger: receives one record per payload, with its URL and reason as metadata. By
    ///     default nothing is logged.
    /// - Throws: `AttachmentFetcherError` when the directory cannot be used, the configuration
    ///   is out of range, or libcurl or libmagic cannot start.
    public convenience init(
        configuration: Configuration,
        logger: Logger = Logger(label: "AttachmentFetcher", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(AttachmentFetcherError) {
        try self.init(configuration: configuration, logger: logger, classifier: MediaClassifier())
    }

    /// The same, with the engine's type detection given (tests hold its answers back).
    init(configuration: Configuration, logger: Logger, classifier: MediaClassifier) throws(AttachmentFetcherError) {
        try configuration.validate()
        var configuration = configuration
        configuration.outputDirectory = try Self.prepareDirectory(configuration.outputDirectory)
        TemporaryFiles.removeOrphans(in: configuration.outputDirectory)
        let store = try configuration.cache.map { cache throws(AttachmentFetcherError) in try CacheStore(configuration: cache) }
        configuration.cache = store?.configuration
        self.configuration = configuration
        self.logger = logger
        engine = try TransferEngine(
            configuration: .init(
                sizeLimits: configuration.sizeLimits,
                maximumConnectionsPerHost: configuration.connectionPool.maximumConnectionsPerHost,
                maximumConcurrentTransfers: configuration.connectionPool.maximumConcurrentTransfers,
                maximumRedirects: configuration.maximumRedirects,
                userAgent: configuration.userAgent,
                trustedCertificatesFile: configuration.trustedCertificatesFile,
                addressPolicy: configuration.addressPolicy,
                allowsCredentialsInURLs: configuration.allowsCredentialsInURLs,
                proxy: configuration.proxy,
                resolve: configuration.resolve),
            logger: logger, classifier: classifier)
        if let store {
            cache = CachedDownloads(
                store: store, engine: engine, outputDirectory: configuration.outputDirectory,
                transferBudget: configuration.deadline,
                maximumLeaders: configuration.connectionPool.maximumConcurrentTransfers)
        } else {
            cache = nil
        }
    }

    /// What a fetcher has done since it was made.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Requests sent to origins (redirect hops not counted).
        public var originRequests: Int
        /// Of those, conditional revalidations of stale cache entries.
        public var conditionalRequests: Int
        /// Revalidations answered `304 Not Modified` (no body downloaded).
        public var notModified: Int
        /// Attachments served from a fresh cache entry without a request.
        public var cacheHits: Int
        /// Attachments that joined a download another payload had started.
        public var coalesced: Int
        /// Body bytes received from origins.
        public var bytesDownloaded: Int
    }

    /// Counters of requests, cache hits and bytes so far.
    public var statistics: Statistics {
        Statistics(
            originRequests: engine.counters.originRequests, conditionalRequests: engine.counters.conditionalRequests,
            notModified: cache?.notModified.load(ordering: .relaxed) ?? 0,
            cacheHits: cache?.hits.load(ordering: .relaxed) ?? 0,
            coalesced: cache?.coalesced.load(ordering: .relaxed) ?? 0,
            bytesDownloaded: engine.counters.bytesReceived)
    }

    /// Fails transfers still running and stops the engine's thread. Payloads handed in later
    /// get `network` outcomes. Call it once you are done, or use `withAttachmentFetcher`.
    public func shutdown() async {
        await engine.shutdown()
    }

    /// Processes one payload: the outcome holds either the attachment files or the original
    /// payload with the reason. Never throws; returns by the payload's deadline, measured from
    /// this call. Cancelling the task ends it at once with reason `deadline`.
    ///
    /// - Parameters:
    ///   - payload: the payload's bytes, as APNs delivered them.
    ///   - deadline: this payload's budget; `nil` (the default) uses `configuration.deadline`.
    public func process(_ payload: Data, deadline: Duration? = nil) async -> Outcome {
        let draft = OutcomeDraft(payload: payload, startedAt: .now)
        let (outcome, urls) = await process(draft, deadline: draft.startedAt.advanced(by: deadline ?? configuration.deadline))
        log(outcome, urls: urls)
        return outcome
    }

    /// Processes one payload given as bytes; see `process(_:deadline:)`.
    public func process(_ payload: [UInt8], deadline: Duration? = nil) async -> Outcome {
        await process(Data(payload), deadline: deadline)
    }

    /// The outcome, and the attachment URLs the payload named (for the log).
    private func process(_ draft: OutcomeDraft, deadline: ContinuousClock.Instant) async -> (Outcome, [String]) {
        var draft = draft
        guard draft.payload.count <= configuration.maximumPayloadBytes else {
            return (draft.original(
                .invalidPayload,
                "the payload is \(draft.payload.count) bytes, more than \(configuration.maximumPayloadBytes)"), [])
        }
        guard let json = JSONValue.object(from: draft.payload) else {
            return (draft.original(.invalidPayload, "the payload is not a JSON object"), [])
        }
        if json[path: ["aps", "mutable-content"]]?.isSet != true {
            draft.warnings.append("aps.mutable-content is not 1: iOS would not run a service extension for this payload")
        }
        guard let (vendor, recognition) = VendorSchemas.recognize(json) else {
            return (draft.original(.noAttachment, "no known vendor's attachment keys"), [])
        }
        draft.vendor = vendor
        switch recognition {
        case .internalPush(let detail):
            return (draft.original(.internalPush, detail), [])
        case .noAttachment:
            return (draft.original(.noAttachment, "the \(vendor) payload names no attachment"), [])
        case .malformed(let detail):
            return (draft.original(.invalidPayload, detail), [])
        case .attachments(let named):
            let requests = AttachmentSelection.select(
                named, limit: configuration.maximumAttachmentsPerPayload, warnings: &draft.warnings)
            let results = await download(requests, deadline: deadline)
            return (draft.finish(with: results), requests.map(\.url))
        }
    }

    /// Downloads every requested attachment concurrently.
    private func download(
        _ requests: [RequestedAttachment], deadline: ContinuousClock.Instant
    ) async -> [(RequestedAttachment, Result<DownloadedFile, TransferFailure>)] {
        if requests.count == 1 {
            return [(requests[0], await download(requests[0], deadline: deadline))]
        }
        return await withTaskGroup { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, await self.download(request, deadline: deadline)) }
            }
            var results = [Result<DownloadedFile, TransferFailure>?](repeating: nil, count: requests.count)
            for await (index, result) in group { results[index] = result }
            return zip(requests, results.map { $0! }).map { ($0, $1) }
        }
    }

    private func download(
        _ request: RequestedAttachment, deadline: ContinuousClock.Instant
    ) async -> Result<DownloadedFile, TransferFailure> {
        let url: AttachmentURL
        switch urls.parse(request.url) {
        case .success(let parsed): url = parsed
        case .failure(let failure): return .failure(failure)
        }
        if !configuration.allowsCredentialsInURLs, url.hasCredentials {
            return .failure(
                TransferFailure(
                    reason: .invalidURL, detail: "the URL carries credentials (user:pass@), which are not sent"))
        }
        if let cache { return await cache.download(url, deadline: deadline) }
        let directory = configuration.outputDirectory
        let result = await engine.download(
            TransferRequest(
                url: url.string, hostKey: url.hostKey, deadline: deadline, temporaryDirectory: directory,
                place: { body in AttachmentFiles.place(body, in: directory, namedAfter: url) }))
        switch result {
        case .success(.file(let file)): return .success(file)
        case .success(.notModified): return .failure(TransferFailure(reason: .httpStatus, detail: "HTTP 304"))
        case .failure(let failure): return .failure(failure)
        }
    }

    private func log(_ outcome: Outcome, urls: [String]) {
        // Building the metadata costs more than the rest of a cache hit: skip it when unread.
        guard logger.logLevel <= (outcome.reason == nil ? .debug : .info) else { return }
        var metadata: Logger.Metadata = [
            "status": "\(outcome.status.rawValue)",
            "elapsed_ms": "\(outcome.elapsedMilliseconds)",
        ]
        if let vendor = outcome.vendor { metadata["vendor"] = "\(vendor)" }
        if !urls.isEmpty { metadata["url"] = "\(urls.joined(separator: " "))" }
        if let reason = outcome.reason {
            metadata["reason"] = "\(reason)"
            metadata["detail"] = "\(outcome.detail ?? "")"
            logger.info("original content stands", metadata: metadata)
        } else {
            metadata["path"] = "\(outcome.attachments.first?.path ?? "")"
            logger.debug("attachment ready", metadata: metadata)
        }
    }

    private static func prepareDirectory(_ path: String) throws(AttachmentFetcherError) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        do {
            try FileManager.default.createDirectory(atPath: absolute, withIntermediateDirectories: true)
        } catch {
            throw .outputDirectoryUnusable("cannot create \(absolute): \(error.localizedDescription)")
        }
        guard access(absolute, W_OK | X_OK) == 0 else {
            throw .outputDirectoryUnusable("\(absolute) is not writable")
        }
        return URL(fileURLWithPath: absolute).standardizedFileURL.path
    }
}

/// Runs `body` with a fetcher and shuts the fetcher down afterwards, whether `body` returns or
/// throws.
public func withAttachmentFetcher<Value>(
    configuration: AttachmentFetcher.Configuration,
    logger: Logger = Logger(label: "AttachmentFetcher", factory: { _ in SwiftLogNoOpLogHandler() }),
    _ body: (AttachmentFetcher) async throws -> Value
) async throws -> Value {
    let fetcher = try AttachmentFetcher(configuration: configuration, logger: logger)
    do {
        let result = try await body(fetcher)
        await fetcher.shutdown()
        return result
    } catch {
        await fetcher.shutdown()
        throw error
    }
}

/// An outcome being put together for one payload.
private struct OutcomeDraft {
    let payload: Data
    let startedAt: ContinuousClock.Instant
    var vendor: Vendor?
    var warnings: [String] = []

    init(payload: Data, startedAt: ContinuousClock.Instant) {
        self.payload = payload
        self.startedAt = startedAt
    }

    func original(_ reason: FallbackReason, _ detail: String) -> Outcome {
        Outcome(
            status: .original, reason: reason, detail: detail, vendor: vendor, attachments: [], warnings: warnings,
            elapsed: startedAt.duration(to: .now), payload: payload)
    }

    /// Attached when at least one attachment is ready (the failures of others become warnings);
    /// otherwise the original, with the first failure's reason.
    func finish(with results: [(RequestedAttachment, Result<DownloadedFile, TransferFailure>)]) -> Outcome {
        var draft = self
        var attachments: [Attachment] = []
        var failures: [(RequestedAttachment, TransferFailure)] = []
        for (request, result) in results {
            switch result {
            case .success(let file):
                attachments.append(
                    Attachment(url: request.url, path: file.path, mime: file.media.mime, bytes: file.byteCount))
                if let warning = Self.typeHintWarning(request.claimedType, file.media) { draft.warnings.append(warning) }
            case .failure(let failure):
                failures.append((request, failure))
            }
        }
        guard !attachments.isEmpty else {
            let (request, failure) = failures[0]
            let detail = results.count > 1 ? "\(request.url): \(failure.detail)" : failure.detail
            return draft.original(failure.reason, detail)
        }
        for (request, failure) in failures {
            draft.warnings.append("\(request.url) not attached: \(failure.reason): \(failure.detail)")
        }
        return Outcome(
            status: .attached, reason: nil, detail: nil, vendor: vendor, attachments: attachments,
            warnings: draft.warnings, elapsed: startedAt.duration(to: .now), payload: payload)
    }

    private static func typeHintWarning(_ claimed: ClaimedType?, _ media: MediaType) -> String? {
        switch claimed {
        case .fileExtension(let suffix) where AttachmentTypes.canonicalExtension(suffix) != media.fileExtension:
            return "the payload says type '\(suffix)' but the bytes are \(media.mime): saved as .\(media.fileExtension)"
        case .kind(let kind) where Self.kindName(kind) != media.kind.rawValue:
            return "the payload says media type '\(kind)' but the bytes are \(media.mime) (\(media.kind.rawValue))"
        default:
            return nil
        }
    }

    /// MoEngage and CleverTap also say "gif" for an animated image.
    private static func kindName(_ claimed: String) -> String {
        let lowered = claimed.lowercased()
        return lowered == "gif" ? "image" : lowered
    }
}
