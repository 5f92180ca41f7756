/// A download without validators (no `If-None-Match`, no `If-Modified-Since`): its answer is a
/// file or a failure, never `304 Not Modified` (see `TransferEngine.downloadFile(_:)`).
struct UnconditionalRequest: Sendable {
    /// The absolute http(s) URL.
    var url: String
    /// `scheme://host:port`: transfers to one key share the per-host connection limit.
    var hostKey: String
    /// When the payload's time is up.
    var deadline: ContinuousClock.Instant
    /// A later deadline the requester may move it to (see `TransferRequest.laterDeadline`).
    var laterDeadline: ExtendableDeadline? = nil
    /// Where the body streams to (see `TransferRequest.temporaryDirectory`).
    var temporaryDirectory: String
    /// Moves the validated body to its final place (see `TransferRequest.place`).
    var place: @Sendable (DownloadedFile) -> Result<DownloadedFile, TransferFailure>
    /// Nameless files made ahead for the body; with them the body streams into a nameless file
    /// (see `TransferRequest.anonymousBody`), which `place` names or closes.
    var preparedFiles: PreparedFiles? = nil

    /// The engine's request: the same, with no header lines.
    var transferRequest: TransferRequest {
        TransferRequest(
            url: url, headers: [], hostKey: hostKey, deadline: deadline, laterDeadline: laterDeadline,
            temporaryDirectory: temporaryDirectory, place: place, preparedFiles: preparedFiles)
    }
}
