import Foundation

/// libFuzzer's entry point for what an origin, or another user of a shared cache, sends that the
/// fetcher parses itself: response headers (`HTTPHeader`, the cache's `HTTPFreshness` of a
/// response and of the redirects before it, `HTTPDate`, `SuggestedFileName`'s reading of
/// `Content-Disposition`), bodies (each format's `BodyCompleteness` walk, `ISOBaseMedia`,
/// `AnimatedImage`, `ExifOrientation`) and a cache entry's metadata attribute (`CacheEntryMetadata.decode`).
/// `scripts/fuzz.sh` builds it with `-sanitize=fuzzer,address` from those sources alone.
///
/// The first byte chooses what the rest is: a header block (even), a body of one of the
/// checked formats (odd), or, every sixteenth value, a metadata attribute. Besides not crashing (a Swift overflow or out-of-range index is a
/// crash: an origin could end a preflight server's process with one response), each reading keeps
/// its promises, checked below.
@_cdecl("LLVMFuzzerTestOneInput")
public func responseFuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let selector = start[0]
    let rest = Array(UnsafeBufferPointer(start: start + 1, count: count - 1))
    if selector % 16 == 15 {
        checkMetadata(rest)
    } else if selector % 2 == 0 {
        checkHeaders(String(decoding: rest, as: UTF8.self), status: 300 + Int(selector / 2) % 10)
    } else {
        checkBody(rest, selector: Int(selector / 2))
    }
    return 0
}

private func checkHeaders(_ block: String, status: Int) {
    let headers = HTTPHeader.parse(block)
    for header in headers {
        precondition(header.name == header.name.lowercased(), "a header name not lowercased")
        precondition(!header.name.contains(":"), "a header name holding a colon")
        precondition(header.value.first != " " && header.value.last != " " && header.value.first != "\t", "a value not trimmed")
    }
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let freshness = HTTPFreshness(headers: headers, now: now)
    if let lifetime = freshness.lifetime {
        precondition(lifetime >= .zero && lifetime <= .seconds(HTTPFreshness.longestDelta), "a lifetime out of range: \(lifetime)")
    }
    precondition((freshness.etag?.utf8.count ?? 0) <= HTTPFreshness.longestValidator, "an ETag longer than kept")
    precondition((freshness.lastModified?.utf8.count ?? 0) <= HTTPFreshness.longestValidator, "a Last-Modified longer than kept")
    // The same block as a redirect's: a body reached through it is never fresher than the
    // default, or than it was, and keeps no validator.
    let defaultLifetime = Duration.seconds(3600)
    let bounded = freshness.bounded(by: [RedirectResponse(status: status, headerBlock: block)], defaultLifetime: defaultLifetime, now: now)
    if let lifetime = bounded.lifetime {
        precondition(lifetime <= (freshness.lifetime ?? defaultLifetime), "a redirect lengthened the body's freshness")
    }
    precondition(bounded.etag == nil && bounded.lastModified == nil, "validators kept through a redirect")
    precondition(!freshness.noStore || bounded.noStore, "a redirect dropped no-store")
    for header in headers.prefix(4) {
        _ = HTTPDate.parse(header.value)
        if let name = SuggestedFileName.filename(in: header.value) {
            precondition(!name.isEmpty && !name.contains("/") && !name.contains("\\"), "a suggested name with a path: \(name)")
        }
    }
    _ = SuggestedFileName.lacksAcceptedExtension(url: "https://cdn.example/" + (headers.first?.value ?? ""), headers: headers)
}

private func checkBody(_ bytes: [UInt8], selector: Int) {
    let formats: [BodyCompleteness.Format] = [.jpeg, .png, .gif, .riff, .aiff, .isoBaseMedia, .bmp]
    let format = formats[selector % formats.count]
    // Bytes in memory never fail to read: a throw is a bug.
    guard (try? BodyCompleteness.check(format, bytes)) != nil else { preconditionFailure("a check of bytes in memory threw") }
    let file = ISOBaseMedia(bytes)
    if let file {
        precondition(file.brands.count <= ISOBaseMedia.maximumBrands, "more brands than read: \(file.brands.count)")
        precondition(file.brands.first == file.majorBrand, "the major brand not first")
    }
    for mime in ["image/webp", "image/png", "image/avif", "image/gif"] {
        _ = AnimatedImage.animation(mime: mime, bytes: bytes, file: file)
    }
    if let orientation = ExifOrientation.orientation(ofJPEG: bytes) {
        precondition((2...8).contains(orientation), "an orientation outside 2 to 8: \(orientation)")
    }
    // What the classifier makes of libmagic's answer and the same bytes.
    for mime in ["application/octet-stream", "video/mp4", "audio/mp4", "audio/mpeg", "image/heic", "video/quicktime"] {
        let refined = AttachmentTypes.refined(mime, file: file, bytes: bytes)
        _ = AttachmentTypes.codecRefusal(refined, bytes: bytes, file: file)
        _ = AttachmentTypes.codecRefusal(mime, bytes: bytes, file: file)
    }
}

private func checkMetadata(_ bytes: [UInt8]) {
    guard let metadata = CacheEntryMetadata.decode(bytes) else { return }
    precondition(metadata.size >= 0, "a negative size")
    for validator in [metadata.etag, metadata.lastModified].compactMap({ $0 }) {
        precondition(!validator.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0 }, "a validator that would be a header of its own")
    }
    // What it encodes to reads back (the encoding keeps validators to 1,024 bytes and a
    // download time from 1 s on, so it need not be equal), and encodes alike from then on, but
    // for the freshness: milliseconds through a Double, exact only within 2^53 of them.
    guard let again = CacheEntryMetadata.decode(metadata.encoded()) else { preconditionFailure("decoded metadata encodes to damage") }
    guard var third = CacheEntryMetadata.decode(again.encoded()) else { preconditionFailure("encoded metadata reads as damage") }
    let drift = abs(third.freshUntil.timeIntervalSince1970 - again.freshUntil.timeIntervalSince1970)
    precondition(drift <= max(0.001, abs(again.freshUntil.timeIntervalSince1970) * 1e-12), "the freshness drifts by \(drift) s")
    third.freshUntil = again.freshUntil
    precondition(third == again, "the encoding is not stable")
}
