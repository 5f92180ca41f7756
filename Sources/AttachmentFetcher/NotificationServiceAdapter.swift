import Foundation
import Synchronization
import SystemPackage

/// The shape iOS developers know from `UNNotificationServiceExtension`: `didReceive` starts
/// processing a payload, `serviceExtensionTimeWillExpire` ends it early, and the content
/// handler is called exactly once either way.
///
/// When time expires first, the handler gets the original content at once (reason `deadline`),
/// the download is cancelled, and any file that was nonetheless made is removed (an attachment,
/// or a file only another judged platform shows).
///
/// Like an extension instance, an adapter handles one notification at a time: `didReceive`
/// first expires the request still pending. Make one adapter per notification handled at once;
/// they can share one `PushAttachmentFetcher`.
public final class NotificationServiceAdapter: Sendable {
    /// Receives the content to show: attachments, or the original payload.
    public typealias ContentHandler = @Sendable (Outcome) -> Void

    private struct Pending {
        var request: UInt64
        var handler: ContentHandler
        var payload: Data
        var startedAt: ContinuousClock.Instant
        var task: Task<Void, Never>?
    }

    private let fetcher: PushAttachmentFetcher
    private let pending = Locked<Pending?>(nil)
    private let requests = Atomic<UInt64>(0)

    /// An adapter that processes payloads with `fetcher`.
    public init(fetcher: PushAttachmentFetcher) {
        self.fetcher = fetcher
    }

    /// Starts processing `payload`; `contentHandler` is called exactly once with the result. A
    /// request still pending from an earlier call is expired first, as iOS would.
    public func didReceive(_ payload: Data, withContentHandler contentHandler: @escaping ContentHandler) {
        didReceive(payload, withContentHandler: contentHandler, afterRegistering: { _ in })
    }

    /// The same against an instant rather than the fetcher's timeout: the deadline the
    /// extension was given (`serviceExtensionTimeWillExpire` still ends it sooner).
    public func didReceive(
        _ payload: Data, deadline: ContinuousClock.Instant, withContentHandler contentHandler: @escaping ContentHandler
    ) {
        didReceive(payload, deadline: deadline, withContentHandler: contentHandler, afterRegistering: { _ in })
    }

    /// The same, with `afterRegistering` given the processing task once the request is
    /// registered (tests expire the request there).
    func didReceive(
        _ payload: Data, deadline: ContinuousClock.Instant? = nil, withContentHandler contentHandler: @escaping ContentHandler,
        afterRegistering: (Task<Void, Never>) -> Void
    ) {
        serviceExtensionTimeWillExpire()
        let request = requests.add(1, ordering: .relaxed).newValue
        // The request and its task are published together, so an expiry from another thread
        // finds the task with the request and cancels it. The task cannot deliver before it is
        // registered: `deliver` takes the same lock.
        let task = pending.withLock { state in
            let task = Task { [fetcher] in
                let outcome = if let deadline { await fetcher.process(payload, deadline: deadline) } else { await fetcher.process(payload) }
                if !self.deliver(outcome, for: request) {
                    // Time expired while the file was being made: the original content was shown.
                    let files = outcome.attachments.map(\.path) + outcome.failures.compactMap(\.file?.path)
                    for path in Set(files) { try? Syscalls.unlink(FilePath(path)) }
                }
            }
            state = Pending(request: request, handler: contentHandler, payload: payload, startedAt: .now, task: task)
            return task
        }
        afterRegistering(task)
    }

    /// Delivers the original content now (reason `deadline`) if the handler has not been called,
    /// and cancels the download.
    public func serviceExtensionTimeWillExpire() {
        guard let taken = pending.withLock({ state -> Pending? in defer { state = nil }; return state }) else { return }
        taken.task?.cancel()
        // What the push says stays known: a client shows the original content from it.
        taken.handler(fetcher.original(taken.payload, startedAt: taken.startedAt, .deadline, "serviceExtensionTimeWillExpire"))
    }

    /// Calls the handler of `request` with `outcome`; `false` if it was already called.
    private func deliver(_ outcome: Outcome, for request: UInt64) -> Bool {
        let taken = pending.withLock { state -> Pending? in
            guard state?.request == request else { return nil }
            defer { state = nil }
            return state
        }
        guard let taken else { return false }
        taken.handler(outcome)
        return true
    }
}
