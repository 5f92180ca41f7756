@testable import AttachmentFetcher
import Foundation
import Testing

typealias Button = NotificationContent.Button

/// Every example payload of the vendors' documentation, verbatim, read into the normalised notification.
@Suite("Notification content: every vendor's iOS and Android examples", .timeLimit(.minutes(1)))
struct NotificationContentTests {
    @Test("Braze iOS: alert, badge, sound, ab_uri, extras without Braze's keys, default-category buttons, internal pushes")
    func brazeIOS() throws {
        let basic = try ReadPayload(#"{"aps":{"alert":{"title":"Sale","body":"50% off"},"mutable-content":1,"badge":3,"sound":"default"},"ab":{"att":{"url":"https://cdn.example.com/a.jpg","type":"jpg"}},"ab_uri":"myapp://sale","ab_use_webview":false,"promo_id":"42"}"#)
        let content = try #require(basic.content)
        #expect(basic.vendor == .braze && basic.platform == .ios)
        #expect(content.visible && content.title == "Sale" && content.body == "50% off" && content.subtitle == nil)
        #expect(content.badge == .set(3) && content.sound == "default")
        #expect(content.openURL == "myapp://sale" && content.openInWebview == false)
        #expect(content.extras == ["promo_id": .string("42")])
        #expect(basic.pictureURLs == ["https://cdn.example.com/a.jpg"])
        #expect(basic.warnings.isEmpty)

        let buttons = try ReadPayload(#"{"aps":{"alert":{"title":"RSVP","body":"Coming?"},"category":"ab_cat_yes_no"},"ab":{}}"#)
        #expect(buttons.vendor == .braze)
        #expect(buttons.content?.category == "ab_cat_yes_no")
        #expect(buttons.content?.buttons == [Button(id: "ab_pb_yes", title: "Yes", tap: .opensApp), Button(id: "ab_pb_no", title: "No", tap: .dismisses)])
        #expect(buttons.recognized?.recognition == .noAttachment)

        for text in [
            #"{"aps":{"content-available":1},"ab":{},"appboy_uninstall_tracking":true}"#,
            #"{"aps":{"content-available":1},"ab":{"ab_cd":"…"}}"#,
        ] {
            let silent = try ReadPayload(text)
            #expect(silent.vendor == .braze && silent.isInternal && silent.content?.visible == false)
        }
    }

    @Test("Braze iOS: the seed document's ab.ab_cat buttons and a null campaign id")
    func brazeIOSButtons() throws {
        let read = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"ab":{"c":null,"ab_cat":[{"a_t":"Open","a_uri":"https://example.com/o","a_use_webview":"true"},{"a_id":"later","a_t":"Later"}]},"c":null}"#)
        #expect(read.content?.buttons == [
            Button(id: "0", title: "Open", url: "https://example.com/o", webview: true), Button(id: "later", title: "Later"),
        ])
        #expect(read.content?.campaignID == nil)
        #expect(read.content?.extras == ["c": .null])
        #expect(read.warnings.isEmpty)
        // With aps.category, iOS shows that category's buttons: a Braze default's, each given
        // the URL of the ab_cat entry with its id; an app's own category, the app's buttons.
        let both = try ReadPayload(#"{"aps":{"alert":"x","category":"ab_cat_yes_no"},"ab":{"ab_cat":[{"a_id":"ab_pb_yes","a_t":"Sure","a_uri":"myapp://y"}]}}"#)
        #expect(both.content?.buttons == [Button(id: "ab_pb_yes", title: "Yes", url: "myapp://y"), Button(id: "ab_pb_no", title: "No", tap: .dismisses)])
        #expect(both.warnings.contains { $0.contains("aps.category 'ab_cat_yes_no' is set: iOS shows that category's buttons, not ab.ab_cat's titles") }, "\(both.warnings)")
        let appCategory = try ReadPayload(#"{"aps":{"alert":"x","category":"SHOP"},"ab":{"ab_cat":[{"a_t":"Buy"}]}}"#)
        #expect(appCategory.content?.buttons == [])
        #expect(appCategory.content?.category == "SHOP")
    }

    @Test("Braze Android: t/a/s, badge, sound, channel, priority, picture from ab_iu or extra, buttons, inline image, silent and internal")
    func brazeAndroid() throws {
        let visible = try ReadPayload(#"{"_ab":"true","t":"Sale","a":"50% off","s":"Deals","cid":"camp-1","uri":"myapp://sale","ab_use_webview":"false","ab_nc":"promos","p":"1","sd":"d","ab_bc":"3","ab_iu":"https://cdn.example.com/a.jpg","extra":"{\"promo_id\":\"42\"}"}"#)
        let content = try #require(visible.content)
        #expect(visible.vendor == .braze && visible.platform == .android)
        #expect(content.visible && content.title == "Sale" && content.body == "50% off" && content.summary == "Deals")
        #expect(content.campaignID == "camp-1" && content.openURL == "myapp://sale" && !content.openInWebview)
        #expect(content.channel == "promos" && content.priority == 1 && content.sound == "default" && content.badge == .set(3))
        #expect(content.imageURL == "https://cdn.example.com/a.jpg" && content.extras == ["promo_id": .string("42")])
        #expect(visible.pictureURLs == ["https://cdn.example.com/a.jpg"])
        #expect(visible.warnings == ["Braze's sd plays only before Android 8 (API 26): from Android 8 the sound is the channel's (promos)"])

        let buttons = try ReadPayload(#"{"_ab":"true","t":"RSVP","a":"Coming?","extra":"{\"appboy_image_url\":\"https://cdn.example.com/b.png\"}","ab_a0_a":"ab_uri","ab_a0_t":"Details","ab_a0_uri":"https://example.com/e","ab_a0_use_webview":"true","ab_a0_id":"details","ab_a1_a":"ab_open","ab_a1_t":"Open","ab_a2_a":"ab_none","ab_a2_t":"Close"}"#)
        #expect(buttons.pictureURLs == ["https://cdn.example.com/b.png"])
        #expect(buttons.content?.extras == [:])
        #expect(buttons.content?.buttons == [
            Button(id: "details", title: "Details", url: "https://example.com/e", webview: true),
            Button(id: "ab_a1", title: "Open", tap: .opensApp), Button(id: "ab_a2", title: "Close", tap: .dismisses),
        ])

        let inline = try ReadPayload(#"{"_ab":"true","t":"New","a":"Look","ab_iip":"true","ab_iu":"https://cdn.example.com/c.jpg"}"#)
        #expect(inline.content?.inlineImage == true && inline.pictureURLs == ["https://cdn.example.com/c.jpg"])
        // The SDK asks only whether the key is there (`containsKey`), whatever its value.
        let inlineByPresence = try ReadPayload(#"{"_ab":"true","t":"New","a":"Look","ab_iip":"false","ab_iu":"https://cdn.example.com/c.jpg"}"#)
        #expect(inlineByPresence.content?.inlineImage == true && inlineByPresence.warnings.isEmpty)

        let silent = try ReadPayload(#"{"_ab":"true","extra":"{\"sync\":\"1\"}"}"#)
        #expect(silent.vendor == .braze && silent.content?.visible == false && silent.content?.extras == ["sync": .string("1")])
        #expect(!silent.isInternal)

        let uninstall = try ReadPayload(#"{"_ab":"true","appboy_uninstall_tracking":"true"}"#)
        #expect(uninstall.vendor == .braze && uninstall.isInternal)
    }

    @Test("MoEngage: iOS alert and rich landing, app_extra deep link and extras; Android gcm_* keys, buttons, silent")
    func moengage() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":"Message","subtitle":"Subtitle","body":"msg"},"mutable-content":1,"badge":0,"sound":"default","category":"MOE_PUSH_TEMPLATE","interruption-level":"active","relevance-score":0.5},"moengage":{"cid":"000000000000000047845195_L_0","moe_campaign_id":"000000000000000047845195","app_id":"APPID","media-attachment":"https://cdn.example.com/a.jpg","media-type":"image","webUrl":"https://www.example.com/"},"app_extra":{},"moe_push_service":"apns","moe_cid_attr":{"sent_epoch_time":1741850044},"moeFeatures":{"richPush":{"title":"Message","subtitle":"Subtitle","body":"<div>msg</div>","ios":{"category":"MOE_PUSH_TEMPLATE"},"defaultActions":[{"name":"navigate","type":"richLanding","value":"https://www.example.com/"}]}}}"#)
        let content = try #require(ios.content)
        #expect(ios.vendor == .moengage && ios.platform == .ios)
        #expect(content.title == "Message" && content.subtitle == "Subtitle" && content.body == "msg")
        #expect(content.badge == .set(0) && content.badge?.count(from: 7) == 0)
        #expect(content.category == "MOE_PUSH_TEMPLATE" && content.interruptionLevel == "active" && content.relevanceScore == 0.5)
        #expect(content.openURL == "https://www.example.com/" && content.campaignID == "000000000000000047845195_L_0")
        #expect(content.extras == [:] && ios.pictureURLs == ["https://cdn.example.com/a.jpg"])

        let deepLink = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"}},"moengage":{"cid":"…_L_0","app_id":"APPID"},"app_extra":{"moe_deeplink":"myapp://home","screenData":{"k":"v"}}}"#)
        #expect(deepLink.content?.openURL == "myapp://home")
        #expect(deepLink.content?.extras == ["screenData": .object(["k": .string("v")])])

        let android = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_webNotification","gcm_campaign_id":"000000000000000015056066_L_0","gcm_title":"Title","gcm_alert":"Message","gcm_subtext":"Summary","gcm_image_url":"https://cdn.example.com/a.jpg","gcm_webUrl":"myapp://moe_app/add_to_cart","moe_webUrl":"myapp://moe_app/add_to_cart?key=value","moe_app_id":"APPID","moe_channel_id":"moe_sound_channel","moe_cid_attr":"{…}","key":"value"}"#)
        let data = try #require(android.content)
        #expect(android.vendor == .moengage && android.platform == .android && data.visible)
        #expect(data.title == "Title" && data.body == "Message" && data.summary == "Summary")
        #expect(data.openURL == "myapp://moe_app/add_to_cart?key=value" && data.channel == "moe_sound_channel")
        #expect(data.campaignID == "000000000000000015056066_L_0" && data.extras == ["key": .string("value")])
        #expect(android.pictureURLs == ["https://cdn.example.com/a.jpg"] && android.warnings.isEmpty)

        let buttons = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_webNotification","gcm_campaign_id":"…","gcm_title":"T","gcm_alert":"B","gcm_actions":"[{\"action_title\":\"Copy code\",\"action_id\":\"a1\",\"action_tag\":\"…\",\"value\":\"SAVE10\"}]"}"#)
        #expect(buttons.content?.buttons == [Button(id: "a1", title: "Copy code")])

        let silent = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_silentNotification","gcm_campaign_id":"…"}"#)
        #expect(silent.vendor == .moengage && silent.isInternal)
    }

    @Test("MoEngage Android with moeFeatures.android.hasHtmlText: the texts are kept as written, and a warning says their tags are formatting on the phone")
    func moengageHTMLText() throws {
        let html = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"normal notification","gcm_campaign_id":"c","gcm_title":"<b>Big</b> sale","gcm_alert":"<i>50%</i> off<br>today","moeFeatures":"{\"android\":{\"hasHtmlText\":true}}"}"#)
        #expect(html.content?.title == "<b>Big</b> sale" && html.content?.body == "<i>50%</i> off<br>today")
        #expect(
            html.warnings == [
                "moeFeatures.android.hasHtmlText: MoEngage's SDK renders the title, body and summary as HTML, so their tags and entities are formatting on the phone, not text (shown here as written)"
            ], "\(html.warnings)")
        // Without the flag, or with texts that hold no markup, nothing is said.
        let plain = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"normal notification","gcm_campaign_id":"c","gcm_title":"<b>Big</b>","gcm_alert":"B"}"#)
        #expect(plain.warnings.isEmpty, "\(plain.warnings)")
        let noMarkup = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"normal notification","gcm_campaign_id":"c","gcm_title":"Big","gcm_alert":"B","moeFeatures":"{\"android\":{\"hasHtmlText\":true}}"}"#)
        #expect(noMarkup.warnings.isEmpty, "\(noMarkup.warnings)")
    }

    @Test("Airship: content override and media options, several media, interactive buttons, remote-data; Android style, actions, buttons, ping")
    func airship() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1,"badge":2,"sound":"default"},"_":"send-id","com.urbanairship.metadata":"…","^d":"myapp://x","com.urbanairship.media_attachment":{"url":"https://cdn.example.com/a.jpg","thumbnail_id":"…","options":{"crop":{"x":0,"y":0,"width":1,"height":1},"hidden":false},"content":{"title":"T2","subtitle":"S2","body":"B2"}}}"#)
        let content = try #require(ios.content)
        #expect(ios.vendor == .airship && content.title == "T2" && content.subtitle == "S2" && content.body == "B2")
        #expect(content.badge == .set(2) && content.openURL == "myapp://x" && content.campaignID == "send-id")
        #expect(content.thumbnailID == "…" && content.crop == .init(x: 0, y: 0, width: 1, height: 1) && content.hidden == false)
        #expect(content.time == nil && content.extras == [:] && ios.warnings.isEmpty)

        let several = try ReadPayload(#"{"aps":{"alert":"Hi","mutable-content":1},"_":"send-id","com.urbanairship.media_attachment":{"urls":[{"url":"https://cdn.example.com/1.jpg","url_id":"one"},{"url":"https://cdn.example.com/2.jpg","url_id":"two"}],"thumbnail_id":"one"}}"#)
        #expect(several.content?.body == "Hi" && several.content?.thumbnailID == "one" && several.pictureURLs.count == 2)

        let buttons = try ReadPayload(#"{"aps":{"alert":"Join?","category":"my_yes_no"},"_":"send-id","com.urbanairship.interactive_actions":{"yes":{"^d":"myapp://join"},"no":{"^u":"https://example.com"}}}"#)
        #expect(buttons.vendor == .airship && buttons.recognized?.recognition == .noAttachment)
        #expect(buttons.content?.buttons == [Button(id: "yes", url: "myapp://join"), Button(id: "no", url: "https://example.com")])

        let refresh = try ReadPayload(#"{"aps":{"content-available":1},"com.urbanairship.remote-data.update":true}"#)
        #expect(refresh.vendor == .airship && refresh.isInternal)

        let android = try ReadPayload(#"{"com.urbanairship.push.PUSH_ID":"send-id","com.urbanairship.metadata":"…","com.urbanairship.push.ALERT":"B","com.urbanairship.title":"T","com.urbanairship.summary":"S","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"https://cdn.example.com/a.jpg\",\"title\":\"T\",\"summary\":\"S\"}","com.urbanairship.actions":"{\"^d\":\"myapp://x\"}","com.urbanairship.interactive_type":"ua_yes_no_foreground","com.urbanairship.interactive_actions":"{\"yes\":{\"^d\":\"myapp://yes\"}}","com.urbanairship.notification_channel":"news","com.urbanairship.priority":"1","promo":"42"}"#)
        let data = try #require(android.content)
        #expect(android.vendor == .airship && android.platform == .android && data.visible)
        #expect(data.body == "B" && data.title == "T" && data.summary == "S" && data.openURL == "myapp://x")
        #expect(data.expandedTitle == "T" && data.expandedText == "S")
        #expect(data.category == nil && data.buttons == [Button(id: "yes", title: "Yes", url: "myapp://yes"), Button(id: "no", title: "No", tap: .dismisses)])
        #expect(data.channel == "news" && data.priority == 1 && data.campaignID == "send-id" && data.extras == ["promo": .string("42")])
        #expect(android.pictureURLs == ["https://cdn.example.com/a.jpg"] && android.warnings.isEmpty)

        let ping = try ReadPayload(#"{"com.urbanairship.push.PING":"true"}"#)
        #expect(ping.vendor == .airship && ping.isInternal)
    }

    @Test("OneSignal iOS as its extension makes it: two buttons in reverse order; badge_inc 0 is no increment, a string of digits is one")
    func oneSignalExtensionQuirks() throws {
        let two = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"custom":{"i":"n"},"buttons":[{"i":"yes","n":"Yes"},{"i":"no","n":"No"}]}"#)
        #expect(two.content?.buttons == [Button(id: "no", title: "No", tap: .opensApp), Button(id: "yes", title: "Yes", tap: .opensApp)])
        #expect(two.warnings.contains { $0.contains("reverse") && $0.contains("buttons") }, "\(two.warnings)")
        let three = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"n","buttons":[{"i":"a","n":"A"},{"i":"b","n":"B"},{"i":"c","n":"C"}]}}"#)
        #expect(three.content?.buttons.map(\.id) == ["a", "b", "c"])
        #expect(!three.warnings.contains { $0.contains("reverse") })
        let zero = try ReadPayload(#"{"aps":{"alert":"B","badge":3,"mutable-content":1},"os_data":{"i":"n","badge_inc":0}}"#)
        #expect(zero.content?.badge == .set(3))
        let text = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"n","badge_inc":"2"}}"#)
        #expect(text.content?.badge == .increment(2))
        #expect(text.warnings.isEmpty, "\(text.warnings)")
    }

    @Test("OneSignal iOS's legacy minified form, which its SDK shows itself as a local notification: only with buttons or attachments, its picture from at, the default sound, no badge for b 0, no badge_inc, its buttons whatever aps.category says")
    func oneSignalMinified() throws {
        let bare = try ReadPayload(#"{"aps":{"content-available":1},"m":"Hi","custom":{"i":"n"}}"#)
        #expect(bare.vendor == .oneSignal && bare.content?.visible == false)
        let rich = try ReadPayload(#"{"aps":{"content-available":1,"category":"cat"},"m":"Hi","o":[{"n":"OK"}],"at":{"x":"https://cdn.example.com/a.jpg"},"b":0,"custom":{"i":"n","badge_inc":2}}"#)
        let content = try #require(rich.content)
        #expect(content.visible && content.body == "Hi" && content.sound == "default" && content.badge == nil)
        #expect(content.buttons == [Button(id: "OK", title: "OK", tap: .opensApp)])
        #expect(rich.pictureURLs == ["https://cdn.example.com/a.jpg"])
        let osData = try ReadPayload(#"{"aps":{"content-available":1},"os_data":{"i":"n","buttons":{"m":"Hi","s":"chime","b":3,"o":[{"i":"a","n":"A"},{"i":"b","n":"B"}],"at":{"x":"https://cdn.example.com/b.jpg"}}}}"#)
        #expect(osData.content?.visible == true && osData.content?.sound == "chime" && osData.content?.badge == .set(3))
        #expect(osData.content?.buttons.map(\.id) == ["b", "a"])
        #expect(osData.pictureURLs == ["https://cdn.example.com/b.jpg"])
    }

    @Test("OneSignal: custom and os_data formats, badge_inc, buttons, the minified form; Android custom, o, pri, silent")
    func oneSignal() throws {
        let legacy = try ReadPayload(#"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B"},"mutable-content":1,"badge":1,"sound":"default","thread-id":"orders"},"custom":{"i":"notif-uuid","u":"https://example.com","a":{"order":"7"},"badge_inc":1},"buttons":[{"i":"yes","n":"Yes"},{"i":"no","n":"No"}],"att":{"id":"https://cdn.example.com/a.jpg"}}"#)
        let content = try #require(legacy.content)
        #expect(legacy.vendor == .oneSignal && content.title == "T" && content.subtitle == "S" && content.body == "B")
        #expect(content.badge == .increment(1) && content.badge?.count(from: 4) == 5 && content.threadID == "orders")
        #expect(content.openURL == "https://example.com" && content.campaignID == "notif-uuid")
        #expect(content.extras == ["order": .string("7")])
        #expect(content.buttons == [Button(id: "no", title: "No", url: "https://example.com"), Button(id: "yes", title: "Yes", url: "https://example.com")])
        #expect(legacy.pictureURLs == ["https://cdn.example.com/a.jpg"])

        let osData = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"notif-uuid","u":"myapp://x","ti":"tmpl","tn":"Template","badge_inc":-1,"buttons":[{"i":"fav","n":"Favorite","icon_type":"system","path":"star"}],"att":{"img":"https://cdn.example.com/a.jpg"}},"order":"7"}"#)
        #expect(osData.content?.badge == .increment(-1) && osData.content?.badge?.count(from: 0) == 0)
        #expect(osData.content?.openURL == "myapp://x" && osData.content?.extras == ["order": .string("7")])
        #expect(osData.content?.buttons == [Button(id: "fav", title: "Favorite", url: "myapp://x")])

        let minified = try ReadPayload(#"{"aps":{"content-available":1},"m":{"title":"T","body":"B"},"b":2,"s":"default","o":[{"i":"ok","n":"OK"}],"custom":{"i":"notif-uuid"}}"#)
        #expect(minified.vendor == .oneSignal && minified.content?.visible == true)
        #expect(minified.content?.title == "T" && minified.content?.badge == .set(2) && minified.content?.sound == "default")
        #expect(minified.content?.buttons == [Button(id: "ok", title: "OK", tap: .opensApp)])

        let android = try ReadPayload(#"{"title":"T","alert":"B","bicon":"https://cdn.example.com/a.jpg","licon":"https://cdn.example.com/i.png","sound":"chime","pri":"9","grp":"orders","collapse_key":"order-7","custom":"{\"i\":\"notif-uuid\",\"u\":\"https://example.com\",\"a\":{\"order\":\"7\"}}","o":"[{\"i\":\"yes\",\"n\":\"Yes\",\"p\":\"ic_yes\"},{\"n\":\"Later\"}]"}"#)
        let data = try #require(android.content)
        #expect(android.vendor == .oneSignal && android.platform == .android && data.visible)
        #expect(data.title == "T" && data.body == "B" && data.largeIconURL == "https://cdn.example.com/i.png")
        #expect(data.sound == "chime" && data.priority == 2 && data.threadID == "orders")
        #expect(data.openURL == "https://example.com" && data.campaignID == "notif-uuid" && data.extras == ["order": .string("7")])
        #expect(data.buttons == [Button(id: "yes", title: "Yes", url: "https://example.com"), Button(id: "Later", title: "Later", url: "https://example.com")])
        #expect(android.pictureURLs == ["https://cdn.example.com/a.jpg"])
        // No chnl: the SDK's default channel, whose sound plays from Android 8 on.
        #expect(android.warnings == ["OneSignal's sound plays only before Android 8 (API 26): from Android 8 the sound is the channel's (the default channel)"])

        let silent = try ReadPayload(#"{"custom":"{\"i\":\"notif-uuid\",\"a\":{\"sync\":\"1\"}}"}"#)
        #expect(silent.vendor == .oneSignal && silent.content?.visible == false && silent.content?.extras == ["sync": .string("1")])
    }

    @Test("A text with both its literal and a localisation key: iOS shows the app's string for the key (with a warning), FCM's Android SDK the literal")
    func localisationKeyPrecedence() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":"Hi","title-loc-key":"GREETING","body":"B","loc-key":"BODY","loc-args":["Ann"]}},"ab":{}}"#)
        let content = try #require(ios.content)
        #expect(content.title == "Hi" && content.titleLocKey == "GREETING")
        #expect(content.shownTitle == .localized(key: "GREETING", arguments: []))
        #expect(content.shownBody == .localized(key: "BODY", arguments: ["Ann"]))
        #expect(content.shownTitle?.description == "[GREETING]")
        #expect(ios.warnings.contains { $0.contains("aps.alert.title") && $0.contains("title-loc-key 'GREETING'") }, "\(ios.warnings)")
        #expect(ios.warnings.contains { $0.contains("aps.alert.body") && $0.contains("loc-key 'BODY'") }, "\(ios.warnings)")
        let literalOnly = try ReadPayload(#"{"aps":{"alert":{"title":"Hi","body":"B"}},"ab":{}}"#)
        #expect(literalOnly.content?.shownTitle == .literal("Hi") && literalOnly.warnings.isEmpty)
        let android = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"Hi","gcm.n.title_loc_key":"greeting","gcm.n.body":"B"}"#)
        #expect(android.content?.shownTitle == .literal("Hi") && android.content?.shownBody == .literal("B"))
        #expect(android.warnings.isEmpty, "\(android.warnings)")
        let androidKeyOnly = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title_loc_key":"greeting","gcm.n.body":"B"}"#)
        #expect(androidKeyOnly.content?.shownTitle == .localized(key: "greeting", arguments: []))
    }

    @Test("FCM: iOS fcm_options; Android device bundle, localisation, no-UI; an HTTP v1 message")
    func firebase() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"fcm_options":{"image":"https://cdn.example.com/a.jpg"},"gcm.message_id":"1234567890","google.c.sender.id":"123","custom":"v"}"#)
        #expect(ios.vendor == .firebase && ios.platform == .ios && ios.content?.title == "T")
        #expect(ios.content?.extras == ["custom": .string("v")] && ios.pictureURLs == ["https://cdn.example.com/a.jpg"])

        let bundle = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"https://cdn.example.com/a.jpg","gcm.n.android_channel_id":"news","gcm.n.sound2":"default","gcm.n.notification_count":"3","gcm.n.link_android":"https://example.com","google.message_id":"0:…","custom":"v"}"#)
        let content = try #require(bundle.content)
        #expect(bundle.vendor == .firebase && bundle.platform == .android && content.visible)
        #expect(content.title == "T" && content.body == "B" && content.channel == "news" && content.sound == "default")
        #expect(content.badge == .set(3) && content.openURL == "https://example.com" && content.extras == ["custom": .string("v")])
        #expect(bundle.pictureURLs == ["https://cdn.example.com/a.jpg"])

        let localized = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title_loc_key":"welcome_title","gcm.n.body_loc_key":"welcome_body","gcm.n.body_loc_args":"[\"Ann\"]"}"#)
        #expect(localized.content?.titleLocKey == "welcome_title" && localized.content?.bodyLocKey == "welcome_body")
        #expect(localized.content?.bodyLocArgs == ["Ann"] && localized.content?.visible == true)

        let noUI = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.noui":"1","google.c.a.e":"1"}"#)
        #expect(noUI.vendor == .firebase && noUI.content?.visible == false)

        let v1 = try ReadPayload(#"{"message":{"token":"device","notification":{"title":"T","body":"B","image":"https://cdn.example.com/a.jpg"},"android":{"notification":{"channel_id":"news","image":"https://cdn.example.com/b.png","notification_count":2,"notification_priority":"PRIORITY_HIGH"}},"data":{"k":"v"}}}"#)
        let message = try #require(v1.content)
        #expect(v1.vendor == .firebase && v1.platform == .android && message.visible)
        #expect(message.title == "T" && message.body == "B" && message.channel == "news" && message.badge == .set(2))
        #expect(message.priority == 1 && message.extras == ["k": .string("v")])
        // iPhones get the common image, which Android's own replaces here: each is requested for its platform.
        #expect(v1.pictureURLs == ["https://cdn.example.com/b.png", "https://cdn.example.com/a.jpg"])
        #expect(v1.warnings == ["iPhones attach message.notification.image (https://cdn.example.com/a.jpg), not the Android picture (https://cdn.example.com/b.png)"])

        let bare = try ReadPayload(#"{"notification":{"title":"T","image":"https://cdn.example.com/a.jpg"}}"#)
        #expect(bare.vendor == .firebase && bare.pictureURLs == ["https://cdn.example.com/a.jpg"])

        // Airship's and Iterable's Android SDKs title a push without a title with the app's name.
        for (payload, warning) in [
            (#"{"com.urbanairship.push.ALERT":"B"}"#, "com.urbanairship.title is missing: Airship's SDK shows the app's name as the title"),
            (#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.title":""}"#, "com.urbanairship.title is missing: Airship's SDK shows the app's name as the title"),
            (#"{"body":"B","itbl":"{\"templateId\":1,\"messageId\":\"m\"}"}"#, "title is missing: Iterable's SDK shows the app's name as the title"),
        ] {
            let read = try ReadPayload(payload)
            #expect(read.content?.title?.isEmpty != false && read.warnings.contains(warning), "\(payload): \(read.warnings)")
        }
        let titled = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.title":"T"}"#)
        #expect(!titled.warnings.contains { $0.contains("app's name") }, "\(titled.warnings)")

        // `android.data` replaces `data` on Android (AndroidConfig.data): the app gets its keys.
        let androidData = try ReadPayload(#"{"message":{"notification":{"title":"T","body":"B"},"data":{"k":"common"},"android":{"data":{"k":"android","only":"a"}}}}"#)
        #expect(androidData.content?.extras == ["k": .string("android"), "only": .string("a")], "\(androidData.content?.extras ?? [:])")
    }

    @Test("An FCM HTTP v1 data message carrying another vendor's Android keys is read as the data map the device gets: that vendor's notification and picture, with a note; with a notification it stays FCM's")
    func firebaseHTTPv1DataMessage() throws {
        for (data, vendor, title) in [
            (#"{"_ab":"true","t":"Sale","a":"50% off","ab_iu":"https://cdn.example.com/a.png"}"#, Vendor.braze, "Sale"),
            (#"{"wzrk_pn":"true","nt":"Sale","nm":"50% off","wzrk_bp":"https://cdn.example.com/a.png"}"#, .cleverTap, "Sale"),
            (#"{"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","title":"Sale","body":"50% off","image":"https://cdn.example.com/a.png"}"#, .customerIO, "Sale"),
        ] {
            let wrapped = try ReadPayload(#"{"message":{"token":"device","data":\#(data)}}"#)
            let bare = try ReadPayload(data)
            #expect(wrapped.vendor == vendor && wrapped.platform == .android, "\(data)")
            #expect(wrapped.content == bare.content && wrapped.content?.title == title && wrapped.content?.visible == true, "\(data)")
            #expect(wrapped.pictureURLs == ["https://cdn.example.com/a.png"], "\(data)")
            #expect(wrapped.warnings.first == "an FCM HTTP v1 data message: read as the data map an Android device receives (message.data), from which \(vendor)'s SDK draws the notification")
            #expect(Array(wrapped.warnings.dropFirst()) == bare.warnings)
        }
        // `android.data` replaces `data` for Android; the message's content without `message` reads alike.
        let androidData = try ReadPayload(#"{"data":{"k":"v"},"android":{"data":{"_ab":"true","t":"T","a":"B"}}}"#)
        #expect(androidData.vendor == .braze && androidData.warnings.first?.contains("(android.data)") == true, "\(androidData.warnings)")
        // With a notification, FCM's SDK draws the message (in the background) whatever the data says.
        let notification = try ReadPayload(#"{"message":{"notification":{"title":"FCM"},"data":{"_ab":"true","t":"T","a":"B"}}}"#)
        #expect(notification.vendor == .firebase && notification.content?.title == "FCM")
        // Data no vendor takes is an FCM data message, as before.
        #expect(try ReadPayload(#"{"message":{"data":{"k":"v"}}}"#).vendor == .firebase)
    }

    @Test("FCM Android as its SDK draws it: a tag replaces, it does not group; the picture is the collapsed large icon too; a link opens only in the app")
    func firebaseAndroidDetails() throws {
        let tagged = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.tag":"score","gcm.n.image":"https://cdn.example.com/a.jpg","gcm.n.link":"https://example.com/x"}"#)
        let content = try #require(tagged.content)
        #expect(content.tag == "score" && content.threadID == nil)
        #expect(content.largeIconURL == "https://cdn.example.com/a.jpg" && content.imageURL == "https://cdn.example.com/a.jpg")
        #expect(content.openURL == "https://example.com/x")
        #expect(tagged.warnings.contains { $0.contains("gcm.n.link") && $0.contains("package") }, "\(tagged.warnings)")
        let v1 = try ReadPayload(#"{"message":{"notification":{"title":"T"},"android":{"notification":{"tag":"score"}}}}"#)
        #expect(v1.content?.tag == "score" && v1.content?.threadID == nil)
    }

    @Test("Customer.io Android sent as an FCM notification message (gcm.n.e 1) shows what FCM's SDK draws in the background, with a warning")
    func customerIONotificationMessage() throws {
        let read = try ReadPayload(#"{"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","gcm.n.e":"1","gcm.n.title":"FT","gcm.n.body":"FB","title":"CT","body":"CB","link":"myapp://x","image":"https://cdn.example.com/a.jpg"}"#)
        let content = try #require(read.content)
        #expect(read.vendor == .customerIO && read.platform == .android && content.visible)
        #expect(content.title == "FT" && content.body == "FB" && content.openURL == nil && content.imageURL == nil)
        #expect(content.campaignID == "d")
        #expect(read.pictureURLs.isEmpty)
        #expect(read.warnings.contains { $0.contains("gcm.n.e") && $0.contains("foreground") }, "\(read.warnings)")
        let withPicture = try ReadPayload(#"{"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","gcm.n.e":"1","gcm.n.title":"FT","gcm.n.image":"https://cdn.example.com/b.jpg","image":"https://cdn.example.com/a.jpg"}"#)
        #expect(withPicture.pictureURLs == ["https://cdn.example.com/b.jpg"])
    }

    @Test("CleverTap: iOS wzrk_dl and extras; Android full, silent flag, empty nm")
    func cleverTap() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1,"badge":1},"wzrk_id":"1700000000_20260101","wzrk_pivot":"wzrk_default","wzrk_dl":"myapp://x","ct_mediaUrl":"https://cdn.example.com/a.jpg","ct_mediaType":"image","k":"v"}"#)
        #expect(ios.vendor == .cleverTap && ios.content?.openURL == "myapp://x" && ios.content?.campaignID == "1700000000_20260101")
        // Extras are what the SDK hands the app: the payload less aps, CleverTap's keys included.
        #expect(ios.content?.badge == .set(1))
        #expect(Set(ios.content.map { Array($0.extras.keys) } ?? []) == ["wzrk_id", "wzrk_pivot", "wzrk_dl", "ct_mediaUrl", "ct_mediaType", "k"])
        #expect(ios.content?.extras["k"] == .string("v") && ios.content?.extras["wzrk_pivot"] == .string("wzrk_default"))

        let android = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_st":"Sub","wzrk_bp":"https://cdn.example.com/a.jpg","wzrk_nms":"Summary","wzrk_dl":"myapp://x","wzrk_cid":"promos","pr":"high","wzrk_sound":"true","wzrk_bc":"3","wzrk_id":"1700000000_20260101","wzrk_pid":"p-1","wzrk_acts":"[{\"l\":\"Open\",\"dl\":\"myapp://y\",\"id\":\"open\",\"ac\":true},{\"l\":\"Dismiss\",\"id\":\"dismiss\"}]","k":"v"}"#)
        let content = try #require(android.content)
        #expect(android.vendor == .cleverTap && android.platform == .android && content.visible)
        #expect(content.title == "T" && content.body == "B" && content.summary == "Sub" && content.subtitle == nil && content.expandedText == "Summary")
        #expect(content.openURL == "myapp://x" && content.channel == "promos" && content.priority == 1 && content.sound == "default")
        #expect(content.badge == .set(3) && content.campaignID == "1700000000_20260101")
        // Every data key: the click listener receives the whole payload.
        #expect(content.extras.count == 15 && content.extras["k"] == .string("v") && content.extras["wzrk_pid"] == .string("p-1"))
        #expect(content.buttons == [Button(id: "open", title: "Open", url: "myapp://y"), Button(id: "dismiss", title: "Dismiss", tap: .opensApp)])
        #expect(android.pictureURLs == ["https://cdn.example.com/a.jpg"])
        #expect(android.warnings == ["CleverTap's wzrk_sound plays only before Android 8 (API 26): from Android 8 the sound is the channel's (promos)"])

        for text in [#"{"wzrk_pn":"true","wzrk_pn_s":"true","wzrk_id":"…"}"#, #"{"wzrk_pn":"true","nm":"","pf":"240"}"#] {
            let silent = try ReadPayload(text)
            #expect(silent.vendor == .cleverTap && silent.content?.visible == false)
        }
    }

    @Test("Iterable: iOS itbl actions; ghost pushes; Android itbl as a string; the legacy uri")
    func iterable() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1,"badge":1,"sound":"default"},"itbl":{"campaignId":123,"templateId":456,"messageId":"m-1","isGhostPush":false,"attachment-url":"https://cdn.example.com/a.jpg","defaultAction":{"type":"openUrl","data":"https://example.com/x"},"actionButtons":[{"identifier":"open","title":"Open","buttonType":"default","openApp":true,"action":{"type":"openUrl","data":"myapp://x"}},{"identifier":"reply","title":"Reply","buttonType":"textInput","inputTitle":"Send","inputPlaceholder":"Type…","openApp":false,"action":{"type":"reply"}}]},"k":"v"}"#)
        let content = try #require(ios.content)
        #expect(ios.vendor == .iterable && content.openURL == "https://example.com/x" && content.campaignID == "123")
        #expect(content.buttons == [Button(id: "open", title: "Open", url: "myapp://x"), Button(id: "reply", title: "Reply")])
        #expect(content.extras == ["k": .string("v")] && ios.pictureURLs == ["https://cdn.example.com/a.jpg"])

        let ghost = try ReadPayload(#"{"aps":{"content-available":1},"itbl":{"isGhostPush":true,"campaignId":0,"templateId":0,"messageId":"m-2"},"notificationType":"InAppUpdate"}"#)
        #expect(ghost.vendor == .iterable && ghost.isInternal)

        let android = try ReadPayload(#"{"title":"T","body":"B","sound":"chime","itbl":"{\"campaignId\":123,\"templateId\":456,\"messageId\":\"m-1\",\"isGhostPush\":false,\"attachment-url\":\"https://cdn.example.com/a.jpg\",\"defaultAction\":{\"type\":\"openUrl\",\"data\":\"https://example.com/x\"},\"actionButtons\":[{\"identifier\":\"open\",\"title\":\"Open\",\"buttonType\":\"default\",\"openApp\":true,\"action\":{\"type\":\"openUrl\",\"data\":\"myapp://x\"}}]}"}"#)
        let data = try #require(android.content)
        #expect(android.vendor == .iterable && android.platform == .android && data.visible)
        #expect(data.title == "T" && data.body == "B" && data.sound == "chime" && data.openURL == "https://example.com/x")
        #expect(data.buttons == [Button(id: "open", title: "Open", url: "myapp://x")] && data.extras == [:])
        #expect(android.pictureURLs == ["https://cdn.example.com/a.jpg"])
        // The button's custom scheme opens only where the app allows it.
        #expect(android.warnings.count == 1 && android.warnings.first?.hasPrefix("itbl.actionButtons[0].action.data is myapp://x") == true, "\(android.warnings)")

        let ghostAndroid = try ReadPayload(#"{"itbl":"{\"isGhostPush\":true}","notificationType":"InAppRemove","messageId":"m-2"}"#)
        #expect(ghostAndroid.vendor == .iterable && ghostAndroid.isInternal)

        let legacy = try ReadPayload(#"{"title":"T","body":"B","uri":"https://example.com/legacy","itbl":"{\"campaignId\":1,\"templateId\":2,\"messageId\":\"m-3\"}"}"#)
        #expect(legacy.content?.openURL == "https://example.com/legacy" && legacy.content?.campaignID == "1")
    }

    @Test("Customer.io: iOS CIO.push; Android delivery keys; a push without them is nobody's")
    func customerIO() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1},"CIO":{"push":{"link":"myapp://x","image":"https://cdn.example.com/a.jpg"}},"CIO-Delivery-ID":"dlv-1","CIO-Delivery-Token":"tok-1"}"#)
        #expect(ios.vendor == .customerIO && ios.content?.openURL == "myapp://x" && ios.content?.extras == [:])
        #expect(ios.content?.campaignID == "dlv-1" && ios.pictureURLs == ["https://cdn.example.com/a.jpg"])

        let android = try ReadPayload(#"{"title":"T","body":"B","link":"myapp://x","image":"https://cdn.example.com/a.jpg","CIO-Delivery-ID":"dlv-1","CIO-Delivery-Token":"tok-1","k":"v"}"#)
        #expect(android.vendor == .customerIO && android.platform == .android && android.content?.visible == true)
        // Every data key is passed through as the tap's extras; the delivery keys are the SDK's own.
        #expect(android.content?.openURL == "myapp://x")
        #expect(
            android.content?.extras == [
                "title": .string("T"), "body": .string("B"), "link": .string("myapp://x"), "image": .string("https://cdn.example.com/a.jpg"),
                "k": .string("v"),
            ])
        #expect(android.pictureURLs == ["https://cdn.example.com/a.jpg"])

        let nobody = try ReadPayload(#"{"title":"T","body":"B"}"#)
        #expect(nobody.recognized == nil && nobody.content == nil)
    }

    @Test("An iOS push with a badge or a sound and no alert shows no banner: its outcome's detail says the badge it sets and the sound it plays; on Android a push that posts nothing does neither")
    func badgeOrSoundWithoutAlert() {
        for (text, detail) in [
            (#"{"aps":{"badge":5},"ab":{}}"#, "the braze ios push shows no banner but sets the badge to 5: no request is made"),
            (#"{"aps":{"alert":"","sound":"","badge":2},"ab":{}}"#, "the braze ios push shows no banner but sets the badge to 2: no request is made"),
            (#"{"aps":{"badge":5,"sound":"default"},"ab":{}}"#, "the braze ios push shows no banner but sets the badge to 5 and plays the sound 'default': no request is made"),
            (#"{"aps":{"sound":"ping.caf"},"ab":{}}"#, "the braze ios push shows no banner but plays the sound 'ping.caf': no request is made"),
            (#"{"aps":{"badge":0,"content-available":1},"custom":{"i":"x","badge_inc":2}}"#, "the onesignal ios push shows no banner but clears the badge: no request is made"),
            (#"{"_ab":"true","t":"T","ab_bc":"3"}"#, "the braze android push shows nothing: no request is made"),
        ] {
            let prepared = PreparedPayload(Data(text.utf8), maximumAttachments: 4)
            guard case .original(let reason, let said) = prepared.next else {
                Issue.record("\(text) makes a request")
                continue
            }
            #expect(reason == .internalPush, "\(text)")
            #expect(said == detail, "\(text)")
            #expect(prepared.notification?.visible == false, "\(text)")
        }
    }

    @Test("A button says what its tap does: Braze's ab_uri opens its URL, ab_open the app, ab_none only dismisses; Iterable's openApp false opens nothing; unknown stays null")
    func buttonTaps() throws {
        func buttonsJSON(_ text: String) throws -> String {
            let read = try ReadPayload(text)
            let content = try #require(read.content)
            let line = Outcome(
                status: .original, reason: .noAttachment, detail: nil, vendor: read.vendor, attachments: [], warnings: [],
                elapsed: .zero, payload: Data(), notification: content
            ).jsonLine()
            let start = try #require(line.range(of: #""buttons":["#))
            return String(line[start.lowerBound...].prefix { $0 != "]" }) + "]"
        }
        let braze = try buttonsJSON(
            #"{"_ab":"true","t":"RSVP","a":"Coming?","ab_a0_a":"ab_uri","ab_a0_t":"Details","ab_a0_uri":"https://example.com/e","ab_a0_use_webview":"true","ab_a0_id":"details","ab_a1_a":"ab_open","ab_a1_t":"Open","ab_a2_a":"ab_none","ab_a2_t":"Close","ab_a3_a":"ab_uri","ab_a3_t":"Home"}"#)
        #expect(
            braze == #""buttons":[{"id":"details","tap":"opens-url","title":"Details","url":"https://example.com/e","webview":true},{"id":"ab_a1","tap":"opens-app","title":"Open","url":null,"webview":false},{"id":"ab_a2","tap":"dismisses","title":"Close","url":null,"webview":false},{"id":"ab_a3","tap":"opens-app","title":"Home","url":null,"webview":false}]"#,
            "\(braze)")
        let iterable = try buttonsJSON(
            #"{"aps":{"alert":"B","mutable-content":1},"itbl":{"messageId":"m","actionButtons":[{"identifier":"later","title":"Later","openApp":false},{"identifier":"open","title":"Open"},{"identifier":"web","title":"Web","action":{"type":"openUrl","data":"https://example.com/w"}}]}}"#)
        #expect(
            iterable == #""buttons":[{"id":"later","tap":"dismisses","title":"Later","url":null,"webview":false},{"id":"open","tap":"opens-app","title":"Open","url":null,"webview":false},{"id":"web","tap":"opens-url","title":"Web","url":"https://example.com/w","webview":false}]"#,
            "\(iterable)")
        // Braze's default categories: Accept, Yes, Confirm and More open the app (or the URL an
        // ab_cat entry gives them), Decline, No and Cancel only close the notification.
        for (category, expected) in [
            ("ab_cat_accept_decline", [("ab_pb_accept", "Accept", "opens-app"), ("ab_pb_decline", "Decline", "dismisses")]),
            ("ab_cat_yes_no", [("ab_pb_yes", "Yes", "opens-app"), ("ab_pb_no", "No", "dismisses")]),
            ("ab_cat_confirm_cancel", [("ab_pb_confirm", "Confirm", "opens-app"), ("ab_pb_cancel", "Cancel", "dismisses")]),
            ("ab_cat_more", [("ab_pb_more", "More", "opens-app")]),
        ] {
            let json = try buttonsJSON(#"{"aps":{"alert":"B","category":"\#(category)"},"ab":{}}"#)
            let buttons = expected.map { #"{"id":"\#($0.0)","tap":"\#($0.2)","title":"\#($0.1)","url":null,"webview":false}"# }
            #expect(json == #""buttons":["# + buttons.joined(separator: ",") + "]", "\(json)")
        }
        // The app's own category: the payload cannot say.
        let own = try buttonsJSON(#"{"aps":{"alert":"B","category":"rsvp"},"ab":{"ab_cat":[{"a_id":"go","a_t":"Go"}]}}"#)
        #expect(own == #""buttons":[]"#, "\(own)")
    }

    @Test("Buttons without a URL of their own: OneSignal's open the app, or the notification's launch URL u (iOS and Android); CleverTap's Android ones open the app; Airship's built-in groups follow the SDK's foreground flags")
    func buttonTapsWithoutURL() throws {
        typealias Button = NotificationContent.Button
        func buttons(_ text: String) throws -> [Button] { try ReadPayload(text).content?.buttons ?? [] }
        #expect(try buttons(#"{"aps":{"alert":"B","mutable-content":1},"custom":{"i":"n"},"buttons":[{"i":"a","n":"A"}]}"#) == [Button(id: "a", title: "A", tap: .opensApp)])
        #expect(
            try buttons(#"{"aps":{"alert":"B","mutable-content":1},"custom":{"i":"n","u":"https://example.com/o"},"buttons":[{"i":"a","n":"A"}]}"#)
                == [Button(id: "a", title: "A", url: "https://example.com/o")])
        #expect(
            try buttons(#"{"alert":"B","custom":"{\"i\":\"n\",\"u\":\"https://example.com/o\",\"a\":{\"actionButtons\":[{\"id\":\"b\",\"text\":\"Buy\"}]}}"}"#)
                == [Button(id: "b", title: "Buy", url: "https://example.com/o")])
        #expect(
            try buttons(#"{"alert":"B","custom":"{\"i\":\"n\",\"a\":{\"actionButtons\":[{\"id\":\"b\",\"text\":\"Buy\"}]}}"}"#)
                == [Button(id: "b", title: "Buy", tap: .opensApp)])
        #expect(
            try buttons(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_acts":"[{\"l\":\"Open\",\"dl\":\"myapp://y\",\"id\":\"open\"},{\"l\":\"Later\",\"id\":\"later\"}]"}"#)
                == [Button(id: "open", title: "Open", url: "myapp://y"), Button(id: "later", title: "Later", tap: .opensApp)])
        func airship(_ group: String) throws -> [Button.Tap?] {
            try buttons(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.title":"T","com.urbanairship.interactive_type":"\#(group)"}"#).map(\.tap)
        }
        #expect(try airship("ua_yes_no_foreground") == [.opensApp, .dismisses])
        #expect(try airship("ua_accept_decline_background") == [.dismisses, .dismisses])
        #expect(try airship("ua_remind_share") == [.dismisses, .opensApp])
        #expect(try airship("ua_rate_remind") == [.opensApp, .dismisses])
        #expect(try airship("ua_download") == [.opensApp])
        #expect(try airship("ua_opt_in") == [.dismisses])
    }

    @Test("aps.target-content-id and aps.alert.launch-image are kept (JSON target_content_id, launch_image) and said in the tap line; OneSignal's minified form, whose notification the app makes, keeps no target")
    func targetContentAndLaunchImage() throws {
        let read = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B","launch-image":"Splash"},"target-content-id":"room-7"},"ab":{}}"#)
        let content = try #require(read.content)
        #expect(content.targetContentID == "room-7" && content.launchImage == "Splash")
        let outcome = Outcome(
            status: .original, reason: .noAttachment, detail: nil, vendor: read.vendor, attachments: [], warnings: [],
            elapsed: .zero, payload: Data(), notification: content)
        let line = outcome.jsonLine()
        #expect(line.contains(#""launch_image":"Splash""#) && line.contains(#""target_content_id":"room-7""#), "\(line)")
        let encoded = String(decoding: try JSONEncoder().encode(content), as: UTF8.self)
        #expect(encoded.contains(#""launch_image":"Splash""#) && encoded.contains(#""target_content_id":"room-7""#), "\(encoded)")
        let tap = content.shownLines(vendor: nil).first { $0.field == .tap }?.text
        #expect(tap == "the app (its window for room-7), launching with Splash in place of the launch screen")
        let plain = try #require(try ReadPayload(#"{"aps":{"alert":"B"},"ab":{}}"#).content)
        #expect(plain.targetContentID == nil && plain.launchImage == nil && !plain.shownLines(vendor: nil).contains { $0.text.contains("window") })
        let minified = try #require(try ReadPayload(#"{"aps":{"content-available":1,"target-content-id":"x"},"os_data":{"i":"n","buttons":{"m":"B","o":[{"i":"a","n":"A"}]}}}"#).content)
        #expect(minified.targetContentID == nil)
    }
}
