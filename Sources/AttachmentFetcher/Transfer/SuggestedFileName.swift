import Foundation

/// What the file name URLSession suggests for a response (`URLResponse.suggestedFilename`) says of
/// its type. That name is the `Content-Disposition` filename, else the URL's last path component,
/// with, "in most cases", the extension of its `Content-Type` appended. Firebase's iOS extension
/// names the attachment after it alone (`FIRMessagingExtensionHelper.m`: `"." +
/// suggestedFilename.pathExtension`), and so do Iterable's (`ITBNotificationServiceExtension`: a
/// UUID followed by `suggestedFilename`) and Customer.io's (`HttpRequestRunner.downloadFile`:
/// `suggestedFilename` alone); iOS takes an attachment's type from its extension.
enum SuggestedFileName {
    /// Why a suggested name surely has no extension of a type iOS attaches: what the name came
    /// from, and what its `Content-Type` adds to it.
    struct Unsuffixed: Sendable, Hashable {
        /// What URLSession's name adds for the response's `Content-Type`.
        enum ContentType: Sendable, Hashable {
            /// There is none: nothing.
            case missing
            /// It is not an image's, a video's or a sound's: nothing.
            case notMedia
            /// It is of a type iOS refuses (WebP, HEIC, SVG, QuickTime…): its extension, which
            /// iOS then reads.
            case refusedOnIOS
        }

        /// Whether the name is the `Content-Disposition` filename (else the URL's last path
        /// component, there being no such filename).
        var fromContentDisposition: Bool
        var contentType: ContentType
    }

    /// Why the suggested name surely has no extension of a type iOS attaches, or `nil` when it
    /// may have one: neither the `Content-Disposition` filename nor, without one, the URL's last
    /// path component has an extension, and the `Content-Type` is not an image's, a video's or a
    /// sound's (whose extension would be appended), or is one of a type iOS surely refuses
    /// (`AttachmentTypes.isRefusedOnIOS`: WebP, HEIC, SVG, QuickTime…, whose extension iOS then
    /// reads). A name with some extension is not judged: which extension URLSession would keep is
    /// not documented.
    static func unsuffixed(url: String, headers: [HTTPHeader]) -> Unsuffixed? {
        let disposition = headers.last { $0.name == "content-disposition" }.flatMap { filename(in: $0.value) }
        let name = disposition ?? URLComponents(string: url)?.path.split(separator: "/").last.map(String.init) ?? ""
        if let dot = name.lastIndex(of: "."), name.index(after: dot) != name.endIndex { return nil }
        let type = HTTPHeader.mediaType(of: headers.last { $0.name == "content-type" }?.value)
        let contentType: Unsuffixed.ContentType
        if ["image/", "video/", "audio/"].contains(where: { type.hasPrefix($0) }) {
            guard AttachmentTypes.isRefusedOnIOS(type) else { return nil }
            contentType = .refusedOnIOS
        } else {
            contentType = type.isEmpty ? .missing : .notMedia
        }
        return Unsuffixed(fromContentDisposition: disposition != nil, contentType: contentType)
    }

    /// Whether the suggested name surely has no extension of a type iOS attaches (`unsuffixed`).
    static func lacksAcceptedExtension(url: String, headers: [HTTPHeader]) -> Bool {
        unsuffixed(url: url, headers: headers) != nil
    }

    /// The `filename` (or RFC 5987 `filename*`) parameter of a `Content-Disposition` value,
    /// unquoted, its path dropped; `nil` when it names none.
    static func filename(in value: String) -> String? {
        var found: String?
        for parameter in value.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0].lowercased() {
            case "filename*":
                // charset'language'percent-encoded: it wins over `filename`.
                let encoded = parts[1].split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false).last.map(String.init) ?? ""
                return lastComponent(encoded.removingPercentEncoding ?? encoded)
            case "filename":
                found = lastComponent(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            default: break
            }
        }
        return found
    }

    /// What follows the last slash or backslash among `name`'s scalars (a Character holds a
    /// slash and the combining marks after it, and would be no slash).
    private static func lastComponent(_ name: String) -> String? {
        let last = name.unicodeScalars.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        return last.isEmpty ? nil : last
    }
}
