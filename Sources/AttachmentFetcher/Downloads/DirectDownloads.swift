/// Downloads each attachment from its origin, with no cache: one unconditional request per
/// payload, the body placed in the output directory under a name of its type.
struct DirectDownloads: AttachmentDownloader {
    let engine: TransferEngine
    let outputDirectory: String

    func download(_ url: AttachmentURL, deadline: ContinuousClock.Instant) async -> Result<DownloadedFile, TransferFailure> {
        let directory = outputDirectory
        return await engine.downloadFile(
            UnconditionalRequest(
                url: url.string, hostKey: url.hostKey, deadline: deadline, temporaryDirectory: directory,
                place: { body in AttachmentFiles.place(body, in: directory, namedAfter: url) }))
    }
}
