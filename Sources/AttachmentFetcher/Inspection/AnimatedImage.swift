/// Whether an image's first bytes declare an animation. A pure function of the bytes.
///
/// Android draws a notification's picture with `BitmapFactory`, which decodes one still image:
/// an animated GIF, WebP, PNG (APNG) or AVIF sequence shows its first frame and does not move.
/// WebP, PNG and AVIF say so near their start, inside the classifier's window:
/// - WebP: the `VP8X` chunk's animation flag (RFC 9649, section 2.7);
/// - PNG: an `acTL` chunk before the first `IDAT` (APNG specification, section 4);
/// - AVIF: the `avis` brand of an image sequence (AV1 Image File Format, section 8).
/// A GIF declares nothing up front: its frames are images one after another, and the first
/// image's data may run far past the window. It is animated when a second image is in view, or
/// a loop extension (`NETSCAPE2.0`, `ANIMEXTS1.0`), which only an animation has use for, before
/// the view ends; it is still when the trailer follows its one image in view; otherwise the
/// bytes in view cannot tell.
enum AnimatedImage {
    /// What the bytes in view say of an image's animation.
    enum Animation: Hashable, Sendable {
        /// One still image, or a type that has no animation.
        case still
        /// An animation of the format named ("WebP"): Android draws its first frame only.
        case animated(format: String)
        /// Perhaps an animation of the format named ("GIF"): the bytes in view cannot tell.
        case perhaps(format: String)

        /// The format's name when the image is surely animated.
        var animatedFormat: String? {
            if case .animated(let format) = self { return format }
            return nil
        }
    }

    /// What `bytes` (of type `mime`) say of an animation. `file` is what the bytes say as ISO
    /// base media (read once by the classifier), `nil` when they are not.
    static func animation(mime: String, bytes: [UInt8], file: ISOBaseMedia?) -> Animation {
        switch mime.lowercased() {
        case "image/gif":
            switch isAnimatedGIF(bytes) {
            case true?: .animated(format: "GIF")
            case false?: .still
            case nil: .perhaps(format: "GIF")
            }
        case "image/webp": isAnimatedWebP(bytes) ? .animated(format: "WebP") : .still
        case "image/png": isAnimatedPNG(bytes) ? .animated(format: "PNG (APNG)") : .still
        case "image/avif": file?.brands.contains("avis") == true ? .animated(format: "AVIF (an image sequence)") : .still
        default: .still
        }
    }

    /// The application identifiers of a loop extension (`21 FF 0B`, then the 11 bytes): Netscape's,
    /// which every encoder writes, and the older `ANIMEXTS1.0`.
    static let loopExtensions: [[UInt8]] = [Array("NETSCAPE2.0".utf8), Array("ANIMEXTS1.0".utf8)]

    /// Whether a GIF's blocks in view show an animation: `true` for a second image, or a loop
    /// extension when the view ends before the trailer; `false` for a trailer after at most one
    /// image (and for bytes that are no GIF); `nil` when the view ends, or meets a block no
    /// decoder knows, before either. The walk is `BodyCompleteness.walkGIF`'s.
    static func isAnimatedGIF(_ bytes: [UInt8]) -> Bool? {
        var reader = BlockReader(bytes, blockSize: Swift.max(1, bytes.count))
        var images = 0
        var loops = false
        let end = try? BodyCompleteness.walkGIF(&reader) { introducer, offset, reader in
            if introducer == 0x2C {
                images += 1
                return images < 2
            }
            // An application extension (label FF) of 11 bytes naming a loop.
            if try reader.byte(at: offset + 1) == 0xFF, try reader.byte(at: offset + 2) == 11,
                let name = try reader.bytes(at: offset + 3, count: 11), loopExtensions.contains(where: { name.elementsEqual($0) })
            {
                loops = true
            }
            return true
        }
        switch end {
        case .stopped?: return true
        case .trailer?, .notGIF?: return false
        case .bodyEnded?, .unknownBlock?, nil: return loops ? true : nil
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
