import Foundation

/// What the file name URLSession suggests for a response (`URLResponse.suggestedFilename`) says of
/// its type. That name is the `Content-Disposition` filename, else the URL's last path component,
/// with, "in most cases", the extension of its `Content-Type` appended. Firebase's iOS extension
/// names the attachment after it alone (`FIRMessagingExtensionHelper.m`: `"." +
/// suggestedFilename.pathExtension`), and so do Iterable's (`ITBNotificationServiceExtension`: a
/// UUID followed by `suggestedFilename`) and Customer.io's (`HttpRequestRunner.downloadFile`:
/// `suggestedFilename` alone); iOS takes an attachment's type from its extension.
enum SuggestedFileName {
    /// Whether the suggested name surely has no extension of a type iOS attaches: neither the
    /// `Content-Disposition` filename nor, without one, the URL's last path component has an
    /// extension, and the `Content-Type` is not an image's, a video's or a sound's (whose
    /// extension would be appended), or is one of a type iOS surely refuses
    /// (`AttachmentTypes.isRefusedOnIOS`: WebP, HEIC, SVG, QuickTime…, whose extension iOS then
    /// reads). A name with some extension is not judged: which extension URLSession would keep is
    /// not documented.
    static func lacksAcceptedExtension(url: String, headers: [HTTPHeader]) -> Bool {
        let disposition = headers.last { $0.name == "content-disposition" }.flatMap { filename(in: $0.value) }
        let name = disposition ?? URLComponents(string: url)?.path.split(separator: "/").last.map(String.init) ?? ""
        if let dot = name.lastIndex(of: "."), name.index(after: dot) != name.endIndex { return false }
        let type = HTTPHeader.mediaType(of: headers.last { $0.name == "content-type" }?.value)
        return !["image/", "video/", "audio/"].contains { type.hasPrefix($0) } || AttachmentTypes.isRefusedOnIOS(type)
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
