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
        let path = finalPath(for: body, in: directory, namedAfter: url)
        guard rename(body.path, path) == 0 else {
            let message = String(cString: strerror(errno))
            return .failure(TransferFailure(reason: .storage, detail: "cannot rename \(body.path) to \(path): \(message)"))
        }
        var placed = body
        placed.path = path
        return .success(placed)
    }

    /// Gives a payload its own file with the same bytes as `source` (a cache entry, which stays):
    /// a hard link where the file system allows, a copy where it does not.
    ///
    /// When `source` has as many links as its file system allows (65,000 on ext4, reached by a
    /// big campaign), `reseed` may give it a fresh inode; the link is then tried once more.
    static func link(
        _ source: DownloadedFile, in directory: String, namedAfter url: AttachmentURL,
        reseed: (() -> Bool)? = nil
    ) -> Result<DownloadedFile, TransferFailure> {
        let path = finalPath(for: source, in: directory, namedAfter: url)
        var placed = source
        placed.path = path
        var error = hardLink(source.path, path) == 0 ? 0 : errno
        if error == 0 { return .success(placed) }
        if error == EMLINK, let reseed {
            // While another thread renames a fresh copy over the source, link(2) can answer ENOENT
            // for a moment: try again, a bounded number of times.
            for _ in 0..<8 where error == EMLINK || error == ENOENT {
                if error == EMLINK, !reseed() { break }
                error = hardLink(source.path, path) == 0 ? 0 : errno
                if error == 0 { return .success(placed) }
            }
        }
        guard [EXDEV, EPERM, EMLINK, ENOTSUP, EOPNOTSUPP].contains(error) else {
            return .failure(TransferFailure(reason: .storage, detail: "cannot link \(source.path) to \(path): \(String(cString: strerror(error)))"))
        }
        return copy(source.path, to: path, temporaryDirectory: directory).map { placed }
    }

    /// Copies `source` to `destination` through a temporary file in `temporaryDirectory` (on the
    /// destination's file system), so that `destination` appears whole or not at all.
    static func copy(_ source: String, to destination: String, temporaryDirectory: String) -> Result<Void, TransferFailure> {
        let temporary = TemporaryFiles.path(in: temporaryDirectory)
        do {
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
        } catch {
            TemporaryFiles.remove(temporary)
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            let exhausted = underlying?.domain == NSPOSIXErrorDomain && FileDescriptorBudget.isExhaustion(Int32(underlying!.code))
            return .failure(
                TransferFailure(
                    reason: exhausted ? .resources : .storage, detail: "cannot copy \(source): \(error.localizedDescription)"))
        }
        guard rename(temporary, destination) == 0 else {
            let failure = TransferFailure(reason: .storage, detail: "cannot rename \(temporary) to \(destination): \(String(cString: strerror(errno)))")
            TemporaryFiles.remove(temporary)
            return .failure(failure)
        }
        return .success(())
    }

    private static func finalPath(for body: DownloadedFile, in directory: String, namedAfter url: AttachmentURL) -> String {
        "\(directory)/\(url.fileStem)-\(FileNameTag.next()).\(body.media.fileExtension)"
    }

    /// A safe, short file name stem from a URL path component ("attachment" when nothing is left).
    static func stem(of component: String) -> String {
        let withoutSuffix = component.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let safe = withoutSuffix.utf8.lazy.filter { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
        let stem = String(decoding: Array(safe.prefix(48)), as: UTF8.self)
        return stem.isEmpty ? "attachment" : stem
    }
}

/// link(2), under a name that `AttachmentFiles.link` does not shadow.
private func hardLink(_ source: String, _ destination: String) -> Int32 {
    link(source, destination)
}
