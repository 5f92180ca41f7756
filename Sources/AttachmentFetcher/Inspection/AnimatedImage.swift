/// Whether an image's first bytes declare an animation. A pure function of the bytes.
///
/// Android draws a notification's picture with `BitmapFactory`, which decodes one still image:
/// an animated WebP, PNG (APNG) or AVIF sequence shows its first frame and does not move, as a
/// GIF does not. Each format says so near its start, inside the classifier's window:
/// - WebP: the `VP8X` chunk's animation flag (RFC 9649, section 2.7);
/// - PNG: an `acTL` chunk before the first `IDAT` (APNG specification, section 4);
/// - AVIF: the `avis` brand of an image sequence (AV1 Image File Format, section 8).
enum AnimatedImage {
    /// The format's name for a warning when `bytes` (of type `mime`) declare an animation;
    /// `nil` for a still image, and for GIF, which has a warning of its own. `file` is what the
    /// bytes say as ISO base media (read once by the classifier), `nil` when they are not.
    static func animatedFormat(mime: String, bytes: [UInt8], file: ISOBaseMedia?) -> String? {
        switch mime.lowercased() {
        case "image/webp": isAnimatedWebP(bytes) ? "WebP" : nil
        case "image/png": isAnimatedPNG(bytes) ? "PNG (APNG)" : nil
        case "image/avif": file?.brands.contains("avis") == true ? "AVIF (an image sequence)" : nil
        default: nil
        }
    }

    /// "RIFF" size "WEBP", then a `VP8X` chunk whose first flag byte has bit 1 (animation) set.
    static func isAnimatedWebP(_ bytes: [UInt8]) -> Bool {
        guard bytes.count > 20, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8),
            bytes[12..<16].elementsEqual("VP8X".utf8)
        else { return false }
        return bytes[20] & 0x02 != 0
    }

    /// The PNG signature, then chunks (length, type, data, CRC) up to the first `IDAT`: an `acTL`
    /// among them makes an APNG. Chunks past the bytes in view are not looked for.
    static func isAnimatedPNG(_ bytes: [UInt8]) -> Bool {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.starts(with: signature) else { return false }
        var offset = signature.count
        var chunks = 0
        while offset + 8 <= bytes.count, chunks < 256 {
            chunks += 1
            let length = bytes[offset..<offset + 4].reduce(0) { ($0 << 8) | Int($1) }
            let type = bytes[offset + 4..<offset + 8]
            if type.elementsEqual("acTL".utf8) { return true }
            if type.elementsEqual("IDAT".utf8) { return false }
            // Length (4), type (4), data, CRC (4); a length over 2^31 - 1 is invalid (PNG 5.3).
            guard length <= Int(Int32.max) else { return false }
            offset += 12 + length
        }
        return false
    }
}
