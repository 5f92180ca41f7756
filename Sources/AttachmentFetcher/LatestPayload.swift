import Foundation

/// The last payload read and what it said: a campaign sends the same bytes to every device, so
/// in a spike payload after payload is the one just read, and comparing its bytes costs less
/// than reading them again. One entry: distinct payloads cost a comparison that fails early.
/// Safe from any thread.
final class LatestPayload: Sendable {
    private let latest = Locked<(payload: Data, prepared: PreparedPayload)?>(nil)

    /// What `payload` says, read now or remembered from the payload before it. One fetcher's
    /// memo: its `maximumAttachments` and `platforms` are the same for every payload.
    func prepared(_ payload: Data, maximumAttachments: Int, judging platforms: [Platform] = []) -> PreparedPayload {
        if let known = latest.withLock({ latest in latest.flatMap { $0.payload == payload ? $0.prepared : nil } }) {
            return known
        }
        let prepared = PreparedPayload(
            payload, maximumAttachments: maximumAttachments, judging: platforms, normalise: AttachmentURL.normalised)
        latest.withLock { $0 = (payload, prepared) }
        return prepared
    }
}
