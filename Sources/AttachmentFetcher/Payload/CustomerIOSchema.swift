/// Customer.io: a push is Customer.io's when `CIO` is present. The attachment is
/// `CIO.push.image`, with no type hint. The SDK's extension handles a push only when it carries
/// both `CIO-Delivery-ID` and `CIO-Delivery-Token` (`isPushSentFromCio`); without them iOS shows
/// the alert as it came, with nothing attached.
struct CustomerIOSchema: VendorSchema {
    var vendor: Vendor { .customerIO }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload["CIO"] else { return nil }
        guard let cio = value.object else { return .malformed("CIO is not an object") }
        guard let push = cio["push"] else { return .noAttachment }
        guard let pushObject = push.object else { return .malformed("CIO.push is not an object") }
        let recognition = PayloadRecognition.attachment(pushObject["image"], at: "CIO.push.image")
        if case .attachments = recognition, !ContentReader.hasCustomerIODeliveryKeys(payload) {
            return .notAttached("Customer.io's SDK attaches nothing to a push without both CIO-Delivery-ID and CIO-Delivery-Token")
        }
        return recognition
    }
}
