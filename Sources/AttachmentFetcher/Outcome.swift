import Foundation

/// Why a payload's original content stands instead of an attachment. Each reason has a stable
/// `code` (the strings below never change), fit for logs, metrics and JSON.
public struct FallbackReason: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The stable code, such as `"http-status"`.
    public let code: String

    private init(_ code: String) { self.code = code }

    /// The payload is not a JSON object (or is larger than `Configuration.maximumPayloadBytes`),
    /// a vendor key has the wrong JSON type, or it is a request to Airship's push API rather than
    /// what a device receives.
    public static let invalidPayload = FallbackReason("invalid-payload")
    /// The payload names no attachment.
    public static let noAttachment = FallbackReason("no-attachment")
    /// An internal or silent vendor push (uninstall tracking, geofence sync, silent push):
    /// nothing to show, and no network request is made.
    public static let internalPush = FallbackReason("internal-push")
    /// The attachment URL is not an absolute http(s) URL, carries credentials (`user:pass@`)
    /// that the configuration does not allow, or a redirect led to another scheme.
    public static let invalidURL = FallbackReason("invalid-url")
    /// The origin answered with a status other than 2xx, or redirected too often.
    public static let httpStatus = FallbackReason("http-status")
    /// The connection failed: refused, reset, truncated, TLS, DNS. While the address policy is
    /// in force (`Configuration.addressPolicy`, private networks not allowed), the detail is
    /// ``uniformNetworkDetail`` (but for a name that does not resolve, or a server's
    /// certificate refused, whose reason is said), so that libcurl's messages do not describe
    /// the port (see "Untrusted payloads" for what still does).
    public static let network = FallbackReason("network")
    /// The detail of every `network` failure while the address policy is in force, but a name
    /// that does not resolve and a certificate refused (each said as such): libcurl's own
    /// message (refused, timed out, reset, an empty reply) would tell a closed port from a
    /// filtered or a serving one.
    public static let uniformNetworkDetail = "could not fetch"
    /// The payload's deadline passed (or its task was cancelled) before the attachment was ready;
    /// in an Android verdict, the picture took longer than the vendor's SDK waits for it.
    public static let deadline = FallbackReason("deadline")
    /// The body is larger than the judging platform accepts for its type (announced or
    /// received): iOS's limit per class, or the Android picture limit of the vendor's SDK.
    public static let tooLarge = FallbackReason("too-large")
    /// The bytes are not a type the judging platform shows (on iOS: HTML, WebP, HEIC, SVG,
    /// empty…; on Android, a picture that is no image).
    public static let unsupportedType = FallbackReason("unsupported-type")
    /// The file could not be written, closed or placed (linked, or copied) in the output
    /// directory, or no fetcher could be made for it (an output or cache directory that cannot
    /// be used).
    public static let storage = FallbackReason("storage")
    /// The address policy (`Configuration.addressPolicy`) refused every address the attachment's
    /// host, a redirect target's host or the proxy resolved to: loopback, private, link-local,
    /// reserved… Nothing was sent. The detail never gives the address; it says which was refused:
    /// the attachment's host, a redirect target (named by its URL, credentials shown as `***`),
    /// or the configured proxy (shown the same way).
    public static let addressRefused = FallbackReason("address-refused")
    /// The process or the system ran out of file descriptors (`EMFILE`, `ENFILE`) for a socket,
    /// a temporary file or a cache lock: a local shortage, never remembered against the origin.
    public static let resources = FallbackReason("resources")

    /// Every reason, in a stable order.
    public static let all: [FallbackReason] = [
        .invalidPayload, .noAttachment, .internalPush, .invalidURL, .httpStatus, .network, .deadline,
        .tooLarge, .unsupportedType, .storage, .addressRefused, .resources,
    ]

    public var description: String { code }

    public init(from decoder: any Decoder) throws {
        let code = try decoder.singleValueContainer().decode(String.self)
        guard let known = Self.all.first(where: { $0.code == code }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown reason \(code)"))
        }
        self = known
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }
}

/// The push vendor whose keys a payload uses.
public struct Vendor: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The vendor's stable name, such as `"braze"`.
    public let name: String

    /// A vendor called `name`.
    public init(_ name: String) { self.name = name }

    /// Braze (`ab.att.url`, `ab.att.type`).
    public static let braze = Vendor("braze")
    /// MoEngage (`moengage.media-attachment`, `moengage.media-type`).
    public static let moengage = Vendor("moengage")
    /// Airship (`com.urbanairship.media_attachment`: `url` or `urls`, several attachments).
    public static let airship = Vendor("airship")
    /// OneSignal (`att` or `os_data.att`: attachment id to URL, `?filename=` hint).
    public static let oneSignal = Vendor("onesignal")
    /// Firebase Cloud Messaging (`fcm_options.image`).
    public static let firebase = Vendor("firebase")
    /// CleverTap (`ct_mediaUrl`, `ct_mediaType`).
    public static let cleverTap = Vendor("clevertap")
    /// Iterable (`itbl.attachment-url`).
    public static let iterable = Vendor("iterable")
    /// Customer.io (`CIO.push.image`).
    public static let customerIO = Vendor("customerio")

    public var description: String { name }

    public init(from decoder: any Decoder) throws {
        name = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

extension Vendor {
    /// The name the vendor's SDK goes by in a warning ("Customer.io"); `nil` for a vendor this
    /// package does not know.
    var sdkName: String? { Self.sdkNames[self] }

    private static let sdkNames: [Vendor: String] = [
        .braze: "Braze", .moengage: "MoEngage", .airship: "Airship", .oneSignal: "OneSignal", .firebase: "Firebase",
        .cleverTap: "CleverTap", .iterable: "Iterable", .customerIO: "Customer.io",
    ]
}

/// A downloaded, validated attachment file.
public struct Attachment: Hashable, Sendable, Codable {
    /// The URL fetched: the payload's URL in its normalised form (percent-encoded where the
    /// payload had characters invalid in a URL, the host lower-cased and in IDNA form, no
    /// default port or fragment).
    public var url: String
    /// The URL as the payload spelled it, when that differs from `url`; `nil` otherwise.
    public var payloadURL: String?
    /// The absolute path of the file in the output directory, named by its real type.
    public var path: String
    /// The MIME type libmagic found in the bytes.
    public var mime: String
    /// The file's size in bytes.
    public var bytes: Int

    /// An attachment record.
    public init(url: String, payloadURL: String? = nil, path: String, mime: String, bytes: Int) {
        self.url = url
        self.payloadURL = payloadURL
        self.path = path
        self.mime = mime
        self.bytes = bytes
    }

    private enum CodingKeys: String, CodingKey {
        case url, path, mime, bytes
        case payloadURL = "payload_url"
    }
}

/// What became of one payload: either its content with local attachment files, or the original
/// payload, byte for byte, with the reason.
public struct Outcome: Sendable {
    /// Whether attachments were made.
    public enum Status: String, Sendable, Codable {
        /// At least one attachment file is ready.
        case attached
        /// The original content stands; `reason` says why.
        case original
    }

    /// `attached` or `original`.
    public var status: Status
    /// Set exactly when `status` is `original`.
    public var reason: FallbackReason?
    /// A human explanation: HTTP status, libcurl's message, the detected MIME type…
    public var detail: String?
    /// The vendor whose keys the payload uses, if recognised.
    public var vendor: Vendor?
    /// The attachment files, empty when `status` is `original`.
    public var attachments: [Attachment]
    /// Things worth knowing that did not stop the attachment (a wrong type hint, no
    /// `mutable-content`).
    public var warnings: [String]
    /// From the moment the payload was handed in to the moment this outcome was made.
    public var elapsed: Duration
    /// The payload exactly as it was handed in, never re-serialised.
    public var payload: Data
    /// Every attachment of the payload that did not become a file, with its own reason, in the
    /// payload's order (when none did, the first of them is also the outcome's `reason`).
    public var failures: [AttachmentFailure]
    /// Each platform's own verdict on the payload's attachments, in the order of
    /// `Configuration.platforms`; empty unless that names platforms (a preflight).
    public var verdicts: [PlatformVerdict]
    /// What the push shows and does, read whenever its vendor was recognised, or, with no
    /// vendor's keys, from a plain APNs payload's `aps`; `nil` for anything else.
    /// Its `platform` is the payload's shape (an FCM HTTP v1 message is Android's).
    public var notification: NotificationContent?
    /// What the same push shows on the other judged platforms, when one payload addresses
    /// several: an FCM HTTP v1 message judged on iOS (`Configuration.platforms`) gets its
    /// iPhone notification here, read from the APNs payload FCM makes of it. Empty otherwise.
    public var otherPlatformNotifications: [NotificationContent]

    /// What the push shows on `platform`: `notification` when that is the payload's shape (and
    /// on ``Platform/linux``, which shows the payload's own), else the one among
    /// `otherPlatformNotifications`; `nil` when the payload does not say (a device payload
    /// judged by another platform's rules).
    public func notification(on platform: Platform) -> NotificationContent? {
        Self.notification(on: platform, own: notification, others: otherPlatformNotifications)
    }

    /// `notification(on:)` of a push whose own notification is `own`, and `others` those of
    /// the other platforms judged (an outcome's, or one being put together).
    static func notification(
        on platform: Platform, own: NotificationContent?, others: [NotificationContent]
    ) -> NotificationContent? {
        if platform == .linux { return own }
        if let own, own.platform == platform { return own }
        return others.first { $0.platform == platform }
    }

    /// Every notification the outcome says the push shows: `notification`, then
    /// `otherPlatformNotifications`.
    public var notifications: [NotificationContent] {
        [notification].compactMap { $0 } + otherPlatformNotifications
    }

    /// An outcome; prefer reading the ones `PushAttachmentFetcher.process(_:)` returns.
    public init(
        status: Status, reason: FallbackReason?, detail: String?, vendor: Vendor?, attachments: [Attachment],
        warnings: [String], elapsed: Duration, payload: Data, notification: NotificationContent? = nil,
        otherPlatformNotifications: [NotificationContent] = [], failures: [AttachmentFailure] = [],
        verdicts: [PlatformVerdict] = []
    ) {
        self.otherPlatformNotifications = otherPlatformNotifications
        self.failures = failures
        self.verdicts = verdicts
        self.status = status
        self.reason = reason
        self.detail = detail
        self.vendor = vendor
        self.attachments = attachments
        self.warnings = warnings
        self.elapsed = elapsed
        self.payload = payload
        self.notification = notification
    }

    /// `elapsed` in milliseconds, as a number with microsecond precision: whole microseconds
    /// divided once, so that it prints as `1903.43`, never `1903.4299999999998`.
    public var elapsedMilliseconds: Double {
        let (seconds, attoseconds) = elapsed.components
        let (microseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return Double(seconds) * 1_000 }
        return Double(microseconds.addingReportingOverflow(attoseconds / 1_000_000_000_000).partialValue) / 1_000
    }
}

extension Outcome: Encodable {
    private enum CodingKeys: String, CodingKey {
        case status, reason, detail, vendor, attachments, failures, warnings, verdicts, notification
        case otherPlatformNotifications = "other_platform_notifications"
        case elapsedMilliseconds = "elapsed_ms"
    }

    /// Encodes the CLI's JSON shape: `status`, `reason` (null when attached), `detail`, `vendor`,
    /// `attachments` (`url`, `path`, `mime`, `bytes`, and `payload_url` when the payload spelled
    /// the URL otherwise), `failures` (`url`, `reason`, `detail`, and a `file` only another
    /// platform shows), `verdicts` when platforms are judged, `warnings`, `elapsed_ms`,
    /// `notification` (`NotificationContent`'s object, or null), and `other_platform_notifications`
    /// (an array of them) when there are any. The payload is not part of it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try container.encode(detail, forKey: .detail)
        try container.encode(vendor, forKey: .vendor)
        try container.encode(attachments, forKey: .attachments)
        try container.encode(failures, forKey: .failures)
        try container.encode(warnings, forKey: .warnings)
        if !verdicts.isEmpty { try container.encode(verdicts, forKey: .verdicts) }
        try container.encode(elapsedMilliseconds, forKey: .elapsedMilliseconds)
        try container.encode(notification, forKey: .notification)
        if !otherPlatformNotifications.isEmpty {
            try container.encode(otherPlatformNotifications, forKey: .otherPlatformNotifications)
        }
    }
}

/// An attachment a payload asked for that did not become a file, and why.
public struct AttachmentFailure: Hashable, Sendable, Codable {
    /// The URL in its normalised form (as the payload spelled it, when it could not be read).
    public var url: String
    /// The URL as the payload spelled it, when that differs from `url`.
    public var payloadURL: String?
    /// Why it did not become a file.
    public var reason: FallbackReason
    /// A human explanation of `reason`.
    public var detail: String
    /// The file made all the same, when another platform a preflight judges shows it though the
    /// payload's own platform does not (`Configuration.platforms`): it stays, and that
    /// platform's verdict names it. `nil` otherwise.
    public var file: Attachment?

    /// A failed attachment.
    public init(url: String, payloadURL: String? = nil, reason: FallbackReason, detail: String, file: Attachment? = nil) {
        self.url = url
        self.payloadURL = payloadURL
        self.reason = reason
        self.detail = detail
        self.file = file
    }

    private enum CodingKeys: String, CodingKey {
        case url, reason, detail, file
        case payloadURL = "payload_url"
    }
}

/// One platform's verdict on a payload's attachments: whether that platform would show one, and
/// if not, why (`Configuration.platforms` asks for them).
public struct PlatformVerdict: Hashable, Sendable, Codable {
    /// The platform judged.
    public var platform: Platform
    /// `attached` when the platform shows at least one of the payload's files.
    public var status: Outcome.Status
    /// Why not, when `status` is `original`.
    public var reason: FallbackReason?
    /// A human explanation of `reason`.
    public var detail: String?
    /// The file the platform shows, when `status` is `attached`: the first of the payload's
    /// attachments it accepts (an FCM HTTP v1 message names one for Android and one for iPhones).
    public var path: String?

    /// A verdict.
    public init(platform: Platform, status: Outcome.Status, reason: FallbackReason?, detail: String?, path: String? = nil) {
        self.platform = platform
        self.status = status
        self.reason = reason
        self.detail = detail
        self.path = path
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(platform, forKey: .platform)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try container.encode(detail, forKey: .detail)
        try container.encode(path, forKey: .path)
    }
}
