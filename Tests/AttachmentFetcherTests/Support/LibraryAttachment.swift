import AttachmentFetcher

/// The library's `Attachment`, which Swift Testing's own `Attachment` hides in files that import
/// Testing (this one does not).
typealias LibraryAttachment = Attachment
