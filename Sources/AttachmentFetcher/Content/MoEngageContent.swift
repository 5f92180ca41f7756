/// MoEngage. iOS: the APNs layer; tap target `app_extra.moe_deeplink` [U], else
/// `moengage.webUrl` (rich landing); extras are `app_extra` but `moe_deeplink`; campaign `moengage.cid`.
///
/// Android (`push_from: moengage`): title `gcm_title`, body `gcm_alert`, summary `gcm_subtext`,
/// picture `gcm_image_url`, tap target (a `gcm_webNotification` only) `moe_webUrl` else
/// `gcm_webUrl`, channel `moe_channel_id`, priority `gcm_priority`, category `gcm_category`,
/// large icon `gcm_l_ic`, buttons the JSON-in-string `gcm_actions` (`action_id`, a non-blank
/// `action_title`, a navigate action's `uri`; the first 3), campaign `gcm_campaign_id`; extras
/// are the keys that are not MoEngage's (`gcm_*`, `moe_*`, `moeFeatures`, `push_from`,
/// `inbox_expiry`) nor FCM's. A rich-push template
/// (`moeFeatures.richPush` `title` / `body` / `summary`) replaces those texts on Android 11 (API
/// 30) and earlier only: a warning names each that differs. Shown only with both
/// `gcm_notificationType` and `gcm_campaign_id`, a non-blank title and message (the rich push's
/// when it has both), and not `moeFeatures.pushToInbox`: as PushBase 6.6.0 decides (decompiled;
/// MoEngage publishes no source).
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
        let type = text("gcm_notificationType")
        content.visible = type != nil && content.campaignID != nil
        let features = object(payload["moeFeatures"], at: "moeFeatures")
        // PushBase's `Evaluator.isValidPayload` drops a push whose campaign id, title or message
        // is blank (the rich push's texts when both of those are set); a push for the inbox
        // (`moeFeatures.pushToInbox`) goes there and shows no notification (decompiled 6.6.0).
        let rich = object(features?["richPush"], at: "moeFeatures.richPush")
        let isBlank: (String?) -> Bool = { $0?.allSatisfy(\.isWhitespace) ?? true }
        let richTexts = [rich?["title"]?.string, rich?["body"]?.string]
        let texts = richTexts.allSatisfy { !isBlank($0) } ? richTexts : [content.title, content.body]
        if content.visible, texts.contains(where: isBlank) {
            content.visible = false
            warnings.append("gcm_title and gcm_alert must both be non-blank: MoEngage's SDK shows no push without them")
        }
        if content.visible, features?["pushToInbox"]?.isSet == true {
            content.visible = false
            warnings.append("moeFeatures.pushToInbox: MoEngage's SDK puts the push in the app's inbox and shows no notification")
        }
        // The tap opens a URL only for a web notification: `moe_webUrl` (the SDK's own form, the
        // payload's keys added), else `gcm_webUrl`; another type opens `gcm_activityName` or the app.
        let url = text("moe_webUrl") ?? text("gcm_webUrl")
        if type == "gcm_webNotification" {
            content.openURL = url
        } else if let url {
            warnings.append("a tap opens \(url) only for gcm_notificationType gcm_webNotification: this push opens the app")
        }
        content.channel = text("moe_channel_id")
        content.priority = integer(payload["gcm_priority"], at: "gcm_priority").map { min(2, max(-2, $0)) }
        content.category = text("gcm_category")
        content.largeIconURL = text("gcm_l_ic")
        // A rich-push template's own texts replace these up to API 30 only.
        if let rich {
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
                // `buttonFromJson` needs a non-blank `action_title`; the id is `optString`'s.
                guard let title = text(action["action_title"], at: "\(path).action_title"), !title.allSatisfy(\.isWhitespace) else {
                    warnings.append("\(path) has no action_title: MoEngage's SDK skips it")
                    continue
                }
                let id = identifier(action["action_id"], at: "\(path).action_id") ?? ""
                content.buttons.append(.init(id: id, title: title, url: text(action["uri"], at: "\(path).uri")))
            }
        }
        setExtras(from: payload) {
            $0.hasPrefix("gcm_") || $0.hasPrefix("moe_") || $0 == "moeFeatures" || $0 == "push_from"
                || $0 == "inbox_expiry" || Self.isFCMKey($0)
        }
    }
}
