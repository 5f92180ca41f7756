/// MoEngage. iOS: the APNs layer; tap target `app_extra.moe_deeplink` [U], else
/// `moengage.webUrl` (rich landing); extras are `app_extra` but `moe_deeplink`; campaign `moengage.cid`.
///
/// Android (`push_from: moengage`): title `gcm_title`, body `gcm_alert`, summary `gcm_subtext`,
/// picture `gcm_image_url`, tap target `gcm_webUrl` else `moe_webUrl`, channel `moe_channel_id`,
/// priority `gcm_priority`, category `gcm_category`, large icon `gcm_l_ic`, buttons the
/// JSON-in-string `gcm_actions` (`action_id`, `action_title`, a navigate action's `uri`; the
/// first 3), campaign `gcm_campaign_id`; extras are the keys that are not MoEngage's (`gcm_*`,
/// `moe_*`, `moeFeatures`, `push_from`, `inbox_expiry`) nor FCM's. A rich-push template
/// (`moeFeatures.richPush` `title` / `body` / `summary`) replaces those texts on Android 11 (API
/// 30) and earlier only: a warning names each that differs. Shown only with both
/// `gcm_notificationType` and `gcm_campaign_id`.
extension ContentReader {
    mutating func readMoEngageIOS() {
        readAPNs()
        let appExtra = object(payload["app_extra"], at: "app_extra") ?? [:]
        setExtras(from: appExtra) { $0 == "moe_deeplink" }
        let moengage = object(payload["moengage"], at: "moengage")
        content.openURL =
            text(appExtra["moe_deeplink"], at: "app_extra.moe_deeplink")
            ?? text(moengage?["webUrl"], at: "moengage.webUrl")
        content.campaignID = identifier(moengage?["cid"], at: "moengage.cid")
    }

    /// The most buttons MoEngage's Android SDK adds from `gcm_actions`.
    static let moEngageMaximumButtons = 3

    mutating func readMoEngageAndroid() {
        content.title = text("gcm_title")
        content.body = text("gcm_alert")
        content.summary = text("gcm_subtext")
        content.imageURL = text("gcm_image_url")
        content.campaignID = text("gcm_campaign_id")
        content.visible = text("gcm_notificationType") != nil && content.campaignID != nil
        content.openURL = text("gcm_webUrl") ?? text("moe_webUrl")
        content.channel = text("moe_channel_id")
        content.priority = integer(payload["gcm_priority"], at: "gcm_priority").map { min(2, max(-2, $0)) }
        content.category = text("gcm_category")
        content.largeIconURL = text("gcm_l_ic")
        // A rich-push template's own texts replace these up to API 30 only.
        if let rich = object(object(payload["moeFeatures"], at: "moeFeatures")?["richPush"], at: "moeFeatures.richPush") {
            for (key, shown) in [("title", content.title), ("body", content.body), ("summary", content.summary)] {
                guard let own = text(rich[key], at: "moeFeatures.richPush.\(key)"), own != shown else { continue }
                warnings.append(
                    "Android 11 (API 30) and earlier show moeFeatures.richPush's \(key) '\(own)'"
                        + (shown.map { " instead of '\($0)'" } ?? ""))
            }
        }
        if let actions = array(payload["gcm_actions"], at: "gcm_actions") {
            if actions.count > Self.moEngageMaximumButtons {
                warnings.append("gcm_actions has \(actions.count) buttons: MoEngage shows the first \(Self.moEngageMaximumButtons)")
            }
            for (index, entry) in actions.prefix(Self.moEngageMaximumButtons).enumerated() {
                let path = "gcm_actions[\(index)]"
                guard let action = object(entry, at: path) else { continue }
                let title = text(action["action_title"], at: "\(path).action_title")
                guard let id = identifier(action["action_id"], at: "\(path).action_id") ?? title else { continue }
                content.buttons.append(.init(id: id, title: title, url: text(action["uri"], at: "\(path).uri")))
            }
        }
        setExtras(from: payload) {
            $0.hasPrefix("gcm_") || $0.hasPrefix("moe_") || $0 == "moeFeatures" || $0 == "push_from"
                || $0 == "inbox_expiry" || Self.isFCMKey($0)
        }
    }
}
