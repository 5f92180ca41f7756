@testable import AttachmentFetcher
import Foundation
import Testing

/// Rules of the vendors' SDKs that decide what a payload shows beyond its documented examples:
/// which of two keys wins, which value silences a push, what an out-of-range value does.
@Suite("Vendor SDK rules: precedence, silencing values, out-of-range numbers", .timeLimit(.minutes(1)))
struct VendorSDKRuleTests {
    @Test("OneSignal Android: pri of any size maps onto −2…2 (Int.min trapped and ended the whole batch)")
    func oneSignalPriorityExtremes() throws {
        for (pri, expected) in [("-9223372036854775808", -2), ("9223372036854775807", 2), ("0", -2), ("11", 2), ("6", 0)] {
            let read = try ReadPayload(#"{"title":"T","alert":"B","pri":"\#(pri)","custom":"{\"i\":\"n\"}"}"#)
            #expect(read.content?.priority == expected, "pri \(pri)")
        }
    }

    @Test("Braze Android: a p outside −2…2 is the default priority (BrazeNotificationUtils.getNotificationPriority), with a warning")
    func brazePriorityOutOfRange() throws {
        for (p, expected, warns) in [("3", 0, true), ("-3", 0, true), ("2", 2, false), ("-2", -2, false)] {
            let read = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","p":"\#(p)"}"#)
            #expect(read.content?.priority == expected, "p \(p)")
            #expect(read.warnings.contains { $0.contains("p is \(p)") } == warns, "\(read.warnings)")
        }
    }

    @Test("FCM Android: a notification_priority outside −2…2 is skipped, a negative notification_count too (NotificationParams), each with a warning")
    func firebaseOutOfRange() throws {
        let read = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.notification_priority":"5","gcm.n.notification_count":"-1"}"#)
        #expect(read.content?.priority == nil)
        #expect(read.content?.badge == nil)
        #expect(read.warnings.contains { $0.contains("gcm.n.notification_priority is 5") }, "\(read.warnings)")
        #expect(read.warnings.contains { $0.contains("gcm.n.notification_count is -1") }, "\(read.warnings)")
        let within = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.notification_priority":"-2","gcm.n.notification_count":"0"}"#)
        #expect(within.content?.priority == -2 && within.content?.badge == .set(0))
        #expect(within.warnings.isEmpty, "\(within.warnings)")
    }

    @Test("Airship Android: the delivery priority \"high\" and any priority that is no 32-bit integer are the default 0 (PushMessage.priority: toInt() fails), the latter with a warning; an integer clamps to −2…2")
    func airshipPriorityRange() throws {
        for (value, expected, warns) in [
            ("3000000000", 0, true), ("high", 0, false), ("urgent", 0, true), ("7", 2, false), ("-2147483648", -2, false), ("-1", -1, false),
        ] {
            let read = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.push.PUSH_ID":"x","com.urbanairship.priority":"\#(value)"}"#)
            #expect(read.vendor == .airship)
            #expect(read.content?.priority == expected, "priority \(value)")
            #expect(read.warnings.contains { $0.hasPrefix("com.urbanairship.priority is '\(value)'") } == warns, "\(read.warnings)")
        }
        let absent = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.push.PUSH_ID":"x"}"#)
        #expect(absent.content?.priority == nil)
    }

    @Test("FCM HTTP v1: a negative notification_count sets no badge, and a notification_priority that is no NotificationPriority name sets no priority, each with a warning")
    func firebaseHTTPv1OutOfRange() throws {
        let read = try ReadPayload(#"{"message":{"notification":{"title":"T"},"android":{"notification":{"notification_count":-1,"notification_priority":"PRIORITY_URGENT"}}}}"#)
        #expect(read.vendor == .firebase && read.content?.badge == nil && read.content?.priority == nil)
        #expect(read.warnings.contains("message.android.notification.notification_count is -1: the FCM SDK sets no count below 0"), "\(read.warnings)")
        #expect(read.warnings.contains { $0.hasPrefix("message.android.notification.notification_priority is 'PRIORITY_URGENT'") }, "\(read.warnings)")
        let bare = try ReadPayload(#"{"notification":{"title":"T"},"android":{"notification":{"notification_count":"-2","notification_priority":"high"}}}"#)
        #expect(bare.content?.badge == nil && bare.content?.priority == nil)
        #expect(bare.warnings.contains("android.notification.notification_count is -2: the FCM SDK sets no count below 0"), "\(bare.warnings)")
        #expect(bare.warnings.contains { $0.hasPrefix("android.notification.notification_priority is 'high'") }, "\(bare.warnings)")
        let within = try ReadPayload(#"{"message":{"notification":{"title":"T"},"android":{"notification":{"notification_count":0,"notification_priority":"PRIORITY_MIN"}}}}"#)
        #expect(within.content?.badge == .set(0) && within.content?.priority == -2 && within.warnings.isEmpty, "\(within.warnings)")
        // The API reads enum names in any case.
        let lower = try ReadPayload(#"{"message":{"notification":{"title":"T"},"android":{"notification":{"notification_priority":"priority_high"}}}}"#)
        #expect(lower.content?.priority == 1 && lower.warnings.isEmpty, "\(lower.warnings)")
        // The enum's own "unspecified" value sets none, as no value does.
        let unspecified = try ReadPayload(#"{"message":{"notification":{"title":"T"},"android":{"notification":{"notification_priority":"PRIORITY_UNSPECIFIED"}}}}"#)
        #expect(unspecified.content?.priority == nil && unspecified.warnings.isEmpty, "\(unspecified.warnings)")
    }

    @Test("Airship Message Center: on Android a rich message id opens its message (beside a deep link), unless the actions do not parse; on iOS only a ^mc action does")
    func airshipMessageCenter() throws {
        let android = #"{"com.urbanairship.push.ALERT":"B","com.urbanairship.push.PUSH_ID":"s","_uamid":"m1"ACTIONS}"#
        func read(_ template: String, _ actions: String) throws -> ReadPayload {
            try ReadPayload(template.replacingOccurrences(of: "ACTIONS", with: actions))
        }
        let plain = try read(android, "")
        #expect(plain.content?.messageCenterID == "m1" && plain.content?.openURL == nil)
        #expect(plain.content?.extras["_uamid"] == nil)
        let deepLink = try read(android, #","com.urbanairship.actions":"{\"^d\":\"myapp://x\"}""#)
        #expect(deepLink.content?.messageCenterID == "m1" && deepLink.content?.openURL == "myapp://x")
        let broken = try read(android, #","com.urbanairship.actions":"{bad""#)
        #expect(broken.content?.messageCenterID == nil)
        let inbox = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.push.PUSH_ID":"s","com.urbanairship.actions":"{\"^mc\":null}"}"#)
        #expect(inbox.content?.messageCenterID == "")

        let ios = #"{"aps":{"alert":"B"},"_":"s","_uamid":"m1"ACTIONS}"#
        let refreshOnly = try read(ios, "")
        #expect(refreshOnly.vendor == .airship)
        #expect(refreshOnly.content?.messageCenterID == nil)
        #expect(refreshOnly.content?.extras["_uamid"] == nil)
        #expect(try read(ios, #","^mc":"auto""#).content?.messageCenterID == "m1")
        #expect(try read(ios, #","open_mc_action":["m2"]"#).content?.messageCenterID == "m2")
        #expect(try read(ios, #","^mc":"""#).content?.messageCenterID == "")
        let encoded = String(decoding: try JSONEncoder().encode(try read(ios, #","^mc":"auto""#).content), as: UTF8.self)
        #expect(encoded.contains(#""message_center_id":"m1""#))
    }

    @Test("CleverTap Android: a Push Templates push (pt_id) is named as not modelled; extras are every data key, as the SDK's click listener receives them, FCM's aside")
    func cleverTapPushTemplates() throws {
        let read = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","pt_id":"pt_basic","pt_title":"Big","k":"v","google.message_id":"0:1"}"#)
        #expect(read.vendor == .cleverTap)
        #expect(read.content?.extras.keys.sorted() == ["k", "nm", "nt", "pt_id", "pt_title", "wzrk_pn"])
        #expect(read.warnings.contains { $0.hasPrefix("pt_id 'pt_basic': CleverTap's Push Templates draw this push") }, "\(read.warnings)")
    }

    @Test("OneSignal Android: bicon and licon are fetched only when, trimmed, they start with http:// or https:// (NotificationDisplayBuilder); anything else names a bundled image")
    func oneSignalAndroidPictureRule() throws {
        func read(_ bicon: String) throws -> ReadPayload {
            try ReadPayload(#"{"alert":"B","bicon":"\#(bicon)","licon":"\#(bicon)","custom":"{\"i\":\"n\",\"u\":\" https://example.com/x \"}"}"#)
        }
        let resource = try read("promo")
        #expect(resource.vendor == .oneSignal && resource.pictureURLs.isEmpty)
        #expect(resource.content?.imageURL == nil && resource.content?.largeIconURL == nil)
        #expect(resource.warnings.contains { $0.contains("bicon 'promo' names an image bundled with the app") }, "\(resource.warnings)")
        let padded = try read("  https://cdn.example.com/a.jpg ")
        #expect(padded.pictureURLs == ["https://cdn.example.com/a.jpg"])
        #expect(padded.content?.imageURL == "https://cdn.example.com/a.jpg" && padded.content?.largeIconURL == "https://cdn.example.com/a.jpg")
        #expect(padded.content?.openURL == "https://example.com/x")
        #expect(try read("HTTPS://cdn.example.com/a.jpg").pictureURLs.isEmpty)
    }

    @Test("OneSignal Android buttons: one o entry without its text drops them all (maximizeButtonsFromBundle); without o, custom.a.actionButtons, which are no extras")
    func oneSignalAndroidButtons() throws {
        let broken = try ReadPayload(#"{"alert":"B","custom":"{\"i\":\"n\"}","o":"[{\"i\":\"yes\",\"n\":\"Yes\"},{\"i\":\"later\"}]"}"#)
        #expect(broken.content?.buttons == [])
        #expect(broken.warnings.contains { $0.contains("o[1] has no text (n)") }, "\(broken.warnings)")
        let actions = try ReadPayload(#"{"alert":"B","custom":"{\"i\":\"n\",\"a\":{\"actionButtons\":[{\"id\":\"y\",\"text\":\"Yes\",\"icon\":\"ic\"}],\"actionId\":\"z\",\"k\":\"v\"}}"}"#)
        #expect(actions.content?.buttons == [Button(id: "y", title: "Yes", tap: .opensApp)])
        #expect(actions.content?.extras == ["k": .string("v")])
    }

    @Test("Iterable: iOS registers a button only with a string identifier and title; Android shows the first three, an identifier missing being empty; a defaultAction that is no object leaves the legacy URL")
    func iterableButtonsAndDefaultAction() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"itbl":{"messageId":"m","actionButtons":[{"identifier":"a"},{"identifier":"b","title":"B"},{"identifier":"c","title":""}]}}"#)
        #expect(ios.content?.buttons.map(\.id) == ["b", "c"])
        #expect(ios.warnings.contains { $0.contains("itbl.actionButtons[0] has no string identifier and title") }, "\(ios.warnings)")
        let android = try ReadPayload(#"{"body":"B","itbl":"{\"actionButtons\":[{\"title\":\"Go\"},{\"identifier\":\"b\"},{\"identifier\":\"c\"},{\"identifier\":\"d\"}]}"}"#)
        #expect(android.vendor == .iterable)
        #expect(android.content?.buttons.map(\.id) == ["", "b", "c"])
        #expect(android.content?.buttons.first?.title == "Go")
        #expect(android.warnings.contains { $0.contains("Iterable's Android SDK shows the first 3") }, "\(android.warnings)")
        let legacyIOS = try ReadPayload(#"{"aps":{"alert":"x"},"itbl":{"messageId":"m","defaultAction":null},"url":"https://old.example.com"}"#)
        #expect(legacyIOS.content?.openURL == "https://old.example.com")
        let legacyAndroid = try ReadPayload(#"{"body":"B","itbl":"{\"defaultAction\":\"x\"}","uri":"https://legacy.example.com"}"#)
        #expect(legacyAndroid.content?.openURL == "https://legacy.example.com")
    }

    @Test("Customer.io Android asks whether a key is there, not whether it is empty: an empty image, title or body is no fallback to FCM's, a blank link no tap target, an empty delivery id still shows; without gcm.n.e FCM's keys are no fallback at all")
    func customerIOPresence() throws {
        let read = try ReadPayload(#"{"title":"","body":"B","gcm.n.title":"FCM","image":"","gcm.n.image":"https://cdn.example.com/f.jpg","link":"  ","CIO-Delivery-ID":"","CIO-Delivery-Token":"t"}"#)
        #expect(read.vendor == .customerIO && read.platform == .android)
        #expect(read.content?.title == nil && read.content?.body == "B")
        #expect(read.pictureURLs.isEmpty && read.content?.imageURL == nil)
        #expect(read.content?.openURL == nil)
        #expect(read.content?.visible == true)
        // FCM's notification (`gcm.n.*`) is no fallback without `gcm.n.e` "1": getNotification() is null then.
        let fallback = try ReadPayload(#"{"body":"B","gcm.n.title":"FCM","gcm.n.image":"https://cdn.example.com/f.jpg","CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#)
        #expect(fallback.content?.title == nil && fallback.pictureURLs.isEmpty, "\(fallback.content?.title ?? "") \(fallback.pictureURLs)")
    }

    @Test("Iterable's ghost-push flag as each SDK reads it: iOS as? Bool (true, 1), Android optBoolean (true, \"true\")", arguments: [
        ("true", true, true), ("1", true, false), (#""1""#, false, false), (#""TRUE""#, false, true), ("false", false, false),
    ])
    func iterableGhostFlag(value: String, iosGhost: Bool, androidGhost: Bool) throws {
        let ios = try ReadPayload(#"{"aps":{"content-available":1},"itbl":{"messageId":"m","isGhostPush":\#(value)}}"#)
        #expect(ios.isInternal == iosGhost, "iOS \(value)")
        let escaped = value.replacingOccurrences(of: "\"", with: "\\\"")
        let android = try ReadPayload(#"{"body":"B","itbl":"{\"isGhostPush\":\#(escaped)}"}"#)
        #expect(android.isInternal == androidGhost, "Android \(value)")
        #expect(android.content?.visible == !androidGhost)
    }

    @Test("An Iterable iOS ghost push with an aps.alert is shown, as iOS shows any alert, with a warning; without one it is internal")
    func iterableGhostWithAlert() throws {
        let shown = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"Hello"},"mutable-content":1},"itbl":{"isGhostPush":true,"campaignId":5,"templateId":6,"messageId":"m-1","attachment-url":"https://cdn.example.com/a.jpg"}}"#)
        #expect(!shown.isInternal && shown.content?.visible == true)
        #expect(shown.content?.body == "Hello" && shown.pictureURLs == ["https://cdn.example.com/a.jpg"])
        #expect(shown.warnings.contains { $0.hasPrefix("itbl.isGhostPush is true, yet aps.alert is set: iOS shows this push") }, "\(shown.warnings)")
        let silent = try ReadPayload(#"{"aps":{"content-available":1},"itbl":{"isGhostPush":true,"messageId":"m-2"},"notificationType":"InAppUpdate"}"#)
        #expect(silent.isInternal && silent.content?.visible == false)
    }

    @Test("MoEngage Android as PushBase 6.6.0 decides (decompiled): no push without a title and message, none for the inbox; a URL only for a web notification, moe_webUrl first; a button needs its title")
    func moEngageAndroidRules() throws {
        let base = #""push_from":"moengage","gcm_campaign_id":"c","gcm_image_url":"https://cdn.example.com/a.jpg""#
        let untitled = try ReadPayload(#"{\#(base),"gcm_notificationType":"gcm_webNotification","gcm_alert":"B"}"#)
        #expect(untitled.content?.visible == false)
        #expect(untitled.warnings.contains { $0.contains("must both be non-blank") }, "\(untitled.warnings)")
        let blank = try ReadPayload(#"{\#(base),"gcm_notificationType":"gcm_webNotification","gcm_title":"  ","gcm_alert":"B"}"#)
        #expect(blank.content?.visible == false)
        let richOnly = try ReadPayload(#"{\#(base),"gcm_notificationType":"n","moeFeatures":"{\"richPush\":{\"title\":\"T\",\"body\":\"B\"}}"}"#)
        #expect(richOnly.content?.visible == true)
        let inbox = try ReadPayload(#"{\#(base),"gcm_notificationType":"n","gcm_title":"T","gcm_alert":"B","moeFeatures":"{\"pushToInbox\":true}"}"#)
        #expect(inbox.content?.visible == false)
        #expect(inbox.warnings.contains { $0.contains("pushToInbox") }, "\(inbox.warnings)")
        let normal = try ReadPayload(#"{\#(base),"gcm_notificationType":"normal notification","gcm_title":"T","gcm_alert":"B","gcm_webUrl":"https://x.example.com"}"#)
        #expect(normal.content?.visible == true && normal.content?.openURL == nil)
        #expect(normal.warnings.contains { $0.contains("only for gcm_notificationType gcm_webNotification") }, "\(normal.warnings)")
        let buttons = try ReadPayload(#"{\#(base),"gcm_notificationType":"n","gcm_title":"T","gcm_alert":"B","gcm_actions":"[{\"action_id\":\"a1\"},{\"action_title\":\"Copy\",\"action_id\":\"a2\"},{\"action_title\":\"Go\"}]"}"#)
        #expect(buttons.content?.buttons == [Button(id: "a2", title: "Copy"), Button(id: "", title: "Go")])
    }

    @Test("A Braze Android push story (ab_c) shows its first page's image in place of ab_iu, which is what is fetched; without ab_c the pages are ignored; a conversation push (ab_cp) is named as not modelled")
    func brazePushStory() throws {
        let story = try ReadPayload(#"{"_ab":"true","t":"Story","a":"Swipe","uri":"myapp://home","ab_iu":"https://cdn.example.com/hero.jpg","ab_c":"true","ab_c0_i":"https://cdn.example.com/p0.jpg","ab_c0_t":"Page 1","ab_c0_st":"Sub 1","ab_c0_uri":"myapp://p0","ab_c1_i":"https://cdn.example.com/p1.jpg","ab_c1_t":"Page 2","ab_c2_i":" "}"#)
        #expect(story.pictureURLs == ["https://cdn.example.com/p0.jpg"])
        #expect(story.content?.imageURL == "https://cdn.example.com/p0.jpg")
        #expect(
            story.warnings.contains {
                $0.hasPrefix("ab_c: a Braze push story of 2 pages: Android shows page 1 (https://cdn.example.com/p0.jpg, 'Page 1' / 'Sub 1') in place of https://cdn.example.com/hero.jpg")
            }, "\(story.warnings)")
        let conversation = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_iu":"https://cdn.example.com/hero.jpg","ab_cp":"true","ab_c_mt0":"Hi","ab_c_rpi":"p1"}"#)
        #expect(
            conversation.warnings == [
                "ab_cp: a Braze conversation push: Android 7.1 (API 25) and later show its messages (ab_c_mt*, not modelled here), not the picture https://cdn.example.com/hero.jpg (which earlier versions show)"
            ], "\(conversation.warnings)")
        let notStory = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_iu":"https://cdn.example.com/hero.jpg","ab_c0_i":"https://cdn.example.com/p0.jpg"}"#)
        #expect(notStory.pictureURLs == ["https://cdn.example.com/hero.jpg"] && notStory.warnings.isEmpty, "\(notStory.warnings)")
    }

    @Test("Airship Android: a big_text or inbox style's summary is the summary line")
    func airshipAndroidStyleSummary() throws {
        let bigText = try ReadPayload(#"{"com.urbanairship.push.PUSH_ID":"s","com.urbanairship.push.ALERT":"B","com.urbanairship.style":"{\"type\":\"big_text\",\"big_text\":\"Long\",\"title\":\"BT\",\"summary\":\"Sum\"}","com.urbanairship.priority":"high","_uamid":"m1","promo":"1"}"#)
        let content = try #require(bigText.content)
        #expect(content.expandedTitle == "BT" && content.expandedText == "Long" && content.summary == "Sum")
        let both = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.summary":"Own","com.urbanairship.style":"{\"type\":\"inbox\",\"lines\":[\"a\",\"b\"],\"summary\":\"Sum\"}"}"#)
        #expect(both.content?.summary == "Own" && both.content?.expandedText == "a\nb")
        #expect(both.warnings.contains { $0.hasPrefix("expanded, the notification shows com.urbanairship.style's summary 'Sum' instead of 'Own'") }, "\(both.warnings)")
    }

    @Test("FCM Android: a deleted-messages notice (message_type deleted_messages) shows nothing")
    func firebaseDeletedMessages() throws {
        let read = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","message_type":"deleted_messages"}"#)
        #expect(read.content?.visible == false)
        #expect(try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B"}"#).content?.visible == true)
    }

    @Test("MoEngage iOS: moengage.webUrl is a rich landing, which the SDK opens in the app (a Safari view controller); app_extra.moe_deeplink is not")
    func moEngageIOSRichLanding() throws {
        let landing = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"}},"moengage":{"cid":"c_L_0","webUrl":"https://www.example.com/"},"moeFeatures":{"richPush":{"defaultActions":[{"name":"navigate","type":"richLanding","value":"https://www.example.com/"}]}}}"#)
        #expect(landing.content?.openURL == "https://www.example.com/" && landing.content?.openInWebview == true)
        let deepLink = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"}},"moengage":{"cid":"c_L_0","webUrl":"https://www.example.com/"},"app_extra":{"moe_deeplink":"myapp://home"}}"#)
        #expect(deepLink.content?.openURL == "myapp://home" && deepLink.content?.openInWebview == false)
    }

    @Test("MoEngage Android's tap target as RedirectionHandler.getDeepLink builds it (decompiled): moe_webUrl when the key is there, else gcm_webUrl with every key of the payload added as a query parameter")
    func moEngageAndroidDeepLink() throws {
        let appended = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_webNotification","gcm_campaign_id":"c1","gcm_title":"T","gcm_alert":"B","gcm_webUrl":"myapp://cart?x=1#top","promo":"SAVE 10/€","n":3}"#)
        #expect(
            appended.content?.openURL
                == "myapp://cart?x=1&push_from=moengage&gcm_notificationType=gcm_webNotification&gcm_campaign_id=c1&gcm_title=T&gcm_alert=B&gcm_webUrl=myapp%3A%2F%2Fcart%3Fx%3D1%23top&promo=SAVE%2010%2F%E2%82%AC&n=3#top")
        #expect(appended.warnings.contains { $0.hasPrefix("without moe_webUrl, MoEngage's SDK opens gcm_webUrl with every key of the payload added") }, "\(appended.warnings)")
        // The key alone decides: an empty moe_webUrl is what the SDK opens (nothing), not gcm_webUrl.
        let empty = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_webNotification","gcm_campaign_id":"c1","gcm_title":"T","gcm_alert":"B","gcm_webUrl":"myapp://cart","moe_webUrl":""}"#)
        #expect(empty.content?.openURL == nil && empty.warnings.isEmpty, "\(empty.warnings)")
        // A button whose extras hold only gcm_webUrl is a rich landing: the SDK's web view.
        let landing = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_webNotification","gcm_campaign_id":"c1","gcm_title":"T","gcm_alert":"B","moe_webUrl":"https://e.com","gcm_actions":"[{\"action_title\":\"Read\",\"action_id\":\"a1\",\"action_tag\":\"m_nav\",\"extras\":{\"gcm_webUrl\":\"https://example.com/article\"}},{\"action_title\":\"Go\",\"action_id\":\"a2\",\"uri\":\"myapp://go\"}]"}"#)
        #expect(landing.content?.buttons == [Button(id: "a1", title: "Read", url: "https://example.com/article", webview: true), Button(id: "a2", title: "Go", url: "myapp://go")])
        #expect(ContentReader.addingPayload(["a": .string("b")], to: "https://e.com/?") == "https://e.com/?a=b")
        #expect(ContentReader.addingPayload(["k": .object(["x": .bool(true)])], to: "https://e.com/p") == "https://e.com/p?k=%7B%22x%22%3Atrue%7D")
    }

    @Test("FCM Android as NotificationParams and CommonNotificationBuilder read it: displayed only with e exactly \"1\" under either prefix; a click_action replaces the link")
    func firebaseDisplayAndClickAction() throws {
        #expect(try ReadPayload(#"{"gcm.n.e":"true","gcm.n.title":"T","gcm.n.body":"B"}"#).content?.visible == false)
        #expect(try ReadPayload(#"{"gcm.n.e":"0","gcm.notification.e":"1","gcm.n.title":"T"}"#).content?.visible == true)
        #expect(try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T"}"#).content?.visible == true)
        let action = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.click_action":"OPEN_ORDER","gcm.n.link":"https://e.com/x"}"#)
        #expect(action.content?.openURL == nil)
        #expect(action.warnings.contains { $0.contains("gcm.n.click_action 'OPEN_ORDER' starts the app's activity") }, "\(action.warnings)")
    }

    @Test("Braze Android: a blank uri opens the app; ab_use_webview is \"true\" in any case, not \"1\"")
    func brazeAndroidTapTarget() throws {
        let blank = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","uri":"  ","ab_use_webview":"TRUE"}"#)
        #expect(blank.content?.openURL == nil && blank.content?.openInWebview == true)
        let one = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","uri":"https://e.com","ab_use_webview":"1"}"#)
        #expect(one.content?.openURL == "https://e.com" && one.content?.openInWebview == false)
    }

    @Test("Airship Android: the notification's category is com.urbanairship.category (PushMessage.category); the interactive type names the buttons alone")
    func airshipAndroidCategory() throws {
        let read = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.category":"promo","com.urbanairship.interactive_type":"ua_yes_no_foreground"}"#)
        #expect(read.content?.category == "promo")
        #expect(read.content?.buttons.map(\.id) == ["yes", "no"])
    }

    @Test("Airship Android: a big_picture style without its picture is not applied (StyleNotificationExtender); the sound key is left to the channel by the current SDK")
    func airshipAndroidStyleAndSound() throws {
        let read = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.style":"{\"type\":\"big_picture\",\"title\":\"BT\",\"summary\":\"BS\"}","com.urbanairship.sound":"chime"}"#)
        #expect(read.content?.expandedTitle == nil && read.content?.expandedText == nil && read.content?.imageURL == nil)
        #expect(read.pictureURLs.isEmpty)
        #expect(read.warnings.contains { $0.contains("big_picture without a big_picture URL") }, "\(read.warnings)")
        #expect(read.warnings.contains { $0.hasPrefix("com.urbanairship.sound is not played by Airship's current SDK") }, "\(read.warnings)")
    }

    @Test("Airship iOS media_attachment as MediaAttachmentPayload decodes it: urls before url, an entry without url dropped; a field of the wrong type or a crop outside 0…1 and nothing applies, no attachment, no content override")
    func airshipMediaAttachmentDecoding() throws {
        func read(_ media: String) throws -> ReadPayload {
            try ReadPayload(#"{"aps":{"alert":"A","mutable-content":1},"_":"s","com.urbanairship.media_attachment":\#(media)}"#)
        }
        let both = try read(#"{"url":"https://c.example/1.jpg","urls":[{"url":"https://c.example/2.jpg","url_id":"b"}]}"#)
        #expect(both.pictureURLs == ["https://c.example/2.jpg"])
        let partial = try read(#"{"urls":[{"url_id":"a"},{"url":"https://c.example/2.jpg"}]}"#)
        #expect(partial.pictureURLs == ["https://c.example/2.jpg"])
        let noURL = try read(#"{"content":{"body":"B2"}}"#)
        #expect(noURL.pictureURLs.isEmpty && noURL.content?.body == "A")
        #expect(noURL.warnings.contains { $0.contains("has neither urls nor url") }, "\(noURL.warnings)")
        for (media, field) in [
            (#"{"url":"https://c.example/a.jpg","options":{"crop":{"x":0,"y":0,"width":1.5,"height":1}},"content":{"title":"T2"}}"#, "options.crop.width"),
            (#"{"url":"https://c.example/a.jpg","options":{"hidden":1},"content":{"title":"T2"}}"#, "options.hidden"),
            (#"{"url":"https://c.example/a.jpg","thumbnail_id":7,"content":{"title":"T2"}}"#, "thumbnail_id"),
        ] {
            let bad = try read(media)
            #expect(bad.pictureURLs.isEmpty, "\(field)")
            #expect(bad.content?.title == nil && bad.content?.body == "A", "\(field)")
            guard case .malformed(let problem)? = bad.recognized?.recognition else {
                Issue.record("\(field): not malformed")
                continue
            }
            #expect(problem.contains(field), "\(problem)")
        }
    }

    @Test("OneSignal iOS, as OSNotification.m parses: os_data.buttons or else actionbuttons in the os_data format (a top-level buttons list is an extra there), the top-level buttons in the original one")
    func oneSignalOSDataButtons() throws {
        let read = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"n","buttons":[{"i":"a","n":"A"}]},"buttons":[{"i":"z","n":"Z"}]}"#)
        #expect(read.content?.buttons == [Button(id: "a", title: "A", tap: .opensApp)])
        #expect(read.content?.extras["buttons"] != nil)
        let topLevel = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"n"},"buttons":[{"i":"z","n":"Z"}]}"#)
        #expect(topLevel.content?.buttons == [])
        let action = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"n"},"actionbuttons":[{"n":"Later"}]}"#)
        #expect(action.content?.buttons == [Button(id: "Later", title: "Later", tap: .opensApp)])
        let original = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"custom":{"i":"n","buttons":[{"i":"c","n":"C"}]},"buttons":[{"i":"z","n":"Z"},{"i":"untitled"}]}"#)
        #expect(original.content?.buttons == [Button(id: "z", title: "Z", tap: .opensApp)])
        // The minified form inside os_data: m, b and o under os_data.buttons when aps has no alert.
        let minified = try ReadPayload(#"{"aps":{"content-available":1},"os_data":{"i":"n","buttons":{"m":{"title":"T","body":"B"},"b":2,"o":[{"i":"ok","n":"OK"}]}}}"#)
        #expect(minified.content?.title == "T" && minified.content?.body == "B" && minified.content?.badge == .set(2))
        #expect(minified.content?.buttons == [Button(id: "ok", title: "OK", tap: .opensApp)])
    }

    @Test("OneSignal iOS: the minified `o` buttons are read only in the minified form (m and no aps.alert)")
    func oneSignalMinifiedButtonsOnly() throws {
        let alert = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"custom":{"i":"n1"},"o":[{"i":"ok","n":"OK"}]}"#)
        #expect(alert.content?.buttons == [])
        let minified = try ReadPayload(#"{"aps":{"content-available":1},"m":{"title":"T","body":"B"},"o":[{"i":"ok","n":"OK"}],"custom":{"i":"n1"}}"#)
        #expect(minified.content?.buttons == [Button(id: "ok", title: "OK", tap: .opensApp)])
    }

    @Test("OneSignal Android: an in-app message preview (custom.a.os_in_app_message_preview_id) is not shown and fetches nothing")
    func oneSignalInAppPreview() throws {
        let read = try ReadPayload(#"{"title":"Preview","alert":"IAM preview","bicon":"https://cdn.example.com/a.jpg","custom":"{\"i\":\"n\",\"a\":{\"os_in_app_message_preview_id\":\"iam-1\"}}"}"#)
        #expect(read.vendor == .oneSignal && read.isInternal && read.content?.visible == false)
        #expect(read.pictureURLs.isEmpty)
    }

    @Test("Iterable iOS: the extension names its button category after itbl.messageId; without one there are no buttons")
    func iterableButtonsNeedMessageID() throws {
        let without = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"itbl":{"campaignId":5,"templateId":6,"actionButtons":[{"identifier":"open","title":"Open"}]}}"#)
        #expect(without.content?.buttons == [])
        #expect(without.warnings.contains { $0.contains("itbl.messageId") }, "\(without.warnings)")
        let with = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"itbl":{"campaignId":5,"templateId":6,"messageId":"m","actionButtons":[{"identifier":"open","title":"Open"}]}}"#)
        #expect(with.content?.buttons == [Button(id: "open", title: "Open", tap: .opensApp)])
        #expect(with.warnings.isEmpty, "\(with.warnings)")
    }

    @Test("CleverTap Android: only wzrk_pn_s equal to \"true\" (any case) silences the push")
    func cleverTapSilentFlag() throws {
        for (value, visible) in [("1", true), ("yes", true), ("false", true), ("true", false), ("TRUE", false)] {
            let read = try ReadPayload(#"{"wzrk_pn":"true","wzrk_pn_s":"\#(value)","nt":"T","nm":"B"}"#)
            #expect(read.content?.visible == visible, "wzrk_pn_s \(value)")
        }
    }

    @Test("CleverTap Android: wzrk_nms is the big picture's summary; without a picture the expanded view is the body's")
    func cleverTapSummaryNeedsPicture() throws {
        let plain = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"Short body","wzrk_nms":"Picture caption"}"#)
        #expect(plain.content?.expandedText == nil)
        let notAPicture = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"Short body","wzrk_nms":"Picture caption","wzrk_bp":"ftp://x/a.jpg"}"#)
        #expect(notAPicture.content?.expandedText == nil)
        let picture = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"Short body","wzrk_nms":"Picture caption","wzrk_bp":"https://cdn.example.com/a.jpg"}"#)
        #expect(picture.content?.expandedText == "Picture caption")
    }

    @Test("Braze Android: a blank ab_nc is no channel (the SDK falls back to its default channel)")
    func brazeBlankChannel() throws {
        let read = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_nc":"   "}"#)
        #expect(read.content?.channel == nil)
    }

    @Test("Airship iOS: the media attachment's content replaces an alert's texts, but makes none where aps has no alert")
    func airshipContentNeedsAlert() throws {
        let read = try ReadPayload(#"{"aps":{"mutable-content":1},"_":"s","com.urbanairship.media_attachment":{"url":"https://cdn.example.com/a.jpg","content":{"title":"T2","body":"B2"}}}"#)
        #expect(read.content?.visible == false && read.content?.title == nil && read.content?.body == nil)
        #expect(read.warnings.contains { $0.contains("aps has none") }, "\(read.warnings)")
        let alert = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"_":"s","com.urbanairship.media_attachment":{"url":"https://cdn.example.com/a.jpg","content":{"title":"T2","body":"B2"}}}"#)
        #expect(alert.content?.title == "T2" && alert.content?.body == "B2" && alert.content?.visible == true)
    }
}
