/// How a fetcher turns an attachment's URL into a file of its own in the output directory:
/// straight from the origin (`DirectDownloads`) or through the on-disk cache (`CachedDownloads`).
protocol AttachmentDownloader: Sendable {
    /// The attachment at `url` as a validated file in the output directory, or why not, by
    /// `deadline`.
    func download(_ url: AttachmentURL, deadline: ContinuousClock.Instant) async -> Result<DownloadedFile, TransferFailure>
}
