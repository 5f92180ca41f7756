/// Downloads each attachment from its origin, with no cache: one unconditional request per
/// payload, the body streamed into a nameless file in the output directory (made ahead, see
/// `PreparedFiles`) and named there after its type once validated.
struct DirectDownloads: AttachmentDownloader {
    let engine: TransferEngine
    let outputDirectory: String
    /// Nameless files made ahead in `outputDirectory`, mode 0644 as an attachment's.
    let preparedFiles: PreparedFiles

    func download(_ url: AttachmentURL, deadline: ContinuousClock.Instant) async -> Result<DownloadedFile, TransferFailure> {
        let directory = outputDirectory
        return await engine.downloadFile(
            UnconditionalRequest(
                url: url.string, hostKey: url.hostKey, deadline: deadline, temporaryDirectory: directory,
                place: { body in AttachmentFiles.place(body, in: directory, namedAfter: url) }, preparedFiles: preparedFiles))
    }
}
