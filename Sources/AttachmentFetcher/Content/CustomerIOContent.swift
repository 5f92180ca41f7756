/// Customer.io. iOS: the APNs layer; tap target `CIO.push.link` (only with both delivery keys,
/// as the SDK handles the tap); delivery id `CIO-Delivery-ID`; extras are the top-level keys but
/// `aps`, `CIO` and the delivery keys.
///
/// Android: title `title`, body `body`, tap target `link` (not blank), picture `image`, each key
/// winning when it is there, empty or not (the handler falls back to FCM's notification, which
/// only a notification message has); always the default sound. Its picture has no size or time
/// limit of its own; a notification message's is FCM's (`NotificationContent.androidPictureDrawer`). Shown only with both `CIO-Delivery-ID` and
/// `CIO-Delivery-Token` there. An FCM notification message (`gcm.n.e` "1") is read as FCM's SDK
/// draws it in the background (the app's usual state for a push), with a warning: Customer.io's
/// handler shows it only in the foreground. On iOS the alert shows without them, but the SDK's
/// extension attaches nothing (see `CustomerIOSchema`).
///
/// Android's extras are every data key but the two delivery keys, for a data push and an FCM
/// notification message alike: `title`, `body`, `link` and `image` among them. The handler
/// passes the whole data bundle through as the tap's extras (`CustomerIOParsedPushPayload.extras`,
/// `putExtras(bundle)`), and so does FCM's own notification; the delivery keys are Customer.io's
/// ids (the campaign here), left out as on iOS. FCM's own keys (`google.*`, `gcm.*`, `from`, …)
/// are not in the data the app receives.
extension ContentReader {
    static let customerIODeliveryKeys: Set<String> = ["CIO-Delivery-ID", "CIO-Delivery-Token"]

    mutating func readCustomerIOIOS() {
        readAPNs()
        setExtras(from: payload) { $0 == "aps" || $0 == "CIO" || Self.customerIODeliveryKeys.contains($0) }
        let cio = object(payload["CIO"], at: "CIO")
        let link = text(object(cio?["push"], at: "CIO.push")?["link"], at: "CIO.push.link")
        if let link, !Self.hasCustomerIODeliveryKeys(payload) {
            warnings.append("CIO.push.link is opened by Customer.io's SDK only for a push with both CIO-Delivery-ID and CIO-Delivery-Token: a tap opens the app, not \(link)")
        } else {
            content.openURL = link
        }
        content.campaignID = text("CIO-Delivery-ID")
    }

    /// Customer.io Android's picture: `image`, else FCM's notification image. The SDK asks
    /// whether a key is there (`bundle.getString(IMAGE_KEY) ?: notification.imageUrl`), not
    /// whether it is empty: an empty `image` is no picture, and no fallback either. FCM's
    /// `RemoteMessage.getNotification()` is `null` unless `gcm.n.e` is "1", so the fallback to
    /// `gcm.n.image` is only that of a notification message (read there as FCM shows it).
    static func customerIOAndroidPicture(_ payload: JSONObject) -> String? {
        if isCustomerIONotificationMessage(payload) { return firstText([payload["gcm.n.image"], payload["gcm.notification.image"]]) }
        return payload["image"]?.string.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether a push has both delivery keys, without which Customer.io's SDKs leave it alone.
    static func hasCustomerIODeliveryKeys(_ payload: JSONObject) -> Bool {
        customerIODeliveryKeys.allSatisfy { payload[$0] != nil }
    }

    /// Whether an Android push is an FCM notification message (`gcm.n.e` "1"), which FCM's SDK
    /// draws itself while the app is in the background: Customer.io's handler never sees it then.
    static func isCustomerIONotificationMessage(_ payload: JSONObject) -> Bool {
        payload["gcm.n.e"]?.string == "1" || payload["gcm.notification.e"]?.string == "1"
    }

    mutating func readCustomerIOAndroid() {
        if Self.isCustomerIONotificationMessage(payload) {
            // `FirebaseMessagingService` hands it to `DisplayNotification` unless the app is in
            // the foreground, and only there to Customer.io's `onMessageReceived`.
            readFirebaseAndroid()
            content.androidPictureDrawer = .firebase
            content.campaignID = text("CIO-Delivery-ID")
            setCustomerIOAndroidExtras()
            warnings.append(
                "gcm.n.e is 1: an FCM notification message, which FCM's SDK shows itself while the app is in the background (shown here: gcm.n.*); only in the foreground does Customer.io's SDK show title, body, image and link")
            return
        }
        // Without `gcm.n.e` "1" FCM hands over no notification (`getNotification()` is `null`),
        // so its `gcm.n.*` texts are no fallback here.
        content.title = text("title")
        content.body = text("body")
        // `payload.deepLink?.takeIf { it.isNotBlank() }`.
        content.openURL = nonBlankText("link")
        // Its SDK reads no sound key: every push plays the default sound.
        content.sound = "default"
        content.imageURL = Self.customerIOAndroidPicture(payload)
        // `addImage` draws the picture as the collapsed notification's large icon too.
        content.largeIconURL = content.imageURL
        content.campaignID = text("CIO-Delivery-ID")
        // Both keys there (`!= null`), empty or not.
        content.visible = Self.hasCustomerIODeliveryKeys(payload)
        if !content.visible {
            warnNothingShown(
                without: Self.customerIODeliveryKeys.sorted().filter { payload[$0] == nil }, sdk: "Customer.io's SDK",
                rule: "with both CIO-Delivery-ID and CIO-Delivery-Token")
        }
        setCustomerIOAndroidExtras()
    }

    /// Every data key but the delivery keys (and FCM's own, which are no data).
    private mutating func setCustomerIOAndroidExtras() {
        setExtras(from: payload) { Self.customerIODeliveryKeys.contains($0) || Self.isFCMKey($0) }
    }
}
