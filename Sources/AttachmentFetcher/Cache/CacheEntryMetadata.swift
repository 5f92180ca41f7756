import Foundation

/// What is kept with each cached body: in the body file's extended attribute `user.afe`, set
/// before the body gets its name, so that an entry appears with its metadata in one `linkat` and
/// needs no second file. The encoding is binary and small (29 bytes without validators), so that
/// on ext4 it fits inside the inode and costs no block of its own.
///
/// The type is not kept: libmagic finds it again on the body's first use in each process. Nor is
/// a digest of the body: what tells a damaged or rewritten body from the one stored is its size
/// and modification time (see `CacheStore.load`), and a body that fails either is dropped, not
/// read again. A digest computed as the body streams would cost about a fifth of a cached miss's
/// CPU, and could only be compared once the modification time had changed, which already drops
/// the entry.
struct CacheEntryMetadata: Sendable, Hashable {
    /// The body's size in bytes.
    var size: Int
    /// The body's modification time when it was stored (nanoseconds since 1970): a body
    /// written in place since then no longer matches it, and is dropped.
    var modified: Int64
    /// Until when it is fresh.
    var freshUntil: Date
    /// Validators for revalidation.
    var etag: String?
    var lastModified: String?
    /// Whether the download's redirects changed its scheme (https → http or http → https):
    /// Android shows no picture then, and iOS's ATS refuses a hop to http.
    var changedScheme = false
    /// How long the download took, kept when it was at least `slowDownload` (so that a hit is
    /// judged by Android SDKs' picture times as the download was); `nil` otherwise.
    var downloadTime: Duration? = nil
    /// Whether the file name URLSession would suggest for the response has no image extension
    /// (see `SuggestedFileName`): Firebase's iOS extension then attaches nothing.
    var unsuffixedName = false
    /// Whether a redirect on the way set a cookie (Android keeps none for the next hop).
    var redirectSetCookie = false
    /// The lifetime the origin gave the body (`max-age`, `no-cache` as 0, `Expires`), in
    /// seconds, when it gave one: a `304` that gives none keeps it (RFC 9111 4.3.4).
    var lifetime: Int? = nil
    /// Whether OneSignal's table of MIME types gives the response's `Content-Type` no extension
    /// (see `VendorFileNaming`): its iOS extension then names the file from the URL alone. An
    /// entry written before the flag existed reads as `false`, as it was judged then.
    var oneSignalUntypedMIME = false
    /// Whether CleverTap's table of MIME types gives the response's `Content-Type` no extension
    /// (see `VendorFileNaming`): its iOS extension then names the file from `ct_mediaType` alone.
    /// An entry written before the flag existed reads as `false`, as it was judged then.
    var cleverTapUntypedMIME = false
    /// Whether the body ends before its format's end mark though its framing vouched for it
    /// (`DownloadedFile.cutAtOrigin`): the origin's file is cut short.
    var cutAtOrigin = false
    /// Whether Airship's extension takes no type hint from the response's `Content-Type` (see
    /// `VendorFileNaming.airshipMIMEHints`). An entry written before the flag existed reads as
    /// `false`, as it was judged then.
    var airshipUntypedMIME = false
    /// Why the suggested name has no extension of a type iOS attaches, with `unsuffixedName`
    /// (so that a hit's verdict says what to change, as the miss's did). An entry written
    /// before it was kept has the flag alone, and reads as `nil`.
    var unsuffixedReason: SuggestedFileName.Unsuffixed? = nil

    /// The shortest download time an entry keeps: below it no Android SDK's picture time is
    /// near (the shortest is 5 s, and a warning starts at half of it).
    static let slowDownload: Duration = .seconds(1)

    /// `time` when an entry keeps it (at least `slowDownload`), else `nil`.
    static func kept(_ time: Duration?) -> Duration? { time.flatMap { $0 >= slowDownload ? $0 : nil } }

    /// The extended attribute that holds it.
    static let attributeName = "user.afe"
    private static let version: UInt8 = 2
    /// Version 2 with a second flags byte (`flagsVersion`), written only when one of its flags
    /// is set: an entry without them reads the same in every release.
    private static let flagsVersion: UInt8 = 3
    /// The version that also kept a 32-byte SHA-256 of the body after the freshness: still read
    /// (the digest skipped), so that a cache written by it stays usable.
    private static let digestVersion: UInt8 = 1

    /// The attribute's bytes: version, size, modification time, freshness (milliseconds since
    /// 1970), then each validator as a 16-bit length and its UTF-8 bytes, then a
    /// flags byte (1: `changedScheme`; 2: the download time follows, in milliseconds, 32 bits;
    /// 4: `unsuffixedName`; 8: `redirectSetCookie`; 16: the origin's lifetime follows, in seconds,
    /// 32 bits, after the download time; 32: `oneSignalUntypedMIME`; 64: `cleverTapUntypedMIME`;
    /// 128: `cutAtOrigin`) only when a flag is set, so
    /// that the attribute of an entry without flags reads the same in every release of the format.
    /// Every bit of that byte is taken: version 3 (`flagsVersion`) has the flags byte always and a
    /// second one after it, not zero (1: `airshipUntypedMIME`; 2: `unsuffixedReason` is kept, in
    /// 4: the name is the `Content-Disposition` filename, 8: there is no `Content-Type`, 16: it
    /// is of a type iOS refuses, neither: it is not a media type), and is written only when one of
    /// the second byte's flags is set. A release that reads only the first of them reads the
    /// entry all the same.
    func encoded() -> [UInt8] {
        var moreFlags: UInt8 = airshipUntypedMIME ? 1 : 0
        if unsuffixedName, let reason = unsuffixedReason {
            moreFlags |= 2 | (reason.fromContentDisposition ? 4 : 0)
            switch reason.contentType {
            case .missing: moreFlags |= 8
            case .refusedOnIOS: moreFlags |= 16
            case .notMedia: break
            }
        }
        var bytes: [UInt8] = [moreFlags != 0 ? Self.flagsVersion : Self.version]
        func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        append(UInt64(size))
        append(UInt64(bitPattern: modified))
        // Clamped: a lifetime is bounded (`HTTPFreshness.longestDelta`), but a Double out of
        // Int64's range would stop the process rather than the entry.
        let milliseconds = freshUntil.timeIntervalSince1970 * 1000
        append(UInt64(bitPattern: milliseconds.isFinite ? Int64(max(-9e18, min(9e18, milliseconds))) : 0))
        for text in [etag, lastModified] {
            let utf8 = Array((text ?? "").utf8.prefix(1024))
            bytes.append(UInt8(utf8.count & 0xFF))
            bytes.append(UInt8(utf8.count >> 8))
            bytes.append(contentsOf: utf8)
        }
        let slow = Self.kept(downloadTime)
        let flags: UInt8 =
            (changedScheme ? 1 : 0) | (slow != nil ? 2 : 0) | (unsuffixedName ? 4 : 0) | (redirectSetCookie ? 8 : 0) | (lifetime != nil ? 16 : 0)
            | (oneSignalUntypedMIME ? 32 : 0) | (cleverTapUntypedMIME ? 64 : 0) | (cutAtOrigin ? 128 : 0)
        if moreFlags != 0 {
            bytes.append(flags)
            bytes.append(moreFlags)
        } else if flags != 0 {
            bytes.append(flags)
        }
        if let slow {
            let kept = min(slow, .seconds(4_000_000))  // UInt32's milliseconds, and no overflow on the way
            let milliseconds = UInt32(clamping: kept.components.seconds * 1000 + kept.components.attoseconds / 1_000_000_000_000_000)
            withUnsafeBytes(of: milliseconds.littleEndian) { bytes.append(contentsOf: $0) }
        }
        if let lifetime { withUnsafeBytes(of: UInt32(clamping: max(0, lifetime)).littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    /// Metadata read back from an attribute; `nil` when it is not this package's or is damaged
    /// (a validator holding a line break or a NUL is damage).
    static func decode(_ bytes: [UInt8]) -> CacheEntryMetadata? {
        guard let first = bytes.first, first == version || first == digestVersion || first == flagsVersion else { return nil }
        let digestBytes = first == digestVersion ? 32 : 0
        guard bytes.count >= 1 + 24 + digestBytes + 4 else { return nil }
        var offset = 1
        func number() -> UInt64 {
            defer { offset += 8 }
            return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        let size = number(), modified = number(), fresh = number()
        offset += digestBytes
        var texts: [String?] = []
        for _ in 0..<2 {
            guard offset + 2 <= bytes.count else { return nil }
            let count = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            offset += 2
            guard offset + count <= bytes.count else { return nil }
            // A validator goes back as a request header's value: a line break or a NUL, which no
            // response's header holds (libcurl splits lines and refuses NULs), would be a header
            // of its own, smuggled in by whoever wrote the attribute.
            guard !bytes[offset..<offset + count].contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else { return nil }
            texts.append(count == 0 ? nil : String(decoding: bytes[offset..<offset + count], as: UTF8.self))
            offset += count
        }
        var flags: UInt8 = 0
        var moreFlags: UInt8 = 0
        if first == flagsVersion {
            // Both flags bytes, the second not zero (else the entry would be version 2).
            guard offset + 2 <= bytes.count, bytes[offset + 1] != 0 else { return nil }
            flags = bytes[offset]
            moreFlags = bytes[offset + 1]
            offset += 2
        } else if offset < bytes.count {
            flags = bytes[offset]
            offset += 1
            guard flags != 0 else { return nil }
        }
        var downloadTime: Duration?
        if flags & 2 != 0 {
            guard offset + 4 <= bytes.count else { return nil }
            let milliseconds = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
            downloadTime = .milliseconds(Int64(milliseconds))
            offset += 4
        }
        var lifetime: Int?
        if flags & 16 != 0 {
            guard offset + 4 <= bytes.count else { return nil }
            lifetime = Int((0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) })
            offset += 4
        }
        guard offset == bytes.count, size <= UInt64(Int.max) else { return nil }
        return CacheEntryMetadata(
            size: Int(size), modified: Int64(bitPattern: modified),
            freshUntil: Date(timeIntervalSince1970: Double(Int64(bitPattern: fresh)) / 1000), etag: texts[0], lastModified: texts[1],
            changedScheme: flags & 1 != 0, downloadTime: downloadTime, unsuffixedName: flags & 4 != 0,
            redirectSetCookie: flags & 8 != 0, lifetime: lifetime, oneSignalUntypedMIME: flags & 32 != 0,
            cleverTapUntypedMIME: flags & 64 != 0, cutAtOrigin: flags & 128 != 0, airshipUntypedMIME: moreFlags & 1 != 0,
            unsuffixedReason: flags & 4 != 0 && moreFlags & 2 != 0
                ? SuggestedFileName.Unsuffixed(
                    fromContentDisposition: moreFlags & 4 != 0,
                    contentType: moreFlags & 8 != 0 ? .missing : moreFlags & 16 != 0 ? .refusedOnIOS : .notMedia)
                : nil)
    }
}
