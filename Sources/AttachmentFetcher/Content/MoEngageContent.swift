import Foundation

/// MoEngage. iOS: the APNs layer; tap target `app_extra.moe_deeplink` [U], else
/// `moengage.webUrl` (rich landing, opened in the app); extras are `app_extra` but `moe_deeplink`; campaign `moengage.cid`.
///
/// Android (`push_from: moengage`): title `gcm_title`, body `gcm_alert`, summary `gcm_subtext`,
/// picture `gcm_image_url`, tap target (a `gcm_webNotification` only) `moe_webUrl` else
/// `gcm_webUrl` with the payload's keys added, channel `moe_channel_id`, priority `gcm_priority`, category `gcm_category`,
/// lock-screen visibility `gcm_privacy`,
/// large icon `moeFeatures.android.largeIcon`, else the older `gcm_l_ic`, buttons the JSON-in-string `gcm_actions` (`action_id`, a non-blank
/// `action_title`, a navigate action's `uri`, or its `extras`' lone `gcm_webUrl` in a web view; the first 3), campaign `gcm_campaign_id`; extras
/// are the keys that are not MoEngage's (`gcm_*`, `moe_*`, `moeFeatures`, `push_from`,
/// `inbox_expiry`) nor FCM's. A rich-push template
/// (`moeFeatures.richPush` `title` / `body` / `summary`) replaces those texts on Android 11 (API
/// 30) and earlier only: a warning names each that differs. With `moeFeatures.android.hasHtmlText`
/// the texts are HTML, kept as written, with a warning where they hold markup. Shown only with both
/// `gcm_notificationType` and `gcm_campaign_id`, a non-blank title and message (the rich push's
/// when it has both), and not `moeFeatures.pushToInbox`: as PushBase 6.6.0 decides (decompiled;
/// MoEngage publishes no source).
extension ContentReader {
    mutating func readMoEngageIOS() {
        readAPNs()
        let appExtra = object(payload["app_extra"], at: "app_extra") ?? [:]
        setExtras(from: appExtra) { $0 == "moe_deeplink" }
        let moengage = object(payload["moengage"], at: "moengage")
        warnInternalKeysShown([("moengage.silentPush", moengage?["silentPush"]?.isSet == true)], sdk: "MoEngage")
        if let deepLink = text(appExtra["moe_deeplink"], at: "app_extra.moe_deeplink") {
            content.openURL = deepLink
        } else if let landing = text(moengage?["webUrl"], at: "moengage.webUrl") {
            // A rich landing, which MoEngage's iOS SDK opens in the app (a Safari view controller).
            content.openURL = landing
            content.openInWebview = true
        }
        content.campaignID = identifier(moengage?["cid"], at: "moengage.cid")
    }

    /// `url` with each key of `payload` added as a query parameter, as Android's
    /// `Uri.Builder.appendQueryParameter` adds it (`Uri.encode`: letters, digits and `_-!.~'()*`
    /// kept, every other byte of the UTF-8 percent-encoded), before any fragment; a value that is
    /// not a string is added as its JSON text. MoEngage's `addPayloadToUri` adds the whole payload.
    static func addingPayload(_ payload: JSONObject, to url: String) -> String {
        var allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        allowed.insert(charactersIn: "_-!.~'()*")
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        let parameters = payload.members.compactMap { member -> String? in
            let value: String
            switch member.value {
            case .null: return nil
            case .string(let text): value = text
            case .bool(let flag): value = flag ? "true" : "false"
            case .number(let number): value = PayloadValue.text(of: number)
            case .array, .object:
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                value = (try? encoder.encode(PayloadValue(member.value))).map { String(decoding: $0, as: UTF8.self) } ?? ""
            }
            return encoded(member.key) + "=" + encoded(value)
        }
        guard !parameters.isEmpty else { return url }
        let (base, fragment) = url.firstIndex(of: "#").map { (String(url[..<$0]), String(url[$0...])) } ?? (url, "")
        let separator = base.contains("?") ? (base.hasSuffix("?") ? "" : "&") : "?"
        return base + separator + parameters.joined(separator: "&") + fragment
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
        // Its silent push (`gcm_silentNotification`) is recognised as internal: it shows nothing,
        // and no key is missing there, nor any text.
        let silent = AndroidSchemas.isInternal(payload, by: MoEngageAndroidSchema())
        content.visible = type != nil && content.campaignID != nil && !silent
        let missing = [("gcm_notificationType", type), ("gcm_campaign_id", content.campaignID)].filter { $0.1 == nil }.map(\.0)
        if !missing.isEmpty, !silent {
            warnNothingShown(without: missing, sdk: "MoEngage's SDK", rule: "with both gcm_notificationType and gcm_campaign_id")
        }
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
        // The tap opens a URL only for a web notification (`RedirectionHandler.getDeepLink`): a
        // payload with the key `moe_webUrl` opens that, even empty; one without opens `gcm_webUrl`
        // with every key of the payload added as a query parameter (`addPayloadToUri`). Another
        // type opens `gcm_activityName` or the app.
        let url = payload["moe_webUrl"] != nil ? text("moe_webUrl") : text("gcm_webUrl")
        if type == "gcm_webNotification" {
            if payload["moe_webUrl"] != nil {
                content.openURL = url
            } else if let url {
                content.openURL = Self.addingPayload(payload, to: url)
                warnings.append(
                    "without moe_webUrl, MoEngage's SDK opens gcm_webUrl with every key of the payload added as a query parameter (shown in the payload's order; the device's order is its own, and the SDK may add keys)")
            }
        } else if let url {
            warnings.append("a tap opens \(url) only for gcm_notificationType gcm_webNotification: this push opens the app")
        }
        content.channel = text("moe_channel_id")
        content.priority = integer(payload["gcm_priority"], at: "gcm_priority").map { min(2, max(-2, $0)) }
        content.category = text("gcm_category")
        // `setVisibilityIfPresentAndSupported`: `setVisibility(Integer.parseInt(gcm_privacy))`,
        // an exception caught and logged.
        readVisibility(
            "gcm_privacy", outOfRange: "MoEngage's SDK passes it on, and Android defines no such visibility",
            notInteger: "MoEngage's SDK sets no visibility")
        // The current SDK's large icon is `moeFeatures.android.largeIcon`; older SDKs read `gcm_l_ic`.
        let androidFeatures = object(features?["android"], at: "moeFeatures.android")
        content.largeIconURL = text(androidFeatures?["largeIcon"], at: "moeFeatures.android.largeIcon") ?? text("gcm_l_ic")
        // `hasHtmlText`: the SDK renders its texts as HTML; they are kept as written, and said
        // to hold formatting where they hold markup (a tag or an entity).
        if flag(androidFeatures?["hasHtmlText"], at: "moeFeatures.android.hasHtmlText") == true,
            [content.title, content.body, content.summary].contains(where: { $0?.contains(where: { $0 == "<" || $0 == "&" }) == true })
        {
            warnings.append(
                "moeFeatures.android.hasHtmlText: MoEngage's SDK renders the title, body and summary as HTML, so their tags and entities are formatting on the phone, not text (shown here as written)")
        }
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
                // A navigate action opens its `uri`; one whose `extras` hold only `gcm_webUrl` is a
                // rich landing, which the SDK opens in its own web view (`MoEActivity`).
                var url = text(action["uri"], at: "\(path).uri")
                var webview = false
                if url == nil, let extras = action["extras"]?.object, extras.members.count == 1,
                    let landing = text(extras["gcm_webUrl"], at: "\(path).extras.gcm_webUrl")
                {
                    url = landing
                    webview = true
                }
                content.buttons.append(.init(id: id, title: title, url: url, webview: webview))
            }
        }
        setExtras(from: payload) {
            $0.hasPrefix("gcm_") || $0.hasPrefix("moe_") || $0 == "moeFeatures" || $0 == "push_from"
                || $0 == "inbox_expiry" || Self.isFCMKey($0)
        }
    }
}
