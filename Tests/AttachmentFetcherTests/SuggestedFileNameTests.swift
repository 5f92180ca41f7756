@testable import AttachmentFetcher
import Foundation
import Testing

/// Firebase's, Iterable's and Customer.io's iOS extensions name an attachment after the file name
/// URLSession suggests for the response (`FIRMessagingExtensionHelper.m`,
/// `ITBNotificationServiceExtension`, `HttpRequestRunner.downloadFile`), and iOS attaches no file
/// without a type in its name.
@Suite("Firebase, Iterable and Customer.io iOS: the suggested file name decides whether iPhones attach", .timeLimit(.minutes(2)))
struct SuggestedFileNameTests {
    @Test(
        "A suggested name surely without an image extension is told apart from one that has some",
        arguments: [
            ("https://cdn.example/banner", "Content-Type: application/octet-stream\r\n", true),
            ("https://cdn.example/banner", "", true),
            ("https://cdn.example/", "Content-Type: text/plain\r\n", true),
            ("https://cdn.example/banner", "Content-Type: image/jpeg\r\n", false),
            ("https://cdn.example/banner.jpg", "Content-Type: application/octet-stream\r\n", false),
            ("https://cdn.example/banner", "Content-Disposition: attachment; filename=\"banner.txt\"\r\nContent-Type: application/octet-stream\r\n", false),
            ("https://cdn.example/banner.jpg", "Content-Disposition: inline; filename=\"banner\"\r\nContent-Type: application/octet-stream\r\n", true),
            ("https://cdn.example/banner", "Content-Disposition: inline; filename*=UTF-8''caf%C3%A9.png\r\n", false),
            ("https://cdn.example/img?id=7.png", "Content-Type: binary/octet-stream\r\n", true),
            ("https://cdn.example/clip", "Content-Type: video/mp4\r\n", false),
            ("https://cdn.example/tone", "Content-Type: audio/mpeg\r\n", false),
            // The extension appended names a type iOS refuses, whatever the bytes.
            ("https://cdn.example/banner", "Content-Type: image/webp\r\n", true),
            ("https://cdn.example/banner", "Content-Type: Image/HEIC; q=1\r\n", true),
            ("https://cdn.example/clip", "Content-Type: video/quicktime\r\n", true),
            ("https://cdn.example/banner.webp", "Content-Type: image/webp\r\n", false),
        ])
    func lacksAcceptedExtension(url: String, headers: String, lacks: Bool) {
        #expect(SuggestedFileName.lacksAcceptedExtension(url: url, headers: HTTPHeader.parse(headers)) == lacks)
    }

    @Test(
        "Why a suggested name has no extension iOS attaches: where the name came from, and what its Content-Type adds",
        arguments: [
            ("https://cdn.example/banner", "Content-Type: application/octet-stream\r\n", false, SuggestedFileName.Unsuffixed.ContentType.notMedia),
            ("https://cdn.example/banner", "", false, .missing),
            ("https://cdn.example/banner", "Content-Type: image/webp\r\n", false, .refusedOnIOS),
            ("https://cdn.example/banner.jpg", "Content-Disposition: inline; filename=\"banner\"\r\nContent-Type: application/octet-stream\r\n", true, .notMedia),
            ("https://cdn.example/banner.jpg", "Content-Disposition: attachment; filename=banner\r\n", true, .missing),
        ])
    func unsuffixedReason(url: String, headers: String, fromContentDisposition: Bool, contentType: SuggestedFileName.Unsuffixed.ContentType) {
        let reason = SuggestedFileName.unsuffixed(url: url, headers: HTTPHeader.parse(headers))
        #expect(reason == SuggestedFileName.Unsuffixed(fromContentDisposition: fromContentDisposition, contentType: contentType))
    }

    @Test("An entry keeps why the suggested name has no extension, and reads back as written; an entry that kept the flag alone reads without a reason")
    func metadataReason() {
        var metadata = CacheEntryMetadata(
            size: 10, modified: 1, freshUntil: Date(timeIntervalSince1970: 1_800_000_000), etag: nil, lastModified: nil)
        metadata.unsuffixedName = true
        #expect(metadata.encoded().first == 2)
        for fromContentDisposition in [false, true] {
            for contentType in [SuggestedFileName.Unsuffixed.ContentType.missing, .notMedia, .refusedOnIOS] {
                metadata.unsuffixedReason = SuggestedFileName.Unsuffixed(fromContentDisposition: fromContentDisposition, contentType: contentType)
                #expect(metadata.encoded().first == 3)
                #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
                metadata.airshipUntypedMIME.toggle()
                #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
            }
        }
        // The flag alone, as written before the reason was kept.
        var flagOnly = metadata
        flagOnly.unsuffixedReason = nil
        flagOnly.airshipUntypedMIME = false
        #expect(CacheEntryMetadata.decode(flagOnly.encoded())?.unsuffixedName == true)
        #expect(CacheEntryMetadata.decode(flagOnly.encoded())?.unsuffixedReason == nil)
        // A reason without the flag is not kept.
        var reasonOnly = metadata
        reasonOnly.unsuffixedName = false
        reasonOnly.airshipUntypedMIME = false
        #expect(reasonOnly.encoded().first == 2)
        #expect(CacheEntryMetadata.decode(reasonOnly.encoded())?.unsuffixedReason == nil)
    }

    @Test("A Content-Disposition file name loses its path at every slash, even one a combining mark follows")
    func fileNameWithoutPath() {
        #expect(SuggestedFileName.filename(in: "attachment; filename=\"a/\u{301}b.png\"") == "\u{301}b.png")
        #expect(SuggestedFileName.filename(in: "attachment; filename=\"..\\\u{301}x\\c.jpg\"") == "c.jpg")
        #expect(SuggestedFileName.filename(in: "attachment; filename=\"/\u{301}\"") == "\u{301}")
    }

    @Test("An entry keeps the flag, and reads back as written")
    func metadataFlag() {
        var metadata = CacheEntryMetadata(
            size: 10, modified: 1, freshUntil: Date(timeIntervalSince1970: 1_800_000_000),
            etag: nil, lastModified: nil)
        metadata.unsuffixedName = true
        #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
        #expect(CacheEntryMetadata.decode(metadata.encoded())?.unsuffixedName == true)
        metadata.oneSignalUntypedMIME = true
        #expect(CacheEntryMetadata.decode(metadata.encoded())?.oneSignalUntypedMIME == true)
        metadata.cleverTapUntypedMIME = true
        #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
        #expect(CacheEntryMetadata.decode(metadata.encoded())?.cleverTapUntypedMIME == true)
        metadata.cutAtOrigin = true
        #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
        // The origin's lifetime, 0 (no-cache) included, beside a download time.
        for lifetime in [0, 3600] {
            metadata.lifetime = lifetime
            metadata.downloadTime = .seconds(2)
            #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
        }
    }

    @Test("Airship's flag (version 3 of the attribute, with a second flags byte) reads back as written, beside every other; an entry without it stays version 2; a second flags byte of zero is damage")
    func metadataSecondFlagsByte() {
        var metadata = CacheEntryMetadata(
            size: 10, modified: 1, freshUntil: Date(timeIntervalSince1970: 1_800_000_000), etag: nil, lastModified: nil)
        #expect(metadata.encoded().first == 2)
        metadata.airshipUntypedMIME = true
        #expect(metadata.encoded().first == 3)
        #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
        #expect(CacheEntryMetadata.decode(metadata.encoded())?.airshipUntypedMIME == true)
        var damaged = metadata.encoded()
        damaged[30] = 0  // version, three numbers, two empty validators, the first flags byte (0)
        #expect(CacheEntryMetadata.decode(damaged) == nil)
        #expect(CacheEntryMetadata.decode(Array(metadata.encoded().dropLast())) == nil)
        metadata.cutAtOrigin = true
        metadata.unsuffixedName = true
        metadata.downloadTime = .seconds(2)
        metadata.lifetime = 60
        metadata.etag = "\"v1\""
        #expect(CacheEntryMetadata.decode(metadata.encoded()) == metadata)
        metadata.airshipUntypedMIME = false
        #expect(metadata.encoded().first == 2 && CacheEntryMetadata.decode(metadata.encoded()) == metadata)
    }

    @Test(
        "Airship's extension types a file by the URL's extension, else by a hint from the MIME type or its table of first bytes: an extension-less URL served as application/octet-stream attaches an old-style JPEG (FF D8 FF E0) but not one with its Exif segment first, as phones write it; served as image/jpeg it does; a last path component ending in jpg without a dot never does; the same from the cache",
        arguments: [false, true])
    func airshipVerdict(cached: Bool) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, fixture) in [("exif", "photo-exif-first.jpg"), ("jfif", "photo.jpg"), ("photojpg", "photo.jpg")] {
            try FileManager.default.copyItem(atPath: Fixture.mediaDirectory + "/" + fixture, toPath: directory + "/" + name)
        }
        try await Fixture.with(cached: cached, filesDirectory: directory, configure: { $0.platforms = [.ios] }) { fixture in
            func airship(_ path: String) -> Data {
                Data(#"{"aps":{"alert":"x","mutable-content":1},"com.urbanairship.media_attachment":{"url":"\#(fixture.server.url(path))"}}"#.utf8)
            }
            for round in 0..<2 {
                let exif = await fixture.fetcher.process(airship("/files/exif"))
                #expect(exif.vendor == .airship)
                #expect(exif.reason == .unsupportedType && exif.detail?.contains("Airship's iOS extension names the file") == true, "round \(round): \(exif.detail ?? "")")
                let jfif = await fixture.fetcher.process(airship("/files/jfif"))
                #expect(jfif.status == .attached, "round \(round): \(jfif.detail ?? "")")
                let typed = await fixture.fetcher.process(airship("/files/exif?content_type=image/jpeg"))
                #expect(typed.status == .attached, "round \(round): \(typed.detail ?? "")")
                let undotted = await fixture.fetcher.process(airship("/files/photojpg?content_type=image/jpeg"))
                #expect(undotted.reason == .unsupportedType, "round \(round): \(undotted.detail ?? "")")
                // Braze names the file itself (ab.att.type): the same Exif-first JPEG attaches.
                let braze = await fixture.fetcher.process(Payloads.braze(url: fixture.server.url("/files/exif"), type: "jpg"))
                #expect(braze.status == .attached, "round \(round): \(braze.detail ?? "")")
            }
            // One request per URL: /files/exif as application/octet-stream and as image/jpeg.
            if cached { #expect(fixture.server.stats().requestsPerPath["/files/exif"] == 2, "\(fixture.server.stats().requestsPerPath)") }
        }
    }

    /// A push naming `url` whose vendor's iOS extension names the file after URLSession's
    /// suggested name: an FCM message (Firebase's helper) or a Customer.io push.
    static func suggestedNamePush(_ vendor: Vendor, url: String) -> Data {
        switch vendor {
        case .customerIO:
            Data(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"CIO":{"push":{"image":"\#(url)"}},"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#.utf8)
        default:
            Data(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"fcm_options":{"image":"\#(url)"},"gcm.message_id":"1"}"#.utf8)
        }
    }

    @Test(
        "Firebase's helper and Customer.io's extension save the file under the suggested name: an extension-less image URL served as application/octet-stream attaches nothing on iPhones, as image/jpeg or named .jpg it does; the same from the cache",
        arguments: [Vendor.firebase, .customerIO], [false, true])
    func suggestedNameVerdict(vendor: Vendor, cached: Bool) async throws {
        try await Fixture.with(cached: cached, configure: { $0.platforms = [.ios] }) { fixture in
            func push(_ path: String) -> Data { Self.suggestedNamePush(vendor, url: fixture.server.url(path)) }
            let sdk = vendor == .customerIO ? "Customer.io" : "Firebase"
            let opaque = "/media/banner?media=jpg&bytes=3000&content_type=application/octet-stream"
            for round in 0..<2 {
                let refused = await fixture.fetcher.process(push(opaque))
                #expect(refused.vendor == vendor)
                #expect(refused.status == .original && refused.reason == .unsupportedType, "round \(round): \(refused.detail ?? "")")
                // Why, and what to serve instead; the same from the cache.
                #expect(
                    refused.detail
                        == "\(sdk)'s iOS extension names the file after the name URLSession suggests for the response: the URL's last path component, without an extension (there is no Content-Disposition filename), and a Content-Type that is not an image's, a video's or a sound's adds none; iOS takes the type from the name, whatever the bytes: serve it as image/jpeg, or under a name ending in .jpg",
                    "round \(round)")
                let typed = await fixture.fetcher.process(push("/media/typed?media=jpg&bytes=3000&content_type=image/jpeg"))
                #expect(typed.status == .attached, "round \(round): \(typed.detail ?? "")")
                let named = await fixture.fetcher.process(push("/media/named.jpg?bytes=3000&content_type=application/octet-stream"))
                #expect(named.status == .attached, "round \(round): \(named.detail ?? "")")
                // A JPEG served as image/webp gets a name ending in .webp, which iOS refuses.
                let labelled = await fixture.fetcher.process(push("/media/labelled?media=jpg&bytes=3000&content_type=image/webp"))
                #expect(labelled.reason == .unsupportedType && labelled.detail?.contains("with the extension of its Content-Type, a type iOS refuses (such as image/webp)") == true, "round \(round): \(labelled.detail ?? "")")
                // Other vendors name the file themselves: a Braze payload for the same URL attaches.
                let braze = await fixture.fetcher.process(Payloads.braze(url: fixture.server.url(opaque), type: "jpg"))
                #expect(braze.status == .attached, "round \(round): \(braze.detail ?? "")")
            }
            if cached { #expect(fixture.server.stats().requestsPerPath["/media/banner"] == 1 && fixture.server.stats().requestsPerPath["/media/labelled"] == 1) }
        }
    }

    @Test("Iterable's iOS extension names the file the same way (UUID + suggestedFilename): an opaque URL served as application/octet-stream attaches nothing; as video/mp4 the suggested name has an extension")
    func iterableVerdict() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios] }) { fixture in
            func iterable(_ path: String) -> Data {
                Data(#"{"aps":{"alert":"x","mutable-content":1},"itbl":{"messageId":"m","templateId":1,"attachment-url":"\#(fixture.server.url(path))"}}"#.utf8)
            }
            let refused = await fixture.fetcher.process(iterable("/media/banner?media=jpg&bytes=3000&content_type=application/octet-stream"))
            #expect(refused.vendor == .iterable)
            #expect(refused.status == .original && refused.reason == .unsupportedType, "\(refused.detail ?? "")")
            #expect(refused.detail?.contains("Iterable's iOS extension names the file") == true, "\(refused.detail ?? "")")
            let video = await fixture.fetcher.process(iterable("/media/clip?media=mp4&bytes=3000&content_type=video/mp4"))
            #expect(video.reason != .unsupportedType || video.detail?.contains("names the file") != true, "\(video.detail ?? "")")
        }
    }
}

/// OneSignal's, Braze's and CleverTap's iOS extensions name the attachment themselves
/// (`OneSignalAttachmentHandler.getSupportedFileExtensionFromURL`; Braze's `ab.att.type`, "a suffix
/// for the file you save"; `CTNotificationServiceExtension.fileExtensionForMediaType`), and iOS
/// takes its type from that name.
@Suite("OneSignal, Braze and CleverTap iOS: the name the extension gives the file decides whether iPhones attach", .timeLimit(.minutes(2)))
struct VendorFileNamingTests {
    @Test("Airship's table of first bytes, on real files: JFIF JPEGs, PNG, GIF, AIFF, WAV, AVI, MP3 with ID3, MPEG-4 of its brands and MPEG are typed; an Exif-first JPEG, MPEG audio without a tag, WebP and an M4V brand are not")
    func airshipHeaderTable() throws {
        for typed in ["photo.jpg", "photo-exif-6.jpg", "logo.png", "animated.gif", "tone.aiff", "tone.wav", "clip.avi", "tone-cover-art.mp3", "clip.mp4", "tone.m4a", "clip.mpg"] {
            #expect(VendorFileNaming.airshipHeaderTypes(try ISOBaseMediaTests.prefix(typed)), "\(typed)")
        }
        for untyped in ["photo-exif-first.jpg", "tone-layer2.mp3", "photo.webp", "clip.m4v"] {
            #expect(!VendorFileNaming.airshipHeaderTypes(try ISOBaseMediaTests.prefix(untyped)), "\(untyped)")
        }
        #expect(!VendorFileNaming.airshipHeaderTypes([0xFF, 0xD8, 0xFF]))
    }

    @Test(
        "Airship's extension: a last path component ending in one of its extensions is typed by the name's own extension, any other by a hint",
        arguments: [
            ("https://cdn.example/a/photo.jpg", false, false, true), ("https://cdn.example/a/PHOTO.JPEG?x=1", false, false, true),
            ("https://cdn.example/a/photojpg", true, true, false), ("https://cdn.example/a/x.xjpg", true, true, false),
            ("https://cdn.example/a/banner", false, false, false), ("https://cdn.example/a/banner", true, false, true),
            ("https://cdn.example/a/banner", false, true, true), ("https://cdn.example/a/banner.webp", false, true, true),
            ("https://cdn.example/a/photo%2Ejpg", false, false, true),
        ])
    func airshipTyping(url: String, mimeHints: Bool, headerTypes: Bool, typed: Bool) {
        #expect(VendorFileNaming.airshipTypesFile(url: url, mimeHints: mimeHints, headerTypes: headerTypes) == typed)
    }

    @Test(
        "OneSignal's extension: the filename parameter's, the MIME type's, the URL's, then any query value's extension, each only if OneSignal lists it",
        arguments: [
            ("https://cdn.example/c528c899_720_960?filename=f.png", nil, "png"),
            ("https://cdn.example/banner", "image/jpeg", "jpeg"),
            ("https://cdn.example/banner", "IMAGE/JPEG", "jpeg"),
            ("https://cdn.example/banner", "application/octet-stream", nil),
            ("https://cdn.example/banner.jpg", "application/octet-stream", "jpg"),
            ("https://cdn.example/banner.JPG", "application/octet-stream", nil),
            ("https://cdn.example/banner.webp", "image/webp", nil),
            ("https://cdn.example/banner.jpg", "image/webp", "jpg"),
            ("https://cdn.example/banner?v=2&name=a.gif", "binary/octet-stream", "gif"),
            ("https://cdn.example/tone", "audio/mp4", nil),
            ("https://cdn.example/tone.m4a", "audio/mp4", "m4a"),
            ("https://cdn.example/clip?filename=clip.mov", "video/mp4", "mp4"),
        ] as [(String, String?, String?)])
    func oneSignalExtension(url: String, mime: String?, expected: String?) {
        #expect(VendorFileNaming.oneSignalExtension(url: url, mimeExtension: VendorFileNaming.oneSignalMIMEExtension(mime)) == expected)
    }

    @Test("Braze's type names the file: a suffix iOS attaches (any case) passes, another (webp, heic, a class name) does not")
    func brazeType() {
        for type in ["jpg", "JPEG", "png", "gif", "mp3", "m4a", "wav", "aiff", "mp4", "m4v", "mpeg", "avi"] {
            #expect(VendorFileNaming.brazeRefusal(type: type) == nil, "\(type)")
        }
        for type in ["webp", "heic", "svg", "image", "mov", "jpg?"] {
            #expect(VendorFileNaming.brazeRefusal(type: type)?.reason == .unsupportedType, "\(type)")
        }
    }

    @Test(
        "An extension-less URL served as application/octet-stream: iPhones with OneSignal attach nothing; with ?filename=x.jpg, as image/jpeg or named .jpg they do; the same from the cache",
        arguments: [false, true])
    func oneSignalVerdict(cached: Bool) async throws {
        try await Fixture.with(cached: cached, configure: { $0.platforms = [.ios] }) { fixture in
            func oneSignal(_ path: String) -> Data {
                Data(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"os_data":{"i":"n","att":{"id1":"\#(fixture.server.url(path))"}}}"#.utf8)
            }
            let opaque = "/media/banner?media=jpg&bytes=3000&content_type=application/octet-stream"
            for round in 0..<2 {
                let refused = await fixture.fetcher.process(oneSignal(opaque))
                #expect(refused.vendor == .oneSignal)
                #expect(refused.status == .original && refused.reason == .unsupportedType, "round \(round): \(refused.detail ?? "")")
                #expect(refused.detail?.contains("OneSignal's iOS extension") == true, "\(refused.detail ?? "")")
                for attached in [opaque + "&filename=b.jpg", "/media/typed?media=jpg&bytes=3000&content_type=image/jpeg",
                                 "/media/named.jpg?bytes=3000&content_type=application/octet-stream"] {
                    let outcome = await fixture.fetcher.process(oneSignal(attached))
                    #expect(outcome.status == .attached, "round \(round) \(attached): \(outcome.detail ?? "")")
                }
                // Braze names it by its type: attached whatever the Content-Type.
                #expect(await fixture.fetcher.process(Payloads.braze(url: fixture.server.url(opaque), type: "jpg")).status == .attached)
            }
            if cached { #expect(fixture.server.stats().requestsPerPath["/media/banner"] == 2) }
        }
    }

    @Test("Braze with a type iOS does not attach (webp on a JPEG): iPhones attach nothing, Android is not concerned; a type in capitals is a suffix all the same")
    func brazeVerdict() async throws {
        try await Fixture.with(configure: { $0.platforms = [.ios] }) { fixture in
            let refused = await fixture.fetch("/media/p.jpg?bytes=3000", type: "webp")
            #expect(refused.status == .original && refused.reason == .unsupportedType, "\(refused.detail ?? "")")
            #expect(refused.detail?.contains("ab.att.type") == true, "\(refused.detail ?? "")")
            #expect(await fixture.fetch("/media/q.jpg?bytes=3000", type: "JPG").status == .attached)
            let mismatched = await fixture.fetch("/media/r.jpg?bytes=3000", type: "png")
            #expect(mismatched.status == .attached && mismatched.warnings.contains { $0.contains("says type 'png'") })
        }
    }

    @Test(
        "CleverTap's extension: ct_mediaType image, video, audio (exactly) give .jpg, .mp4, .mp3; any other type the response's MIME type image/jpeg, image/png or image/gif; else a name ending in a bare dot",
        arguments: [
            ("image", "application/octet-stream", "jpg"),
            ("video", nil, "mp4"),
            ("audio", "text/html", "mp3"),
            ("gif", "image/gif", "gif"),
            ("gif", "image/jpeg", "jpeg"),
            ("gif", "application/octet-stream", nil),
            ("gif", "binary/octet-stream", nil),
            ("gif", "image/webp", nil),
            ("gif", nil, nil),
            ("Image", "IMAGE/PNG; q=1", "png"),
            ("Image", "image/jpg", nil),
            ("photo", "video/mp4", nil),
            (nil, "image/gif", "gif"),
        ] as [(String?, String?, String?)])
    func cleverTapExtension(mediaType: String?, contentType: String?, expected: String?) {
        let mimeExtension = VendorFileNaming.cleverTapMIMEExtension(contentType)
        #expect(VendorFileNaming.cleverTapExtension(mediaType: mediaType, mimeExtension: mimeExtension) == expected)
    }

    @Test(
        "CleverTap with ct_mediaType gif on a GIF served as application/octet-stream: iPhones attach nothing; as image/gif, or with ct_mediaType image, they do; the same from the cache",
        arguments: [false, true])
    func cleverTapVerdict(cached: Bool) async throws {
        try await Fixture.with(cached: cached, configure: { $0.platforms = [.ios] }) { fixture in
            func cleverTap(_ path: String, _ type: String) -> Data {
                Data(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"wzrk_pn":true,"ct_mediaUrl":"\#(fixture.server.url(path))","ct_mediaType":"\#(type)"}"#.utf8)
            }
            let opaque = "/media/anim?media=gif&bytes=3000&content_type=application/octet-stream"
            for round in 0..<2 {
                let refused = await fixture.fetcher.process(cleverTap(opaque, "gif"))
                #expect(refused.vendor == .cleverTap)
                #expect(refused.status == .original && refused.reason == .unsupportedType, "round \(round): \(refused.detail ?? "")")
                #expect(refused.detail?.contains("CleverTap's iOS extension") == true, "\(refused.detail ?? "")")
                let image = await fixture.fetcher.process(cleverTap(opaque, "image"))
                #expect(image.status == .attached, "round \(round): \(image.detail ?? "")")
                let typed = await fixture.fetcher.process(cleverTap("/media/typed?media=gif&bytes=3000&content_type=image/gif", "gif"))
                #expect(typed.status == .attached, "round \(round): \(typed.detail ?? "")")
            }
            if cached { #expect(fixture.server.stats().requestsPerPath["/media/anim"] == 1) }
        }
    }
}
