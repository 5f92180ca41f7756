import Foundation

/// Final names of attachment files in the output directory.
enum AttachmentFiles {
    /// Renames a validated body to `<name>-<random>.<suffix>` in `directory`, where `<name>`
    /// comes from the URL's last path component (letters, digits, `-` and `_` only, so neither
    /// the URL nor the payload's type hint can steer the file elsewhere) and `<suffix>` from the
    /// detected type. The rename is atomic: the file appears whole or not at all.
    static func place(
        _ body: DownloadedFile, in directory: String, namedAfter url: AttachmentURL
    ) -> Result<DownloadedFile, TransferFailure> {
        let path = "\(directory)/\(stem(of: url.lastPathComponent))-\(randomTag()).\(body.media.fileExtension)"
        guard rename(body.path, path) == 0 else {
            let message = String(cString: strerror(errno))
            return .failure(TransferFailure(reason: .storage, detail: "cannot rename \(body.path) to \(path): \(message)"))
        }
        var placed = body
        placed.path = path
        return .success(placed)
    }

    /// A safe, short file name stem from a URL path component ("attachment" when nothing is left).
    static func stem(of component: String) -> String {
        let withoutSuffix = component.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let safe = withoutSuffix.unicodeScalars.filter { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_")
        }
        let stem = String(String.UnicodeScalarView(safe.prefix(48)))
        return stem.isEmpty ? "attachment" : stem
    }

    private static func randomTag() -> String {
        String(UInt64.random(in: .min ... .max), radix: 36)
    }
}
