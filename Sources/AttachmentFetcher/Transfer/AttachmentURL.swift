import Foundation

/// An attachment URL that passed the checks made before any request: absolute, http or https,
/// with a host.
struct AttachmentURL: Sendable, Hashable {
    /// The URL as given (libcurl receives it unchanged).
    var string: String
    /// `scheme://host:port`, lowercased: the unit of the per-host connection limit.
    var hostKey: String
    /// The stem of the local file's name, from the URL's last path component (see
    /// `AttachmentFiles.stem(of:)`), worked out once per URL rather than once per file.
    var fileStem: String

    /// Checks `string`; `invalid-url` explains what is wrong.
    static func parse(_ string: String) -> Result<AttachmentURL, TransferFailure> {
        func invalid(_ why: String) -> Result<AttachmentURL, TransferFailure> {
            .failure(TransferFailure(reason: .invalidURL, detail: "\(why): \(string.prefix(200))"))
        }
        guard !string.isEmpty else { return invalid("the URL is empty") }
        guard let components = URLComponents(string: string) else { return invalid("not a URL") }
        guard let scheme = components.scheme?.lowercased() else { return invalid("not an absolute URL") }
        guard scheme == "http" || scheme == "https" else { return invalid("only http and https are fetched") }
        guard let host = components.host?.lowercased(), !host.isEmpty else { return invalid("the URL has no host") }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        let last = components.path.split(separator: "/").last.map(String.init) ?? ""
        return .success(
            AttachmentURL(string: string, hostKey: "\(scheme)://\(host):\(port)", fileStem: AttachmentFiles.stem(of: last)))
    }
}

extension BoundedMemo where Value == AttachmentURL {
    /// `AttachmentURL.parse(string)`, from memory when `string` was checked before. Only valid
    /// URLs are kept.
    func parse(_ string: String) -> Result<AttachmentURL, TransferFailure> {
        if let known = remembered(string) { return .success(known) }
        let result = AttachmentURL.parse(string)
        if case .success(let url) = result { remember(url, for: string) }
        return result
    }
}
