/// Iterable: a push is Iterable's when `itbl` is present. The attachment is
/// `itbl.attachment-url`, with no type hint.
///
/// Internal pushes: a "ghost push" (`itbl.isGhostPush`), which Iterable sends to track
/// uninstalls and which shows nothing.
struct IterableSchema: VendorSchema {
    var vendor: Vendor { .iterable }

    func recognize(_ payload: JSONObject) -> PayloadRecognition? {
        guard let value = payload["itbl"] else { return nil }
        guard let itbl = value.object else { return .malformed("itbl is not an object") }
        if ContentReader.isIterableGhost(itbl["isGhostPush"], on: .ios) { return .internalPush("Iterable ghost push") }
        return .attachment(itbl["attachment-url"], at: "itbl.attachment-url")
    }
}
