import Foundation
import Logging
import SystemPackage

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
/// let fetcher = try PushAttachmentFetcher(configuration: .init(outputDirectory: "/tmp/attachments"))
/// let outcome = await fetcher.process(payloadBytes)
/// if outcome.status == .attached { print(outcome.attachments[0].path) }
/// await fetcher.shutdown()
/// ```
public final class PushAttachmentFetcher: Sendable {
    /// The configuration the fetcher was made with (output directory made absolute).
    public let configuration: Configuration
    private let engine: TransferEngine
    /// The cache, when configured (its counters go into `statistics`).
    let cache: CachedDownloads?
    /// Why this fetcher cannot share its downloads with other processes using its cache (its
    /// lock file cannot be opened for writing, as in a cache another user made), if it cannot.
    package var cacheLockProblem: String? { cache?.store.lockFileProblem }
    /// Why this fetcher adds nothing to its cache (its directories are not writable by this
    /// process's user), if it does not: it serves the entries there all the same.
    package var cacheStoreProblem: String? { cache?.store.storeProblem }
    /// The first failure to write a body in the cache, or to keep it there, if one came: the
    /// payloads were served all the same, from the output directory, and their bodies not kept.
    package var cacheWriteProblem: String? { cache?.writeProblemDetail }
    /// Direct, or through the cache.
    private let downloader: any AttachmentDownloader
    /// The nameless files made ahead for bodies (see `PreparedFiles`), closed by `shutdown()`.
    let preparedFiles: PreparedFiles
    /// The URLs checked so far, each checked once.
    private let urls = BoundedMemo<AttachmentURL>()
    /// The payload read last, and what it said (see `LatestPayload`).
    private let latestPayload = LatestPayload()
    private let logger: Logger

    /// Creates the output directory if needed and starts the download engine.
    ///
    /// - Parameters:
    ///   - configuration: where files go, the deadline, limits and concurrency.
    ///   - logger: receives one record per payload, with its URL and reason as metadata: `info`
    ///     when the original content stands for a payload that named a picture (or for another
    ///     reason than a silent or text-only push), `debug` when an attachment is ready and for
    ///     a silent or text-only push. By default nothing is logged.
    /// - Throws: `AttachmentFetcherError` when the directory cannot be used, the configuration
    ///   is out of range, or libcurl or libmagic cannot start.
    public convenience init(
        configuration: Configuration,
        logger: Logger = Logger(label: "AttachmentFetcher", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(AttachmentFetcherError) {
        try self.init(configuration: configuration, logger: logger, classifier: MediaClassifier())
    }

    /// The same, with the engine's type detection given (tests hold its answers back).
    init(
        configuration: Configuration, logger: Logger, classifier: MediaClassifier, cacheClock: CacheClock = .system
    ) throws(AttachmentFetcherError) {
        try configuration.validate()
        var configuration = configuration
        configuration.outputDirectory = try Self.prepareDirectory(configuration.outputDirectory)
        TemporaryFiles.removeOrphans(in: configuration.outputDirectory)
        let store = try configuration.cache.map { cache throws(AttachmentFetcherError) in
            try CacheStore(
                configuration: cache, classifier: classifier, clock: cacheClock,
                largestBody: MediaKind.allCases.map(configuration.sizeLimits.limit(for:)).max() ?? .max)
        }
        configuration.cache = store?.configuration
        self.configuration = configuration
        self.logger = logger
        if let problem = store?.lockFileProblem {
            logger.warning("downloads are not shared with other processes using this cache", metadata: ["problem": "\(problem)"])
        }
        if let problem = store?.storeProblem {
            logger.warning("the cache's entries are served, and no download is added to them", metadata: ["problem": "\(problem)"])
        }
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
        // Bodies stream into nameless files made ahead, off the engine's thread: in the cache's
        // `tmp` (private until committed read-only), or in the output directory (an attachment's 0644).
        let prepared = FileDescriptorBudget.preparedFiles(forConcurrency: configuration.connectionPool.maximumConcurrentTransfers)
        if let store {
            // A cache this process cannot add to (another user's) takes its bodies in the output directory.
            preparedFiles = store.storeProblem == nil
                ? PreparedFiles(directory: store.temporaryDirectory, handle: try store.openTemporaryDirectory(), capacity: prepared)
                : PreparedFiles(directory: configuration.outputDirectory, capacity: prepared, permissions: 0o644)
            let cache = CachedDownloads(
                store: store, engine: engine, outputDirectory: configuration.outputDirectory,
                preparedFiles: preparedFiles, keyScope: configuration.cacheScope)
            self.cache = cache
            downloader = cache
        } else {
            preparedFiles = PreparedFiles(directory: configuration.outputDirectory, capacity: prepared, permissions: 0o644)
            cache = nil
            downloader = DirectDownloads(engine: engine, outputDirectory: configuration.outputDirectory, preparedFiles: preparedFiles)
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
        /// Cache entries evicted, whatever the budget, because the cache's file system ran out of
        /// room for a body (only entries no output directory links, whose removal frees room).
        public var evictedForRoom: Int

        /// Counters with these values: all zero, by default, as for a fetcher that did nothing.
        public init(
            originRequests: Int = 0, conditionalRequests: Int = 0, notModified: Int = 0, cacheHits: Int = 0, coalesced: Int = 0,
            bytesDownloaded: Int = 0, evictedForRoom: Int = 0
        ) {
            self.originRequests = originRequests
            self.conditionalRequests = conditionalRequests
            self.notModified = notModified
            self.cacheHits = cacheHits
            self.coalesced = coalesced
            self.bytesDownloaded = bytesDownloaded
            self.evictedForRoom = evictedForRoom
        }
    }

    /// Counters of requests, cache hits and bytes so far.
    public var statistics: Statistics {
        Statistics(
            originRequests: engine.counters.originRequests, conditionalRequests: engine.counters.conditionalRequests,
            notModified: cache?.notModified.load(ordering: .relaxed) ?? 0,
            cacheHits: cache?.hits.load(ordering: .relaxed) ?? 0,
            coalesced: cache?.coalesced.load(ordering: .relaxed) ?? 0,
            bytesDownloaded: engine.counters.bytesReceived,
            evictedForRoom: cache?.evictedForRoom.load(ordering: .relaxed) ?? 0)
    }

    /// Fails transfers still running, stops the engine's thread and closes the files kept ready
    /// for bodies. Payloads handed in later get `network` outcomes when they need a download (with
    /// a cache, a fresh entry is still served from it). Call it once you are done, or
    /// use `withPushAttachmentFetcher`. It returns when the engine's thread has ended, which an
    /// origin flooding an HTTP/2 connection can delay (libcurl reads the frames until they stop,
    /// or until the engine shuts that connection, about a second into the hold; every payload is
    /// answered at its deadline all the same): a process about to exit need not wait for it, as
    /// `fetch-attachment` waits 1 s at most.
    public func shutdown() async {
        await engine.shutdown()
        preparedFiles.close()
        // A start-up scan of a large cache still running ends early; nothing evicts any more.
        cache?.store.evictor.stop()
    }

    /// Processes one payload: the outcome holds either the attachment files or the original
    /// payload with the reason. Never throws; returns by the payload's deadline, `timeout` after
    /// this call. Cancelling the task ends it at once with reason `deadline`.
    ///
    /// - Parameters:
    ///   - payload: the payload's bytes, as APNs delivered them.
    ///   - timeout: how long this payload may take; `nil` (the default) uses
    ///     `configuration.timeout`.
    public func process(_ payload: Data, timeout: Duration? = nil) async -> Outcome {
        let startedAt = ContinuousClock.now
        let timeout = min(timeout ?? configuration.timeout, Self.longestTimeout)
        return await process(payload, startedAt: startedAt, deadline: startedAt.advanced(by: timeout))
    }

    /// The longest time a payload is given, whatever its timeout or deadline says: a year.
    static let longestTimeout = Duration.seconds(365 * 86_400)

    /// Processes one payload against an instant rather than a duration: the deadline the payload
    /// already has (a service extension's own, one shared by a batch). Never throws; returns by
    /// `deadline`. An attachment whose deadline has already passed is not downloaded: the outcome
    /// keeps the original content with reason `deadline`.
    ///
    /// - Parameters:
    ///   - payload: the payload's bytes, as APNs delivered them.
    ///   - deadline: the instant by which the outcome is returned.
    public func process(_ payload: Data, deadline: ContinuousClock.Instant) async -> Outcome {
        await process(payload, startedAt: .now, deadline: deadline)
    }

    private func process(_ payload: Data, startedAt: ContinuousClock.Instant, deadline: ContinuousClock.Instant) async -> Outcome {
        // A year at most: a longer one ("no timeout") is that, and every later sum stays small.
        let deadline = min(deadline, startedAt.advanced(by: Self.longestTimeout))
        let draft = OutcomeDraft(payload: payload, startedAt: startedAt)
        let (outcome, urls) = await process(draft, deadline: deadline)
        log(outcome, urls: urls)
        return outcome
    }

    /// Processes one payload given as bytes; see `process(_:timeout:)`.
    public func process(_ payload: [UInt8], timeout: Duration? = nil) async -> Outcome {
        await process(Data(payload), timeout: timeout)
    }

    /// Processes one payload given as bytes against an instant; see `process(_:timeout:)`.
    public func process(_ payload: [UInt8], deadline: ContinuousClock.Instant) async -> Outcome {
        await process(Data(payload), deadline: deadline)
    }

    /// The original content of `payload`, with what it says (vendor, notification, warnings), for
    /// `reason`: what `NotificationServiceAdapter` hands over when time expires first.
    func original(_ payload: Data, startedAt: ContinuousClock.Instant, _ reason: FallbackReason, _ detail: String) -> Outcome {
        var draft = OutcomeDraft(payload: payload, startedAt: startedAt)
        if payload.count <= configuration.maximumPayloadBytes { read(&draft) }
        return draft.original(reason, detail)
    }

    /// Reads the draft's payload (the same bytes read twice in a row are read once): its
    /// vendor, what it shows, and its warnings; what it needs next.
    @discardableResult
    private func read(_ draft: inout OutcomeDraft) -> PreparedPayload {
        let prepared = latestPayload.prepared(
            draft.payload, maximumAttachments: configuration.maximumAttachmentsPerPayload, judging: configuration.platforms)
        Self.apply(prepared, to: &draft)
        return prepared
    }

    private static func apply(_ prepared: PreparedPayload, to draft: inout OutcomeDraft) {
        draft.vendor = prepared.vendor
        draft.notification = prepared.notification
        draft.otherPlatformNotifications = prepared.otherPlatformNotifications
        draft.warnings = prepared.warnings
        draft.attachmentsPastLimit = prepared.attachmentsPastLimit
    }

    /// What a payload needs: an outcome already (it names nothing to fetch for the platforms
    /// judged, shows nothing, is malformed or too large), or these downloads.
    private enum Decision {
        case outcome(Outcome)
        case download([RequestedAttachment], platforms: [Platform])
    }

    private static func decide(
        _ draft: inout OutcomeDraft, configuration: Configuration, reading read: (inout OutcomeDraft) -> PreparedPayload
    ) -> Decision {
        guard draft.payload.count <= configuration.maximumPayloadBytes else {
            return .outcome(draft.original(
                .invalidPayload,
                "the payload is \(draft.payload.count) bytes, more than \(configuration.maximumPayloadBytes)"))
        }
        switch read(&draft).next {
        case .original(let reason, let detail):
            return .outcome(draft.original(reason, detail))
        case .download(let named, let platform):
            // The payload's own platform judges its files, unless a preflight names platforms;
            // an attachment for other platforms only (an FCM message's iPhone image) is not fetched,
            // nor one for a platform that shows nothing of this push (its verdict says so).
            let platforms = configuration.platforms.isEmpty ? [platform] : configuration.platforms
            let showing = platforms.filter { draft.notification(on: $0)?.visible != false }
            let vendor = draft.vendor.map { "\($0)" } ?? ""
            guard !showing.isEmpty else {
                // Per platform where a push that shows no banner still sets a badge or plays a
                // sound (iOS), else "shows nothing on ios, android".
                let effects = platforms.map { (draft.notification(on: $0)?.invisibleEffect ?? "shows nothing", $0.rawValue) }
                let said =
                    effects.allSatisfy { $0.0 == "shows nothing" }
                    ? "shows nothing on " + effects.map(\.1).joined(separator: ", ")
                    : effects.map { "\($0.0) on \($0.1)" }.joined(separator: ", ")
                return .outcome(draft.original(.internalPush, "the \(vendor) push \(said): no request is made"))
            }
            let requests = named.filter { request in showing.contains { request.isJudged(on: $0) } }
            guard !requests.isEmpty else {
                let judged = showing.map(\.rawValue).joined(separator: ", ")
                return .outcome(draft.original(.noAttachment, "the \(vendor) payload names no attachment for \(judged)"))
            }
            return .download(requests, platforms: platforms)
        }
    }

    /// The outcome, and the attachment URLs the payload named, as written (for the log, which
    /// redacts them only when it writes a line).
    private func process(_ draft: OutcomeDraft, deadline: ContinuousClock.Instant) async -> (Outcome, [String]) {
        var draft = draft
        switch Self.decide(&draft, configuration: configuration, reading: { read(&$0) }) {
        case .outcome(let outcome):
            return (outcome, [])
        case .download(let requests, let platforms):
            let results = await download(requests, deadline: deadline)
            return (Self.finish(draft, with: results, on: platforms, configuration: configuration), requests.map(\.url))
        }
    }

    /// The outcome of `draft` once its `results` are in, each judged by `platforms`' rules.
    private static func finish(
        _ draft: OutcomeDraft, with results: [AttachmentResult], on platforms: [Platform], configuration: Configuration
    ) -> Outcome {
        let judges = platforms.map { platform in
            let drawer = platform == .android ? draft.notification(on: .android)?.androidPictureDrawer : nil
            return PlatformRules(platform: platform, limits: configuration.sizeLimits, vendor: drawer ?? draft.vendor)
        }
        return draft.finish(with: results, judgedBy: judges, reportingVerdicts: !configuration.platforms.isEmpty)
    }

    /// The outcome of `payload` where no fetcher could be made (`error`: an output or cache
    /// directory that cannot be used): what the payload shows and says, as a fetcher would
    /// report it, when it needs no file (an internal push, no attachment, a malformed payload);
    /// `storage`, for `error`, when it does, each file it names a failure with its URL.
    package static func outcome(of payload: Data, withoutFetcher error: AttachmentFetcherError, configuration: Configuration) -> Outcome {
        var draft = OutcomeDraft(payload: payload, startedAt: .now)
        let decision = decide(&draft, configuration: configuration) { draft in
            let prepared = PreparedPayload(
                payload, maximumAttachments: configuration.maximumAttachmentsPerPayload, judging: configuration.platforms,
                normalise: AttachmentURL.normalised)
            apply(prepared, to: &draft)
            return prepared
        }
        switch decision {
        case .outcome(let outcome): return outcome
        case .download(let requests, let platforms):
            // Each file it names fails with its URL, as a download would: `storage` for `error`,
            // or the URL's own failure where it cannot be read.
            let results = requests.map { request in
                switch AttachmentURL.parse(request.url) {
                case .success(let url):
                    AttachmentResult(request: request, url: url, result: .failure(TransferFailure(reason: .storage, detail: error.message)))
                case .failure(let failure):
                    AttachmentResult(request: request, url: nil, result: .failure(failure))
                }
            }
            return finish(draft, with: results, on: platforms, configuration: configuration)
        }
    }

    /// How credentials in URLs are allowed, for the details that refuse them.
    static let allowCredentials = " (allow them with Configuration.allowsCredentialsInURLs; fetch-attachment --allow-url-credentials)"

    /// Downloads every requested attachment concurrently.
    private func download(_ requests: [RequestedAttachment], deadline: ContinuousClock.Instant) async -> [AttachmentResult] {
        let parsed = requests.map { request in (request, urls.parse(request.url)) }
        if parsed.count == 1 {
            return [await download(parsed[0], deadline: deadline)]
        }
        return await withTaskGroup { group in
            for (index, request) in parsed.enumerated() {
                group.addTask { (index, await self.download(request, deadline: deadline)) }
            }
            var results = [AttachmentResult?](repeating: nil, count: requests.count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    private func download(
        _ parsed: (RequestedAttachment, Result<AttachmentURL, TransferFailure>), deadline: ContinuousClock.Instant
    ) async -> AttachmentResult {
        let (request, parse) = parsed
        switch parse {
        case .success(let url): return AttachmentResult(request: request, url: url, result: await download(url, deadline: deadline))
        case .failure(let failure): return AttachmentResult(request: request, url: nil, result: .failure(failure))
        }
    }

    private func download(_ url: AttachmentURL, deadline: ContinuousClock.Instant) async -> Result<DownloadedFile, TransferFailure> {
        if !configuration.allowsCredentialsInURLs, url.hasCredentials {
            return .failure(
                TransferFailure(
                    reason: .invalidURL, detail: "the URL carries credentials (user:pass@), which are not sent\(Self.allowCredentials)"))
        }
        return await downloader.download(url, deadline: deadline)
    }

    /// Logs `outcome`, with `urls` (as the payload wrote them) redacted, at its level: `info` when
    /// the original content stands for a payload that named a picture, or for another reason
    /// than asking for none; `debug` for an attachment, a silent push and one naming no picture
    /// (a text-only push is no failure, and a client receiving many would log each).
    private func log(_ outcome: Outcome, urls: [String]) {
        let quiet = outcome.reason.map { urls.isEmpty && [.noAttachment, .internalPush].contains($0) } ?? true
        let level: Logger.Level = quiet ? .debug : .info
        // Building the metadata costs more than the rest of a cache hit: skip it when unread.
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = [
            "status": "\(outcome.status.rawValue)",
            "elapsed_ms": "\(outcome.elapsedMilliseconds)",
        ]
        if let vendor = outcome.vendor { metadata["vendor"] = "\(vendor)" }
        if !urls.isEmpty { metadata["url"] = "\(urls.map(URLCredentials.redacted).joined(separator: " "))" }
        if let reason = outcome.reason {
            metadata["reason"] = "\(reason)"
            metadata["detail"] = "\(outcome.detail ?? "")"
            logger.log(level: level, "original content stands", metadata: metadata)
        } else {
            metadata["path"] = "\(outcome.attachments.first?.path ?? "")"
            logger.debug("attachment ready", metadata: metadata)
        }
    }

    private static func prepareDirectory(_ path: String) throws(AttachmentFetcherError) -> String {
        let absolute = FilePath.absolute(path).string
        do {
            try Syscalls.makeDirectories(FilePath(absolute))
        } catch {
            // A file already there under that name: say so, rather than "cannot create".
            if let existing = try? Syscalls.status(of: FilePath(absolute)), existing.type != .directory {
                throw .outputDirectoryUnusable("\(absolute) is a file, not a directory")
            }
            throw .outputDirectoryUnusable("cannot create \(absolute): \(error)")
        }
        do {
            try Syscalls.checkAccess(FilePath(absolute), W_OK | X_OK)
        } catch {
            throw .outputDirectoryUnusable("\(absolute) is not writable: \(error)")
        }
        // Made again, as it is now, if it goes while the fetcher lives.
        AttachmentFiles.keep(absolute)
        return absolute
    }
}

/// Runs `body` with a fetcher and shuts the fetcher down afterwards, whether `body` returns or
/// throws. `body` runs on the caller's actor (`isolation`, as `withTaskGroup` takes it), so the
/// call compiles and runs as written in `@MainActor` code.
public func withPushAttachmentFetcher<Value>(
    configuration: PushAttachmentFetcher.Configuration,
    logger: Logger = Logger(label: "AttachmentFetcher", factory: { _ in SwiftLogNoOpLogHandler() }),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (PushAttachmentFetcher) async throws -> Value
) async throws -> Value {
    let fetcher = try PushAttachmentFetcher(configuration: configuration, logger: logger)
    do {
        let result = try await body(fetcher)
        await fetcher.shutdown()
        return result
    } catch {
        await fetcher.shutdown()
        throw error
    }
}
