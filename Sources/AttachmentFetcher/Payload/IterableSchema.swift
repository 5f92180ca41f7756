/// Iterable: a push is Iterable's when `itbl` is present. The attachment is
/// `itbl.attachment-url`, with no type hint.
///
/// Internal pushes: a "ghost push" (`itbl.isGhostPush`), which Iterable sends silently to track
/// uninstalls and to update in-app messages, and which shows nothing. The flag tells only the
/// Iterable SDK (`NotificationHelper.inspect`): iOS shows any push with an `aps.alert`, so a
/// ghost push that carries one is shown like any other.
struct IterableSchema: VendorSchema {
    var vendor: Vendor { .iterable }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload["itbl"] else { return nil }
        guard let itbl = value.object else { return .malformed("itbl is not an object") }
        if ContentReader.isIterableGhost(itbl["isGhostPush"], on: .ios), payload["aps"]?.object?["alert"] == nil {
            return .internalPush("Iterable ghost push")
        }
        return .attachment(itbl["attachment-url"], at: "itbl.attachment-url")
    }
}
