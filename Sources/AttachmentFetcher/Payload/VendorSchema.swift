/// What a payload's type hint claims about its attachment; used only for warnings, never to
/// name or place a file.
enum ClaimedType: Hashable, Sendable {
    /// A file suffix, as Braze sends it ("jpg").
    case fileExtension(String)
    /// A type class, as MoEngage sends it ("image").
    case kind(String)
}

/// One attachment a payload asks for.
struct RequestedAttachment: Hashable, Sendable {
    /// The URL exactly as the payload gives it.
    var url: String
    /// The payload's type hint, if any.
    var claimedType: ClaimedType?
}

/// What a vendor's keys say a payload is.
enum PayloadRecognition: Hashable, Sendable {
    /// An internal or silent push that must cost no network request; the text says which.
    case internalPush(String)
    /// A push with attachments to fetch.
    case attachments([RequestedAttachment])
    /// A push of this vendor with nothing to attach.
    case noAttachment
    /// A vendor key holds a value of the wrong JSON type; the text says which.
    case malformed(String)
}

extension PayloadRecognition {
    /// The one attachment whose URL is `value`, the payload's `path`: none when the key is absent
    /// or empty, malformed when it is not a string.
    static func attachment(_ value: JSONValue?, at path: String, claimedType: ClaimedType? = nil) -> Self {
        guard let value else { return .noAttachment }
        guard let url = value.string else { return .malformed("\(path) is not a string") }
        return url.isEmpty ? .noAttachment : .attachments([RequestedAttachment(url: url, claimedType: claimedType)])
    }
}

/// One push vendor's payload keys. Each vendor is one small file; adding a vendor is adding a
/// type and listing it in `VendorSchemas.all`.
protocol VendorSchema: Sendable {
    /// Which vendor this is.
    var vendor: Vendor { get }
    /// What the payload is, or `nil` when it is not this vendor's.
    func recognize(_ payload: JSONObject) -> PayloadRecognition?
}

/// The vendors recognised, in the order they are tried.
enum VendorSchemas {
    /// Every schema.
    static let all: [any VendorSchema] = [
        BrazeSchema(), MoEngageSchema(), AirshipSchema(), OneSignalSchema(), FirebaseSchema(), CleverTapSchema(),
        IterableSchema(), CustomerIOSchema(),
    ]

    /// The first vendor that recognises `payload`, with what it recognised.
    static func recognize(_ payload: JSONObject) -> (Vendor, PayloadRecognition)? {
        for schema in all {
            if let recognition = schema.recognize(payload) { return (schema.vendor, recognition) }
        }
        return nil
    }
}
