/// Firebase Cloud Messaging: a push is FCM's when `fcm_options` is present. The attachment is
/// `fcm_options.image`, with no type hint (FCM image URLs often have no suffix at all).
struct FirebaseSchema: VendorSchema {
    var vendor: Vendor { .firebase }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload["fcm_options"] else { return nil }
        guard let options = value.object else { return .malformed("fcm_options is not an object") }
        return .attachment(options["image"], at: "fcm_options.image")
    }
}
