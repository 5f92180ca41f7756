/// Customer.io: a push is Customer.io's when `CIO` is present. The attachment is
/// `CIO.push.image`, with no type hint.
struct CustomerIOSchema: VendorSchema {
    var vendor: Vendor { .customerIO }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload["CIO"] else { return nil }
        guard let cio = value.object else { return .malformed("CIO is not an object") }
        guard let push = cio["push"] else { return .noAttachment }
        guard let pushObject = push.object else { return .malformed("CIO.push is not an object") }
        return .attachment(pushObject["image"], at: "CIO.push.image")
    }
}
