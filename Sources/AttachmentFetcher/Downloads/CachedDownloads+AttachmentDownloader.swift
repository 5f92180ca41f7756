/// The cache's `download(_:deadline:)` is the downloader's.
extension CachedDownloads: AttachmentDownloader {}
