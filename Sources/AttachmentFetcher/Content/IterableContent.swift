/// Iterable. iOS: the APNs layer; `itbl` gives the tap target (`defaultAction` of type
/// `openUrl`, else the legacy top-level `url`), the buttons (`actionButtons`: `identifier`,
/// `title`, an `openUrl` action's `data`) and the campaign (`campaignId`); extras are the
/// top-level keys but `aps` and `itbl` [U].
///
/// Android: title `title`, body `body`, sound `sound`, and the JSON-in-string `itbl`
/// (`attachment-url` the picture, `defaultAction`, `actionButtons`, `campaignId`), legacy tap
/// target `uri`; extras the keys but those [U]. Shown only when not a ghost push and with a
/// non-empty `body`.
extension ContentReader {
    mutating func readIterableIOS() {
        readAPNs()
        setExtras(from: payload) { $0 == "aps" || $0 == "itbl" }
        readIterableMetadata(legacyURLKey: "url")
    }

    mutating func readIterableAndroid() {
        content.title = text("title")
        content.body = text("body")
        content.sound = text("sound")
        let ghost = readIterableMetadata(legacyURLKey: "uri")
        content.visible = content.body != nil && !ghost
        setExtras(from: payload) {
            ["itbl", "title", "body", "sound", "uri", "notificationType", "messageId"].contains($0) || Self.isFCMKey($0)
        }
    }

    /// Reads `itbl`; whether it is a ghost push.
    @discardableResult
    private mutating func readIterableMetadata(legacyURLKey: String) -> Bool {
        let itbl = object(payload["itbl"], at: "itbl") ?? [:]
        content.campaignID = identifier(itbl["campaignId"], at: "itbl.campaignId")
        if content.platform == .android { content.imageURL = text(itbl["attachment-url"], at: "itbl.attachment-url") }
        content.openURL = iterableURL(itbl["defaultAction"], at: "itbl.defaultAction") ?? text(legacyURLKey)
        if let buttons = array(itbl["actionButtons"], at: "itbl.actionButtons") {
            for (index, entry) in buttons.enumerated() {
                let path = "itbl.actionButtons[\(index)]"
                guard let button = object(entry, at: path), let id = text(button["identifier"], at: "\(path).identifier")
                else { continue }
                content.buttons.append(
                    .init(id: id, title: text(button["title"], at: "\(path).title"), url: iterableURL(button["action"], at: "\(path).action")))
            }
        }
        return flag(itbl["isGhostPush"], at: "itbl.isGhostPush") ?? false
    }

    /// The URL of an `{type: "openUrl", data: URL}` action.
    private mutating func iterableURL(_ value: JSONValue?, at path: String) -> String? {
        guard let action = object(value, at: path), text(action["type"], at: "\(path).type") == "openUrl" else { return nil }
        return text(action["data"], at: "\(path).data")
    }

    /// Iterable Android's picture: `attachment-url` in the JSON-in-string `itbl`.
    static func iterableAndroidPicture(_ payload: JSONObject) -> String? {
        var reader = ContentReader(payload, platform: .android)
        return reader.object(payload["itbl"], at: "itbl")?["attachment-url"]?.string.flatMap { $0.isEmpty ? nil : $0 }
    }
}
