@testable import AttachmentFetcher
import Foundation
import Testing

/// The content reference's rules that a vendor's SDK applies beyond reading its keys: which pushes
/// it takes as its own, which keys win, which values it ignores. One test per rule, each with the
/// payload that a preflight would otherwise get wrong.
@Suite("Notification content: the vendors' own rules", .timeLimit(.minutes(1)))
struct ContentReferenceTests {
    /// What `PreparedPayload` decides for `text` before any download.
    private func prepare(_ text: String) -> PreparedPayload {
        PreparedPayload(Data(text.utf8), maximumAttachments: 4)
    }

    @Test("Customer.io iOS: without both delivery keys the SDK attaches nothing; the alert still shows")
    func customerIODeliveryKeys() throws {
        for keys in ["", #","CIO-Delivery-ID":"d""#, #","CIO-Delivery-Token":"t""#] {
            let prepared = prepare(#"{"aps":{"alert":"x","mutable-content":1},"CIO":{"push":{"image":"https://cdn.example.com/a.jpg"}}"# + keys + "}")
            #expect(prepared.vendor == .customerIO)
            #expect(prepared.notification?.visible == true)
            guard case .original(let reason, let detail) = prepared.next else {
                Issue.record("fetched without both delivery keys (\(keys))")
                continue
            }
            #expect(reason == .noAttachment)
            #expect(detail.contains("CIO-Delivery-ID") && detail.contains("CIO-Delivery-Token"), "\(detail)")
        }
        let both = prepare(#"{"aps":{"alert":"x","mutable-content":1},"CIO":{"push":{"image":"https://cdn.example.com/a.jpg"}},"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#)
        guard case .download(let requests, platform: .ios) = both.next else {
            Issue.record("not fetched with both delivery keys")
            return
        }
        #expect(requests.map(\.url) == ["https://cdn.example.com/a.jpg"])
        // Nor does it open the push's link: a tap opens the app.
        let link = try ReadPayload(#"{"aps":{"alert":"Hi","mutable-content":1},"CIO":{"push":{"link":"myapp://x"}},"CIO-Delivery-ID":"d"}"#)
        #expect(link.content?.openURL == nil)
        #expect(link.warnings.contains { $0.hasPrefix("CIO.push.link") && $0.contains("CIO-Delivery-Token") }, "\(link.warnings)")
        let linked = try ReadPayload(#"{"aps":{"alert":"Hi","mutable-content":1},"CIO":{"push":{"link":"myapp://x"}},"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#)
        #expect(linked.content?.openURL == "myapp://x" && linked.warnings.isEmpty)
        // On Android its SDK always plays the default sound.
        let android = try ReadPayload(#"{"title":"T","body":"B","CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#)
        #expect(android.content?.sound == "default")
    }

    @Test("iOS aps values have APNs' JSON types: a string badge, score or arguments is ignored with a warning, not coerced")
    func apsTypesAreStrict() throws {
        let read = try ReadPayload(#"{"aps":{"alert":{"body":"x","loc-key":"K","loc-args":"[\"Ann\"]"},"badge":"+1","relevance-score":"0.5"},"ab":{"c":"1"}}"#)
        let content = try #require(read.content)
        #expect(content.badge == nil)
        #expect(content.relevanceScore == nil)
        #expect(content.bodyLocArgs == nil)
        #expect(read.warnings.contains("aps.badge is not an integer: iOS ignores it, and the badge stays as it was"), "\(read.warnings)")
        #expect(read.warnings.contains("aps.relevance-score is not a number"), "\(read.warnings)")
        #expect(read.warnings.contains("aps.alert.loc-args is not an array"), "\(read.warnings)")
        // An `aps` written as a JSON string is not an APNs payload's `aps`.
        let stringAPS = try ReadPayload(#"{"aps":"{\"alert\":\"x\"}","ab":{"c":"1"}}"#)
        #expect(stringAPS.content?.body == nil && stringAPS.warnings.contains("aps is not an object"), "\(stringAPS.warnings)")
        // Android's values are all strings: there a string count is read.
        let android = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_bc":"3"}"#)
        #expect(android.content?.badge == .set(3) && android.warnings.isEmpty)
    }

    @Test("interruption-level and relevance-score outside APNs' values are warnings")
    func apsValueRanges() throws {
        let read = try ReadPayload(#"{"aps":{"alert":"x","interruption-level":"time_sensitive","relevance-score":5},"ab":{"c":"1"}}"#)
        #expect(read.warnings.contains("aps.interruption-level is 'time_sensitive': iOS knows passive, active, time-sensitive and critical"), "\(read.warnings)")
        #expect(read.warnings.contains("aps.relevance-score is 5, outside 0–1"), "\(read.warnings)")
        let good = try ReadPayload(#"{"aps":{"alert":"x","interruption-level":"time-sensitive","relevance-score":0.5},"ab":{"c":"1"}}"#)
        #expect(good.warnings.isEmpty, "\(good.warnings)")
        #expect(good.content?.interruptionLevel == "time-sensitive" && good.content?.relevanceScore == 0.5)
        // A Focus filter may hold the push back: said, for a push that shows something.
        let filtered = try ReadPayload(#"{"aps":{"alert":"x","filter-criteria":"work"},"ab":{"c":"1"}}"#)
        #expect(filtered.warnings == ["aps.filter-criteria is 'work': while a Focus is on for which the app set a filter, iOS shows the push only if the filter admits these criteria"], "\(filtered.warnings)")
        let silent = try ReadPayload(#"{"aps":{"content-available":1,"filter-criteria":"work"},"ab":{"c":"1"}}"#)
        #expect(silent.warnings.isEmpty, "\(silent.warnings)")
    }

    @Test("Iterable iOS: without a numeric templateId and a string messageId the SDK counts no open, and a warning says so; the tap still opens its defaultAction")
    func iterableIOSTracking() throws {
        let tracked = try ReadPayload(#"{"aps":{"alert":"B"},"itbl":{"campaignId":123,"templateId":456,"messageId":"m-1","defaultAction":{"type":"openUrl","data":"https://example.com/x"}}}"#)
        #expect(!tracked.warnings.contains { $0.contains("counts no open") }, "\(tracked.warnings)")
        let proof = try ReadPayload(#"{"aps":{"alert":"B"},"itbl":{"templateId":456,"messageId":"m-1"}}"#)
        #expect(!proof.warnings.contains { $0.contains("counts no open") }, "\(proof.warnings)")
        for itbl in [
            #"{"campaignId":123,"messageId":"m-1","defaultAction":{"type":"openUrl","data":"https://example.com/x"}}"#,
            #"{"campaignId":123,"templateId":"456","messageId":"m-1","defaultAction":{"type":"openUrl","data":"https://example.com/x"}}"#,
            #"{"campaignId":"123","templateId":456,"messageId":"m-1","defaultAction":{"type":"openUrl","data":"https://example.com/x"}}"#,
            #"{"campaignId":123,"templateId":456,"messageId":7,"defaultAction":{"type":"openUrl","data":"https://example.com/x"}}"#,
        ] {
            let read = try ReadPayload(#"{"aps":{"alert":"B"},"itbl":\#(itbl)}"#)
            #expect(read.vendor == .iterable && read.content?.openURL == "https://example.com/x", "\(itbl)")
            #expect(read.warnings.contains { $0.hasPrefix("itbl needs a numeric templateId") && $0.contains("counts no open") }, "\(itbl): \(read.warnings)")
        }
    }

    @Test("OneSignal and Iterable iOS: aps.category, when set, decides the buttons, not the payload's list")
    func categoryOverridesButtons() throws {
        let oneSignal = try ReadPayload(#"{"aps":{"alert":"x","category":"cat1"},"custom":{"i":"n"},"buttons":[{"i":"yes","n":"Yes"}]}"#)
        #expect(oneSignal.content?.buttons == [], "\(oneSignal.content?.buttons ?? [])")
        #expect(oneSignal.warnings.contains { $0.contains("aps.category 'cat1'") && $0.contains("buttons") }, "\(oneSignal.warnings)")
        let iterable = try ReadPayload(#"{"aps":{"alert":"x","category":"cat1"},"itbl":{"messageId":"m","actionButtons":[{"identifier":"open","title":"Open"}]}}"#)
        #expect(iterable.content?.buttons == [])
        #expect(iterable.warnings.contains { $0.contains("aps.category 'cat1'") }, "\(iterable.warnings)")
        // Without a category the payload's buttons are the category the SDK's extension makes.
        let own = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"custom":{"i":"n"},"buttons":[{"i":"yes","n":"Yes"}]}"#)
        #expect(own.content?.buttons == [Button(id: "yes", title: "Yes", tap: .opensApp)] && own.warnings.isEmpty)
    }

    @Test("iOS without aps.mutable-content runs no service extension: OneSignal's badge_inc and buttons, Iterable's buttons and Airship's content override do not happen")
    func noServiceExtension() throws {
        let oneSignal = try ReadPayload(#"{"aps":{"alert":"B","badge":3},"custom":{"i":"n","badge_inc":1},"buttons":[{"i":"yes","n":"Yes"}]}"#)
        let content = try #require(oneSignal.content)
        #expect(content.serviceExtension == false)
        #expect(content.badge == .set(3), "aps.badge stands: \(String(describing: content.badge))")
        #expect(content.buttons == [], "\(content.buttons)")
        #expect(oneSignal.warnings.contains { $0.hasPrefix("custom.badge_inc") && $0.contains("mutable-content") }, "\(oneSignal.warnings)")
        #expect(oneSignal.warnings.contains { $0.contains("1 button in buttons") && $0.contains("mutable-content") }, "\(oneSignal.warnings)")
        // With the extension, its changes are what the phone shows.
        let withExtension = try ReadPayload(#"{"aps":{"alert":"B","badge":3,"mutable-content":1},"custom":{"i":"n","badge_inc":1},"buttons":[{"i":"yes","n":"Yes"}]}"#)
        #expect(withExtension.content?.serviceExtension == true)
        #expect(withExtension.content?.badge == .increment(1))
        #expect(withExtension.content?.buttons == [Button(id: "yes", title: "Yes", tap: .opensApp)] && withExtension.warnings.isEmpty, "\(withExtension.warnings)")
        let iterable = try ReadPayload(#"{"aps":{"alert":"x"},"itbl":{"messageId":"m","actionButtons":[{"identifier":"open","title":"Open"}]}}"#)
        #expect(iterable.content?.buttons == [])
        #expect(iterable.warnings.contains { $0.contains("itbl.actionButtons") && $0.contains("mutable-content") }, "\(iterable.warnings)")
        let airship = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"}},"_":"s","com.urbanairship.media_attachment":{"content":{"title":"T2"}}}"#)
        #expect(airship.content?.title == "T" && airship.content?.body == "B")
        #expect(airship.warnings.contains { $0.hasPrefix("com.urbanairship.media_attachment.content") && $0.contains("mutable-content") }, "\(airship.warnings)")
        // OneSignal's minified form is shown by the SDK itself, without an extension: its buttons stand.
        let minified = try ReadPayload(#"{"aps":{"content-available":1},"m":{"title":"T","body":"B"},"o":[{"i":"ok","n":"OK"}],"custom":{"i":"n"}}"#)
        #expect(minified.content?.buttons == [Button(id: "ok", title: "OK", tap: .opensApp)], "\(minified.warnings)")
        #expect(minified.warnings == [ContentReader.oneSignalShownByTheAppWarning], "\(minified.warnings)")
        // Android needs no extension.
        let android = try ReadPayload(#"{"_ab":"true","t":"T","a":"B"}"#)
        #expect(android.content?.serviceExtension == nil)
    }

    @Test("Airship: the button group (Android interactive_type) or category (iOS aps.category) decides the buttons; interactive_actions gives them actions")
    func airshipButtonGroups() throws {
        func android(_ keys: String) throws -> ReadPayload {
            try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.title":"T"\#(keys)}"#)
        }
        // A built-in group: all its buttons, titled, each with its actions when it has any.
        let builtIn = try android(#","com.urbanairship.interactive_type":"ua_shop_now_share","com.urbanairship.interactive_actions":"{\"share\":{\"^u\":\"https://example.com/s\"}}""#)
        #expect(builtIn.content?.buttons == [Button(id: "shop_now", title: "Shop Now", tap: .opensApp), Button(id: "share", title: "Share", url: "https://example.com/s")])
        #expect(builtIn.warnings.isEmpty, "\(builtIn.warnings)")
        let noActions = try android(#","com.urbanairship.interactive_type":"ua_icons_happy_sad""#)
        #expect(noActions.content?.buttons == [Button(id: "happy", title: "😀", tap: .dismisses), Button(id: "sad", title: "😞", tap: .dismisses)])
        // Actions without a group: Airship adds no buttons.
        let noGroup = try android(#","com.urbanairship.interactive_actions":"{\"yes\":{\"^d\":\"myapp://yes\"}}""#)
        #expect(noGroup.content?.buttons == [])
        #expect(noGroup.warnings.contains { $0.contains("com.urbanairship.interactive_type") && $0.contains("no buttons") }, "\(noGroup.warnings)")
        // A ua_ group Airship does not have: none (apps cannot register ua_ groups).
        let unknown = try android(#","com.urbanairship.interactive_type":"ua_maybe","com.urbanairship.interactive_actions":"{\"yes\":{}}""#)
        #expect(unknown.content?.buttons == [])
        #expect(unknown.warnings.contains { $0.contains("'ua_maybe'") && $0.contains("no buttons") }, "\(unknown.warnings)")
        // The app's own group: its buttons of the actions' ids, titled by the app.
        let own = try android(#","com.urbanairship.interactive_type":"rsvp","com.urbanairship.interactive_actions":"{\"go\":{\"^d\":\"myapp://go\"}}""#)
        #expect(own.content?.buttons == [Button(id: "go", url: "myapp://go")] && own.warnings.isEmpty)

        // iOS: Airship registers the same groups as categories.
        let iOS = try ReadPayload(#"{"aps":{"alert":"B","category":"ua_yes_no_foreground"},"_":"s","com.urbanairship.interactive_actions":{"yes":{"^d":"myapp://yes"}}}"#)
        #expect(iOS.content?.buttons == [Button(id: "yes", title: "Yes", url: "myapp://yes"), Button(id: "no", title: "No", tap: .dismisses)])
        let noCategory = try ReadPayload(#"{"aps":{"alert":"B"},"_":"s","com.urbanairship.interactive_actions":{"yes":{"^d":"myapp://yes"}}}"#)
        #expect(noCategory.content?.buttons == [])
        #expect(noCategory.warnings.contains { $0.contains("aps.category") && $0.contains("no buttons") }, "\(noCategory.warnings)")
    }

    @Test("Braze Android: _ab must be \"true\"; a push with the keys t and a is shown (even empty), whatever sync keys it carries; uninstall tracking never")
    func brazeAndroidDisplayRule() throws {
        // BrazePushReceiver: isBrazePushMessage, then uninstall tracking, then isNotificationMessage
        // (containsKey t && containsKey a); the content card is stored either way.
        for key in [#""ab_cd":"{}""#, #""br_ffr":"true""#, #""br_br":"true""#, #""ab_sync_geos":"true""#, #""ab_push_fetch_test_triggers_key":"true""#] {
            let shown = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_iu":"https://cdn.example.com/a.jpg",\#(key)}"#)
            #expect(shown.vendor == .braze && !shown.isInternal && shown.content?.visible == true, "\(key)")
            #expect(shown.pictureURLs == ["https://cdn.example.com/a.jpg"], "\(key)")
            let silent = try ReadPayload(#"{"_ab":"true",\#(key)}"#)
            #expect(silent.isInternal, "\(key)")
        }
        let uninstall = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","appboy_uninstall_tracking":"true"}"#)
        #expect(uninstall.isInternal)
        let empty = try ReadPayload(#"{"_ab":"true","t":"","a":"50% off","ab_iu":"https://cdn.example.com/a.jpg"}"#)
        #expect(empty.content?.visible == true && empty.content?.title == nil && empty.content?.body == "50% off")
        #expect(empty.pictureURLs == ["https://cdn.example.com/a.jpg"])
        let missing = try ReadPayload(#"{"_ab":"true","a":"B"}"#)
        #expect(missing.content?.visible == false)
        let notBraze = try ReadPayload(#"{"_ab":"false","t":"T","a":"B"}"#)
        #expect(notBraze.vendor == nil)
        #expect(try ReadPayload(#"{"_ab":"TRUE","t":"T","a":"B"}"#).vendor == .braze)
    }

    @Test("Braze's sd and Airship's sound play only before Android 8: from Android 8 the channel's sound plays, and a warning says so")
    func androidSoundBeforeChannels() throws {
        let braze = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_nc":"promos","sd":"d"}"#)
        #expect(braze.content?.sound == "default" && braze.content?.channel == "promos")
        #expect(braze.warnings.contains("Braze's sd plays only before Android 8 (API 26): from Android 8 the sound is the channel's (promos)"), "\(braze.warnings)")
        let airship = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.sound":"chime"}"#)
        #expect(airship.content?.sound == "chime")
        #expect(airship.warnings.contains("com.urbanairship.sound is not played by Airship's current SDK, which leaves the sound to the channel (the default channel); older SDKs play it only before Android 8 (API 26)"), "\(airship.warnings)")
        // FCM's display and CleverTap set the sound on the notification too.
        let fcm = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.sound2":"ding","gcm.n.android_channel_id":"orders","google.message_id":"0:1"}"#)
        #expect(fcm.warnings.contains("FCM's gcm.n.sound2 / gcm.n.sound plays only before Android 8 (API 26): from Android 8 the sound is the channel's (orders)"), "\(fcm.warnings)")
        // No sound named: nothing to say.
        let quiet = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_nc":"promos"}"#)
        #expect(!quiet.warnings.contains { $0.contains("Android 8") })
    }

    @Test("Airship Android's style: big_text and inbox lines are the expanded text; an unknown type applies no style")
    func airshipStyles() throws {
        func styled(_ style: String) throws -> NotificationContent {
            try #require(ReadPayload(#"{"com.urbanairship.push.ALERT":"Short","com.urbanairship.style":"\#(style)"}"#).content)
        }
        let bigText = try styled(#"{\"type\":\"big_text\",\"big_text\":\"The long text\",\"title\":\"Big T\"}"#)
        #expect(bigText.expandedTitle == "Big T" && bigText.expandedText == "The long text" && bigText.body == "Short")
        let inbox = try styled(#"{\"type\":\"inbox\",\"lines\":[\"one\",\"two\"]}"#)
        #expect(inbox.expandedText == "one\ntwo")
        let unknown = try styled(#"{\"type\":\"bigpicture\",\"title\":\"X\",\"summary\":\"Y\"}"#)
        #expect(unknown.expandedTitle == nil && unknown.expandedText == nil)
    }

    @Test("OneSignal Android: oth_chnl is the channel the push asks for; bg_img is said to show only up to Android 11")
    func oneSignalChannelAndBackground() throws {
        let other = try ReadPayload(#"{"alert":"B","oth_chnl":"promos","chnl":"{\"id\":\"news\"}","custom":"{\"i\":\"n\"}"}"#)
        #expect(other.content?.channel == "promos")
        let background = try ReadPayload(#"{"alert":"B","bg_img":"{\"img\":\"https://cdn.example.com/bg.jpg\"}","custom":"{\"i\":\"n\"}"}"#)
        #expect(background.warnings.contains { $0.hasPrefix("bg_img") && $0.contains("Android 11") }, "\(background.warnings)")
    }

    @Test("Iterable: a link that is not https opens only where the app lists its scheme in allowedProtocols")
    func iterableAllowedProtocols() throws {
        let custom = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"itbl":{"defaultAction":{"type":"openUrl","data":"myapp://x"},"actionButtons":[{"identifier":"b","title":"B","action":{"type":"openUrl","data":"http://example.com"}}]}}"#)
        #expect(custom.content?.openURL == "myapp://x")
        #expect(custom.warnings.contains { $0.contains("myapp://x") && $0.contains("allowedProtocols") }, "\(custom.warnings)")
        #expect(custom.warnings.contains { $0.contains("http://example.com") && $0.contains("allowedProtocols") }, "\(custom.warnings)")
        let https = try ReadPayload(#"{"aps":{"alert":"x"},"itbl":{"defaultAction":{"type":"openUrl","data":"https://example.com"}}}"#)
        #expect(!https.warnings.contains { $0.contains("allowedProtocols") }, "\(https.warnings)")
        let android = try ReadPayload(#"{"body":"B","itbl":"{\"messageId\":\"m\"}","uri":"myapp://legacy"}"#)
        #expect(android.warnings.contains { $0.contains("myapp://legacy") && $0.contains("allowedProtocols") }, "\(android.warnings)")
    }

    @Test("An Airship push API request is no device payload: said so, not read as an FCM message")
    func airshipAPIRequest() throws {
        let request = prepare(#"{"audience":{"channel":"c"},"device_types":["ios","android"],"notification":{"ios":{"badge":"+1","alert":"msg","media_attachment":{"url":"https://cdn.example.com/a.gif"}},"android":{"alert":"msg"}}}"#)
        #expect(request.vendor == nil)
        guard case .original(let reason, let detail) = request.next else {
            Issue.record("fetched an API request")
            return
        }
        #expect(reason == .invalidPayload && detail.contains("Airship push API request"), "\(detail)")
    }

    @Test("A payload with no aps and no known vendor gets no warning about aps.mutable-content")
    func noAPSNoExtensionWarning() throws {
        #expect(prepare(#"{"title":"T","body":"B"}"#).warnings.isEmpty)
        #expect(prepare(#"{"aps":{"alert":"x"}}"#).warnings == [PreparedPayload.noExtensionWarning])
    }

    @Test("FCM iOS: a push with FCM's ids but no fcm_options is Firebase's, with nothing to attach")
    func firebaseIOSWithoutOptions() throws {
        let read = try ReadPayload(#"{"aps":{"alert":{"title":"T","body":"B"}},"gcm.message_id":"1","google.c.sender.id":"123","k":"v"}"#)
        #expect(read.vendor == .firebase && read.platform == .ios)
        #expect(read.recognized?.recognition == .noAttachment)
        #expect(read.content?.title == "T" && read.content?.extras == ["k": .string("v")])
    }

    @Test("Iterable: the legacy url is the tap target only when there is no defaultAction; a custom action opens no URL")
    func iterableLegacyURL() throws {
        let custom = try ReadPayload(#"{"aps":{"alert":"x"},"itbl":{"messageId":"m","defaultAction":{"type":"custom","data":"x"}},"url":"https://old"}"#)
        #expect(custom.content?.openURL == nil)
        let legacy = try ReadPayload(#"{"aps":{"alert":"x"},"itbl":{"messageId":"m"},"url":"https://old"}"#)
        #expect(legacy.content?.openURL == "https://old")
    }

    @Test("Iterable Android: a sound is the raw resource IterableNotificationHelper names: an https URL's file name, without its extension either way")
    func iterableSoundURL() throws {
        for (sound, expected) in [
            ("https://cdn.example.com/sounds/chime.wav", "chime"), ("chime.wav", "chime"), ("chime", "chime"),
            ("a.b.mp3", "a.b"), ("http://cdn.example.com/x/bell.mp3", "http://cdn.example.com/x/bell"),
        ] {
            let read = try ReadPayload(#"{"title":"T","body":"B","sound":"\#(sound)","itbl":"{\"messageId\":\"m\"}"}"#)
            #expect(read.content?.sound == expected, "\(sound)")
        }
    }

    @Test("Customer.io Android: the picture falls back to FCM's notification image")
    func customerIOAndroidImageFallback() throws {
        let read = try ReadPayload(#"{"title":"T","body":"B","gcm.n.e":"1","gcm.n.image":"https://c/a.jpg","CIO-Delivery-ID":"d","CIO-Delivery-Token":"t"}"#)
        #expect(read.vendor == .customerIO)
        #expect(read.pictureURLs == ["https://c/a.jpg"])
        #expect(read.content?.imageURL == "https://c/a.jpg")
    }

    @Test("OneSignal Android: sound \"null\" or \"nil\" names no sound, with a warning: silent before Android 8 and in the channel chnl creates, the channel's sound otherwise")
    func oneSignalSilentSound() throws {
        for value in ["null", "nil"] {
            let read = try ReadPayload(#"{"alert":"B","sound":"\#(value)","custom":"{\"i\":\"n\"}"}"#)
            #expect(read.vendor == .oneSignal && read.content?.sound == nil, "\(value)")
            #expect(
                read.warnings == [
                    "sound '\(value)' turns the sound off before Android 8 (API 26) and in the channel that chnl creates; from Android 8 otherwise the sound is the channel's (OneSignal's default channel)"
                ], "\(read.warnings)")
        }
        // A channel the app made plays its own sound.
        let other = try ReadPayload(#"{"alert":"B","sound":"null","oth_chnl":"orders","custom":"{\"i\":\"n\"}"}"#)
        #expect(other.content?.sound == nil && other.content?.channel == "orders")
        #expect(other.warnings.count == 1 && other.warnings.first?.hasSuffix("the sound is the channel's (orders)") == true, "\(other.warnings)")
    }

    @Test("OneSignal Android: a sound's name plays from Android 8 on only in the channel chnl creates with it; without chnl the SDK's default channel, or the app's oth_chnl, plays its own")
    func oneSignalNamedSound() throws {
        let lines = { (read: ReadPayload) in read.content?.shownLines(vendor: .oneSignal).filter { $0.field == .sound }.map(\.text) ?? [] }
        let plain = try ReadPayload(#"{"alert":"B","sound":"chime","custom":"{\"i\":\"n\"}"}"#)
        #expect(plain.content?.sound == "chime")
        #expect(
            plain.warnings == ["OneSignal's sound plays only before Android 8 (API 26): from Android 8 the sound is the channel's (the default channel)"],
            "\(plain.warnings)")
        #expect(lines(plain) == ["the channel's (the default channel); chime before Android 8"])
        let other = try ReadPayload(#"{"alert":"B","sound":"chime","oth_chnl":"orders","custom":"{\"i\":\"n\"}"}"#)
        #expect(other.warnings == ["OneSignal's sound plays only before Android 8 (API 26): from Android 8 the sound is the channel's (orders)"], "\(other.warnings)")
        #expect(lines(other) == ["the channel's (orders); chime before Android 8"])
        // `NotificationChannelManager.createChannel` gives the channel it makes the payload's sound.
        let made = try ReadPayload(#"{"alert":"B","sound":"chime","chnl":"{\"id\":\"promo\"}","custom":"{\"i\":\"n\"}"}"#)
        #expect(made.content?.channel == "promo" && made.warnings.isEmpty, "\(made.warnings)")
        #expect(lines(made) == ["chime"])
    }

    @Test("CleverTap Android: wzrk_hide_large_icon \"true\", in any case, shows no large icon (ico)")
    func cleverTapHideLargeIcon() throws {
        for value in ["true", "TRUE", "True"] {
            let read = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","ico":"https://c/i.png","wzrk_hide_large_icon":"\#(value)"}"#)
            #expect(read.vendor == .cleverTap && read.content?.largeIconURL == nil, "\(value)")
        }
        for value in ["false", "1", "yes", ""] {
            let read = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","ico":"https://c/i.png","wzrk_hide_large_icon":"\#(value)"}"#)
            #expect(read.content?.largeIconURL == "https://c/i.png", "\(value)")
        }
    }

    @Test("CleverTap Android: wzrk_sound is the default sound only for true or the exact string \"true\"; any other string is a raw resource's name, .mp3/.ogg/.wav dropped")
    func cleverTapSoundNames() throws {
        for (value, expected) in [
            (#""true""#, "default" as String?), ("true", "default"), (#""TRUE""#, "TRUE"), (#""false""#, "false"),
            (#""chime.mp3""#, "chime"), (#""chime.ogg""#, "chime"), (#""chime.wav""#, "chime"), (#""chime""#, "chime"),
            (#""""#, nil), ("false", nil),
        ] {
            let read = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_sound":\#(value)}"#)
            #expect(read.vendor == .cleverTap && read.content?.sound == expected, "wzrk_sound \(value)")
            #expect(read.warnings.contains { $0.hasPrefix("CleverTap's wzrk_sound plays only before Android 8") } == (expected != nil), "\(read.warnings)")
        }
    }

    @Test("Replace-by-tag keys: Airship's notification_tag, CleverTap's wzrk_ck, OneSignal's collapse_key (not do_not_collapse) and Braze's custom notification id n fill tag")
    func replacingTags() throws {
        let airship = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.push.PUSH_ID":"s","com.urbanairship.notification_tag":"score"}"#)
        #expect(airship.vendor == .airship && airship.content?.tag == "score" && airship.content?.threadID == nil)
        #expect(airship.content?.extras == [:])

        let cleverTap = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_ck":"order-7"}"#)
        #expect(cleverTap.vendor == .cleverTap && cleverTap.content?.tag == "order-7")

        let oneSignal = try ReadPayload(#"{"alert":"B","collapse_key":"order-7","custom":"{\"i\":\"n\"}"}"#)
        #expect(oneSignal.vendor == .oneSignal && oneSignal.content?.tag == "order-7")
        let notCollapsed = try ReadPayload(#"{"alert":"B","collapse_key":"do_not_collapse","custom":"{\"i\":\"n\"}"}"#)
        #expect(notCollapsed.content?.tag == nil)

        let braze = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","n":"42"}"#)
        #expect(braze.vendor == .braze && braze.content?.tag == "42" && braze.warnings.isEmpty, "\(braze.warnings)")
        // The SDK reads n as a 32-bit integer: anything else is no id of its own.
        for value in ["order", "3000000000"] {
            let read = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","n":"\#(value)"}"#)
            #expect(read.content?.tag == nil, "n \(value)")
            #expect(read.warnings.contains { $0.hasPrefix("n ") }, "\(read.warnings)")
        }
    }

    @Test("Iterable Android: a shown push has priority HIGH (1), as the SDK sets it whatever the payload says")
    func iterablePriority() throws {
        let shown = try ReadPayload(#"{"title":"T","body":"B","itbl":"{\"messageId\":\"m\"}"}"#)
        #expect(shown.vendor == .iterable && shown.content?.visible == true && shown.content?.priority == 1)
        let empty = try ReadPayload(#"{"title":"T","body":"","itbl":"{\"messageId\":\"m\"}"}"#)
        #expect(empty.content?.visible == false && empty.content?.priority == nil)
    }

    @Test("Customer.io Android: extras are every data key but the delivery keys, whether the push is a data or an FCM notification message")
    func customerIOAndroidExtras() throws {
        let keys = #""title":"T","body":"B","link":"myapp://x","image":"https://c/a.jpg","CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","k":"v""#
        let expected: [String: PayloadValue] = [
            "title": .string("T"), "body": .string("B"), "link": .string("myapp://x"), "image": .string("https://c/a.jpg"), "k": .string("v"),
        ]
        let data = try ReadPayload("{" + keys + #","google.message_id":"0:1"}"#)
        #expect(data.vendor == .customerIO && data.content?.extras == expected)
        let message = try ReadPayload("{" + keys + #","gcm.n.e":"1","gcm.n.title":"FT","google.message_id":"0:1"}"#)
        #expect(message.vendor == .customerIO && message.content?.extras == expected)
    }

    @Test("CleverTap iOS: without ct_mediaType its extension attaches nothing (CTNotificationServiceExtension stops there)")
    func cleverTapIOSNeedsMediaType() throws {
        let untyped = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"wzrk_id":"1","ct_mediaUrl":"https://c/a.jpg"}"#)
        #expect(untyped.vendor == .cleverTap && untyped.pictureURLs.isEmpty)
        guard case .notAttached(let why)? = untyped.recognized?.recognition else {
            Issue.record("\(String(describing: untyped.recognized?.recognition))")
            return
        }
        #expect(why.contains("ct_mediaType"))
        // A ct_mediaType that is no string (a number, an object) stops the extension too: it
        // sends it isEqualToString:, which only a string answers.
        for value in ["1", "true", "[\"image\"]", "{}"] {
            let odd = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"wzrk_id":"1","ct_mediaUrl":"https://c/a.jpg","ct_mediaType":\#(value)}"#)
            guard case .notAttached(let why)? = odd.recognized?.recognition else {
                Issue.record("\(value): \(String(describing: odd.recognized?.recognition))")
                continue
            }
            #expect(why.contains("ct_mediaType") && why.contains("string"), "\(why)")
        }
        let typed = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"wzrk_id":"1","ct_mediaUrl":"https://c/a.jpg","ct_mediaType":"image"}"#)
        #expect(typed.pictureURLs == ["https://c/a.jpg"])
    }

    @Test("CleverTap iOS: test payloads (in-app, inbox, ad unit previews) are handled by the SDK and show nothing; with an aps.alert iOS shows them all the same")
    func cleverTapIOSTestPayloads() throws {
        for key in ["wzrk_inapp", "wzrk_inbox", "wzrk_adunit", "wzrk_inapp_s3_url"] {
            let silent = try ReadPayload(#"{"aps":{"content-available":1,"mutable-content":1},"\#(key)":"{}","ct_mediaUrl":"https://c/a.jpg"}"#)
            #expect(silent.vendor == .cleverTap && silent.isInternal, "\(key)")
            let alerted = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"\#(key)":"{}","ct_mediaUrl":"https://c/a.jpg","ct_mediaType":"image"}"#)
            #expect(alerted.vendor == .cleverTap && !alerted.isInternal && alerted.content?.visible == true, "\(key)")
            #expect(alerted.pictureURLs == ["https://c/a.jpg"])
            #expect(alerted.warnings.contains { $0.hasPrefix("\(key) marks an internal push") }, "\(alerted.warnings)")
            // Known by its wzrk_* keys alone, without ct_mediaUrl or wzrk_pn: the same.
            let quietMarked = try ReadPayload(#"{"aps":{"content-available":1},"\#(key)":"{}","wzrk_id":"1"}"#)
            #expect(quietMarked.vendor == .cleverTap && quietMarked.isInternal, "\(key)")
            let alertedMarked = try ReadPayload(#"{"aps":{"alert":"x"},"\#(key)":"{}","wzrk_id":"1"}"#)
            #expect(alertedMarked.vendor == .cleverTap && !alertedMarked.isInternal && alertedMarked.content?.visible == true, "\(key)")
            #expect(alertedMarked.warnings.contains { $0.hasPrefix("\(key) marks an internal push") }, "\(alertedMarked.warnings)")
        }
    }

    @Test("Braze and MoEngage iOS: content-card sync, geofence sync, test-trigger fetch, uninstall tracking and MoEngage's silent push are internal without an aps.alert; with one iOS shows them all the same")
    func brazeIOSInternal() throws {
        for (vendor, key, quietText, alertedText) in [
            (Vendor.braze, "ab.ab_cd", #"{"aps":{"mutable-content":1},"ab":{"ab_cd":"…","att":{"url":"https://c/a.jpg"}}}"#,
             #"{"aps":{"alert":"x","mutable-content":1},"ab":{"ab_cd":"…","att":{"url":"https://c/a.jpg","type":"jpg"}}}"#),
            (.braze, "ab_push_fetch_test_triggers_key", #"{"aps":{"mutable-content":1},"ab":{"att":{"url":"https://c/a.jpg"}},"ab_push_fetch_test_triggers_key":true}"#,
             #"{"aps":{"alert":"x","mutable-content":1},"ab":{"att":{"url":"https://c/a.jpg"}},"ab_push_fetch_test_triggers_key":true}"#),
            (.braze, "ab.ab_sync_geos", #"{"aps":{"content-available":1},"ab":{"ab_sync_geos":true,"att":{"url":"https://c/a.jpg"}}}"#,
             #"{"aps":{"alert":"x","mutable-content":1},"ab":{"ab_sync_geos":true,"att":{"url":"https://c/a.jpg"}}}"#),
            (.moengage, "moengage.silentPush", #"{"aps":{"content-available":1},"moengage":{"silentPush":1,"media-attachment":"https://c/a.jpg"}}"#,
             #"{"aps":{"alert":"x","mutable-content":1},"moengage":{"silentPush":1,"media-attachment":"https://c/a.jpg"}}"#),
        ] {
            let quiet = try ReadPayload(quietText)
            #expect(quiet.vendor == vendor && quiet.isInternal, "\(quietText)")
            let shown = try ReadPayload(alertedText)
            #expect(shown.vendor == vendor && !shown.isInternal && shown.content?.visible == true, "\(alertedText)")
            #expect(shown.pictureURLs == ["https://c/a.jpg"], "\(alertedText)")
            #expect(shown.warnings.contains { $0.hasPrefix("\(key) marks an internal push") }, "\(shown.warnings)")
        }
    }

    @Test("Braze iOS: the campaign id is the top-level c (kept among the extras), else ab.c")
    func brazeIOSCampaign() throws {
        let read = try ReadPayload(#"{"aps":{"alert":"x"},"ab":{"att":{"url":"https://c/a.jpg"}},"c":"camp-1"}"#)
        #expect(read.content?.campaignID == "camp-1")
        #expect(read.content?.extras == ["c": .string("camp-1")])
    }

    @Test("Airship iOS: a push known by its send id `_` alone, or by its metadata alone, opens its actions' deep link and names its send id")
    func airshipMarkedBySendIDOrMetadata() throws {
        let sendID = try ReadPayload(#"{"aps":{"alert":"Sale","mutable-content":1},"_":"send-id","^d":"myapp://sale"}"#)
        #expect(sendID.vendor == .airship && sendID.platform == .ios)
        #expect(sendID.content?.openURL == "myapp://sale")
        #expect(sendID.content?.campaignID == "send-id")
        #expect(sendID.content?.extras == [:])
        let metadata = try ReadPayload(#"{"aps":{"alert":"Sale"},"com.urbanairship.metadata":"m","deep_link_action":"myapp://sale","k":"v"}"#)
        #expect(metadata.vendor == .airship)
        #expect(metadata.content?.openURL == "myapp://sale")
        #expect(metadata.content?.extras == ["k": .string("v")])
        // Airship's remote-data refresh is internal; with an alert iOS shows it all the same.
        let refresh = try ReadPayload(#"{"aps":{"content-available":1},"com.urbanairship.remote-data.update":true}"#)
        #expect(refresh.vendor == .airship && refresh.isInternal)
        let alerted = try ReadPayload(#"{"aps":{"alert":"Sale"},"com.urbanairship.remote-data.update":true,"^d":"myapp://sale"}"#)
        #expect(alerted.vendor == .airship && !alerted.isInternal && alerted.content?.visible == true && alerted.content?.openURL == "myapp://sale")
        #expect(alerted.warnings.contains { $0.hasPrefix("com.urbanairship.remote-data.update marks an internal push") }, "\(alerted.warnings)")
        // An action key alone names no vendor: any app may use `^d` for its own.
        #expect(try ReadPayload(#"{"aps":{"alert":"Sale"},"^d":"myapp://sale"}"#).vendor == nil)
    }

    @Test("Airship: ^w / wallet_action open a URL like ^u")
    func airshipWalletAction() throws {
        let read = try ReadPayload(#"{"aps":{"alert":"x"},"_":"s","com.urbanairship.metadata":"m","^w":"https://w.example/pass"}"#)
        #expect(read.content?.openURL == "https://w.example/pass")
    }

    @Test("MoEngage Android: at most 3 buttons, the rest named in a warning")
    func moEngageButtonLimit() throws {
        let actions = (1...4).map { #"{\"action_title\":\"B\#($0)\",\"action_id\":\"a\#($0)\"}"# }.joined(separator: ",")
        let read = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"n","gcm_campaign_id":"c","gcm_title":"T","gcm_alert":"B","gcm_actions":"[\#(actions)]"}"#)
        #expect(read.content?.buttons.map(\.id) == ["a1", "a2", "a3"])
        #expect(read.warnings.contains { $0.contains("gcm_actions") && $0.contains("3") }, "\(read.warnings)")
    }

    @Test("FCM HTTP v1: an apns block naming its own image is requested for iOS, and said in a warning")
    func firebaseHTTPv1APNsImage() throws {
        let read = try ReadPayload(#"{"message":{"notification":{"title":"T","image":"https://c/a.jpg"},"apns":{"fcm_options":{"image":"https://c/i.gif"}}}}"#)
        #expect(read.vendor == .firebase && read.platform == .android)
        guard case .attachments(let requests)? = read.recognized?.recognition else {
            Issue.record("no attachments: \(String(describing: read.recognized))")
            return
        }
        #expect(requests.map(\.url) == ["https://c/a.jpg", "https://c/i.gif"])
        #expect(requests.map(\.platforms) == [[.android], [.ios]])
        #expect(read.warnings == ["iPhones attach message.apns.fcm_options.image (https://c/i.gif), not the Android picture (https://c/a.jpg)"], "\(read.warnings)")
        let same = try ReadPayload(#"{"message":{"notification":{"title":"T","image":"https://c/a.jpg"},"apns":{"fcm_options":{"image":"https://c/a.jpg"}}}}"#)
        #expect(same.warnings.isEmpty, "\(same.warnings)")
    }

    @Test("MoEngage Android: a rich-push template's own title and body, shown up to Android 11, are said in a warning")
    func moEngageRichPush() throws {
        let read = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"n","gcm_campaign_id":"c","gcm_title":"Plain","gcm_alert":"B","moeFeatures":"{\"richPush\":{\"title\":\"Rich\",\"body\":\"B\"}}"}"#)
        #expect(read.content?.title == "Plain" && read.content?.body == "B")
        #expect(read.warnings == ["Android 11 (API 30) and earlier show moeFeatures.richPush's title 'Rich' instead of 'Plain'"], "\(read.warnings)")
        let same = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"n","gcm_campaign_id":"c","gcm_title":"T","gcm_alert":"B","moeFeatures":"{\"richPush\":{\"title\":\"T\"}}"}"#)
        #expect(same.warnings.isEmpty, "\(same.warnings)")
    }

    @Test("Documented keys read as written: APNs localisation, FCM's legacy prefix, OneSignal's other button lists, Airship's landing page")
    func documentedKeys() throws {
        let localised = try ReadPayload(#"{"aps":{"alert":{"title-loc-key":"T_KEY","title-loc-args":["a"],"subtitle-loc-key":"S_KEY","subtitle-loc-args":["b",2],"loc-key":"B_KEY","loc-args":["c"]}},"ab":{"c":"1"}}"#)
        let content = try #require(localised.content)
        #expect(content.visible && content.titleLocKey == "T_KEY" && content.titleLocArgs == ["a"])
        #expect(content.subtitleLocKey == "S_KEY" && content.subtitleLocArgs == ["b", "2"])
        #expect(content.bodyLocKey == "B_KEY" && content.bodyLocArgs == ["c"] && localised.warnings.isEmpty)

        let legacy = try ReadPayload(#"{"gcm.notification.e":"1","gcm.notification.title":"T","gcm.notification.body":"B","gcm.notification.image":"https://c/a.jpg","gcm.n.link":"https://example.com/l","gcm.n.sound":"chime"}"#)
        #expect(legacy.vendor == .firebase && legacy.content?.visible == true)
        #expect(legacy.content?.title == "T" && legacy.content?.body == "B" && legacy.pictureURLs == ["https://c/a.jpg"])
        #expect(legacy.content?.openURL == "https://example.com/l" && legacy.content?.sound == "chime")

        let wrapped = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"n","buttons":{"o":[{"i":"fav","n":"Favorite"}]}}}"#)
        #expect(wrapped.content?.buttons == [Button(id: "fav", title: "Favorite", tap: .opensApp)])
        // actionbuttons is read in the os_data format only (OSNotification.m's parseOSDataPayload).
        let actionButtons = try ReadPayload(#"{"aps":{"alert":"B","mutable-content":1},"os_data":{"i":"n"},"actionbuttons":[{"n":"Later"}]}"#)
        #expect(actionButtons.content?.buttons == [Button(id: "Later", title: "Later", tap: .opensApp)])

        let landing = try ReadPayload(#"{"aps":{"alert":"x"},"_":"s","com.urbanairship.metadata":"m","^p":"https://example.com/page"}"#)
        #expect(landing.content?.openURL == "https://example.com/page" && landing.content?.openInWebview == true)
    }

    @Test("CleverTap Android: the expanded picture's line (wzrk_nms) defaults to the body")
    func cleverTapSummaryDefault() throws {
        let read = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_bp":"https://c/a.jpg"}"#)
        #expect(read.content?.expandedText == "B" && read.content?.summary == nil)
        let own = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_bp":"https://c/a.jpg","wzrk_nms":"S"}"#)
        #expect(own.content?.expandedText == "S")
        let noPicture = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B"}"#)
        #expect(noPicture.content?.expandedText == nil)
    }

    @Test("Android's expanded view: Braze ab_bt / ab_bs (the body when neither s nor ab_bs, with a picture), Airship's style title and summary")
    func expandedTexts() throws {
        let braze = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","s":"Sub","ab_bt":"Big T","ab_bs":"Big S","ab_iu":"https://c/a.jpg"}"#)
        #expect(braze.content?.expandedTitle == "Big T" && braze.content?.expandedText == "Big S" && braze.content?.summary == "Sub")
        // No big summary: the body with a picture unless there is a summary line (the SDK's rule).
        let body = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_iu":"https://c/a.jpg"}"#)
        #expect(body.content?.expandedTitle == nil && body.content?.expandedText == "B")
        let sub = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","s":"Sub","ab_iu":"https://c/a.jpg"}"#)
        #expect(sub.content?.expandedText == nil)
        let noPicture = try ReadPayload(#"{"_ab":"true","t":"T","a":"B"}"#)
        #expect(noPicture.content?.expandedText == nil)

        let airship = try ReadPayload(
            #"{"com.urbanairship.push.ALERT":"B","com.urbanairship.title":"T","com.urbanairship.summary":"Sub","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"https://c/a.jpg\",\"title\":\"Big T\",\"summary\":\"Big S\"}"}"#)
        #expect(airship.content?.summary == "Sub")
        #expect(airship.content?.expandedTitle == "Big T" && airship.content?.expandedText == "Big S")
        // The style's summary is not the summary line.
        let styleOnly = try ReadPayload(
            #"{"com.urbanairship.push.ALERT":"B","com.urbanairship.style":"{\"type\":\"big_picture\",\"big_picture\":\"https://c/a.jpg\",\"summary\":\"Big S\"}"}"#)
        #expect(styleOnly.content?.summary == nil && styleOnly.content?.expandedText == "Big S")
    }

    @Test("Credentials in a URL among the extras (CleverTap's ct_mediaUrl, Android's wzrk_bp…) are redacted, as in every URL an outcome shows it fetched")
    func extrasURLCredentials() throws {
        let iOS = try ReadPayload(#"{"aps":{"alert":{"body":"B"},"mutable-content":1},"ct_mediaUrl":"http://user:SECRETX@127.0.0.1:8080/a.jpg","ct_mediaType":"image","wzrk_pn":true,"deep":{"list":["https://u:p@cdn.example/x"]}}"#)
        #expect(iOS.content?.extras["ct_mediaUrl"] == .string("http://***@127.0.0.1:8080/a.jpg"), "\(iOS.content?.extras ?? [:])")
        #expect(iOS.content?.extras["deep"] == .object(["list": .array([.string("https://***@cdn.example/x")])]))
        let android = try ReadPayload(#"{"wzrk_pn":"true","nm":"B","wzrk_bp":"https://user:SECRETX@cdn.example/a.jpg","note":"plain text, user:pass@host"}"#)
        #expect(android.content?.extras["wzrk_bp"] == .string("https://***@cdn.example/a.jpg"), "\(android.content?.extras ?? [:])")
        #expect(android.content?.extras["note"] == .string("plain text, user:pass@host"))
    }

    @Test("An FCM Android push with a notification's keys but no gcm.n.e \"1\" shows nothing, and a warning says why")
    func firebaseWithoutDisplayFlag() throws {
        let read = try ReadPayload(#"{"gcm.n.title":"T","gcm.n.body":"B","gcm.n.image":"https://cdn.example/a.jpg","google.c.a.c_id":"1"}"#)
        #expect(read.vendor == .firebase && read.content?.visible == false)
        #expect(read.warnings.contains { $0.hasPrefix("gcm.n.e is not \"1\": the FCM SDK shows nothing of this push itself") }, "\(read.warnings)")
        // A push shown as it should be has no such warning.
        let shown = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.title":"T","google.c.a.c_id":"1"}"#)
        #expect(!shown.warnings.contains { $0.hasPrefix("gcm.n.e") }, "\(shown.warnings)")
    }

    /// Whether `read` has a warning that starts with `prefix` and says the vendor's SDK shows nothing.
    private func warnsNothingShown(_ read: ReadPayload, _ prefix: String) -> Bool {
        read.content?.visible == false && read.warnings.contains { $0.hasPrefix(prefix) && $0.contains("shows nothing") }
    }

    /// Whether `read` shows nothing and has no warning that says so: a silent or internal push.
    private func silentWithoutWarning(_ read: ReadPayload) -> Bool {
        read.content?.visible != true && !read.warnings.contains { $0.contains("shows nothing") }
    }

    @Test("Braze Android: a push with t or a but not both shows nothing, and a warning names the missing key; a silent push has none")
    func brazeWithoutTitleOrBody() throws {
        let noBody = try ReadPayload(#"{"_ab":"true","t":"T","ab_iu":"https://cdn.example.com/a.jpg"}"#)
        #expect(warnsNothingShown(noBody, "a is missing: Braze's SDK"), "\(noBody.warnings)")
        let noTitle = try ReadPayload(#"{"_ab":"true","a":"B"}"#)
        #expect(warnsNothingShown(noTitle, "t is missing: Braze's SDK"), "\(noTitle.warnings)")
        // A silent data push, and an internal one, carry neither key on purpose.
        #expect(silentWithoutWarning(try ReadPayload(#"{"_ab":"true","extra":"{\"sync\":\"1\"}"}"#)))
        #expect(silentWithoutWarning(try ReadPayload(#"{"_ab":"true","t":"T","ab_cd":"x"}"#)))
    }

    @Test("MoEngage Android: without gcm_notificationType or gcm_campaign_id the push shows nothing, and a warning names the key; a silent push has none")
    func moEngageWithoutMandatoryKeys() throws {
        let noCampaign = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"normal notification","gcm_title":"T","gcm_alert":"B"}"#)
        #expect(warnsNothingShown(noCampaign, "gcm_campaign_id is missing: MoEngage's SDK"), "\(noCampaign.warnings)")
        let noType = try ReadPayload(#"{"push_from":"moengage","gcm_campaign_id":"c","gcm_title":"T","gcm_alert":"B"}"#)
        #expect(warnsNothingShown(noType, "gcm_notificationType is missing: MoEngage's SDK"), "\(noType.warnings)")
        #expect(silentWithoutWarning(try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_silentNotification"}"#)))
        let silent = try ReadPayload(#"{"push_from":"moengage","gcm_notificationType":"gcm_silentNotification","gcm_campaign_id":"c1"}"#)
        #expect(silent.content?.visible == false && silent.warnings.isEmpty, "\(silent.warnings)")
    }

    @Test("Iterable Android: a push that is no ghost push with an empty or missing body shows nothing, and a warning says so; a ghost push has none")
    func iterableWithoutBody() throws {
        let empty = try ReadPayload(#"{"title":"T","body":"","itbl":"{\"messageId\":\"m\"}"}"#)
        #expect(warnsNothingShown(empty, "body is empty: Iterable's SDK"), "\(empty.warnings)")
        let missing = try ReadPayload(#"{"title":"T","itbl":"{\"messageId\":\"m\"}"}"#)
        #expect(warnsNothingShown(missing, "body is missing: Iterable's SDK"), "\(missing.warnings)")
        #expect(silentWithoutWarning(try ReadPayload(#"{"itbl":"{\"isGhostPush\":true}","notificationType":"InAppRemove","messageId":"m-2"}"#)))
    }

    @Test("CleverTap Android: a push with a title or picture but no nm shows nothing, and a warning says so; the silent flag and the empty-nm ping have none")
    func cleverTapWithoutBody() throws {
        let noBody = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","wzrk_bp":"https://cdn.example.com/a.jpg"}"#)
        #expect(warnsNothingShown(noBody, "nm is missing: CleverTap's SDK"), "\(noBody.warnings)")
        let emptyBody = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":""}"#)
        #expect(warnsNothingShown(emptyBody, "nm is empty: CleverTap's SDK"), "\(emptyBody.warnings)")
        #expect(silentWithoutWarning(try ReadPayload(#"{"wzrk_pn":"true","nm":"","pf":"240"}"#)))
        #expect(silentWithoutWarning(try ReadPayload(#"{"wzrk_pn":"true","wzrk_pn_s":"true","nt":"T","wzrk_id":"1"}"#)))
    }

    @Test("OneSignal Android: a push with a title or picture but no alert shows nothing, and a warning says so; a data push and an in-app preview have none")
    func oneSignalWithoutAlert() throws {
        let noAlert = try ReadPayload(#"{"title":"T","bicon":"https://cdn.example.com/a.jpg","custom":"{\"i\":\"n\"}"}"#)
        #expect(warnsNothingShown(noAlert, "alert is missing: OneSignal's SDK"), "\(noAlert.warnings)")
        #expect(silentWithoutWarning(try ReadPayload(#"{"custom":"{\"i\":\"n\",\"a\":{\"sync\":\"1\"}}"}"#)))
        #expect(silentWithoutWarning(try ReadPayload(#"{"title":"T","alert":"B","custom":"{\"i\":\"n\",\"a\":{\"os_in_app_message_preview_id\":\"p\"}}"}"#)))
    }

    @Test("Airship Android: a push with a title but no com.urbanairship.push.ALERT shows nothing, and a warning says so; a ping has none")
    func airshipWithoutAlert() throws {
        let noAlert = try ReadPayload(#"{"com.urbanairship.title":"T","com.urbanairship.push.ALERT":""}"#)
        #expect(warnsNothingShown(noAlert, "com.urbanairship.push.ALERT is empty: Airship's SDK"), "\(noAlert.warnings)")
        #expect(silentWithoutWarning(try ReadPayload(#"{"com.urbanairship.push.PING":"true"}"#)))
    }

    @Test("Customer.io Android: with one delivery key but not the other the push shows nothing, and a warning names the missing key")
    func customerIOWithoutBothDeliveryKeys() throws {
        let noToken = try ReadPayload(#"{"title":"T","body":"B","CIO-Delivery-ID":"d"}"#)
        #expect(warnsNothingShown(noToken, "CIO-Delivery-Token is missing: Customer.io's SDK"), "\(noToken.warnings)")
        let noID = try ReadPayload(#"{"title":"T","body":"B","CIO-Delivery-Token":"t"}"#)
        #expect(warnsNothingShown(noID, "CIO-Delivery-ID is missing: Customer.io's SDK"), "\(noID.warnings)")
    }

    @Test("OneSignal Android keys without custom: no vendor is recognised, and the detail says OneSignal's SDK takes a push only with custom holding i")
    func oneSignalWithoutCustom() throws {
        for (payload, state) in [
            (#"{"title":"T","alert":"B","bicon":"https://cdn.example.com/a.jpg"}"#, "custom is missing"),
            (#"{"title":"T","alert":"B","custom":"{\"u\":\"https://example.com\"}"}"#, "custom holds no i"),
        ] {
            let prepared = prepare(payload)
            #expect(prepared.vendor == nil)
            guard case .original(let reason, let detail) = prepared.next else {
                Issue.record("fetched: \(payload)")
                continue
            }
            #expect(reason == .noAttachment)
            #expect(detail.contains("OneSignal's SDK takes a push only when custom") && detail.contains(state), "\(detail)")
        }
        // A data map of no vendor's keys keeps the plain detail.
        guard case .original(_, let plain) = prepare(#"{"k":"v"}"#).next else { return }
        #expect(plain == "no known vendor's attachment keys")
    }

    /// The Android payload of `vendor` that shows "T" / "B", with `keys` (`"key":"value",…`) added.
    private func android(_ vendor: Vendor, _ keys: String) throws -> ReadPayload {
        let base: String
        switch vendor {
        case .braze: base = #""_ab":"true","t":"T","a":"B""#
        case .firebase: base = #""gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B""#
        case .cleverTap: base = #""wzrk_pn":"true","nt":"T","nm":"B""#
        case .oneSignal: base = #""title":"T","alert":"B","custom":"{\"i\":\"n\"}""#
        case .airship: base = #""com.urbanairship.push.ALERT":"B","com.urbanairship.title":"T""#
        case .moengage: base = #""push_from":"moengage","gcm_notificationType":"n","gcm_campaign_id":"c","gcm_title":"T","gcm_alert":"B""#
        case .iterable: base = #""title":"T","body":"B","itbl":"{\"messageId\":\"m\"}""#
        default: base = ""
        }
        let read = try ReadPayload("{" + base + (keys.isEmpty ? "" : "," + keys) + "}")
        #expect(read.vendor == vendor && read.platform == .android, "\(keys)")
        return read
    }

    @Test("Android accent colour: each vendor's key read as its SDK reads it, written #AARRGGBB; what the SDK cannot parse is a warning")
    func accentColour() throws {
        // Braze's `ac` is a decimal ARGB number, unsigned or as a signed 32-bit int.
        #expect(try android(.braze, #""ac":"4278190335""#).content?.accentColor == "#FF0000FF")
        #expect(try android(.braze, #""ac":"-16776961""#).content?.accentColor == "#FF0000FF")
        let brazeHex = try android(.braze, ##""ac":"#FF0000""##)
        #expect(brazeHex.content?.accentColor == nil && brazeHex.warnings.contains { $0.hasPrefix("ac '#FF0000' is not a decimal") }, "\(brazeHex.warnings)")
        let brazeWide = try android(.braze, #""ac":"4294967297""#)
        #expect(brazeWide.content?.accentColor == "#00000001" && brazeWide.warnings.contains { $0.hasPrefix("ac 4294967297 ") }, "\(brazeWide.warnings)")
        // FCM's `gcm.n.color` through Color.parseColor: #RRGGBB (alpha FF), #AARRGGBB, a name.
        let fcm = try android(.firebase, ##""gcm.n.color":"#00ff00""##)
        #expect(fcm.content?.accentColor == "#FF00FF00" && fcm.warnings.isEmpty, "\(fcm.warnings)")
        #expect(try android(.firebase, ##""gcm.n.color":"#8000FF00""##).content?.accentColor == "#8000FF00")
        #expect(try android(.firebase, #""gcm.n.color":"Teal""#).content?.accentColor == "#FF008080")
        let fcmShort = try android(.firebase, ##""gcm.n.color":"#0f0""##)
        #expect(fcmShort.content?.accentColor == nil && fcmShort.warnings.contains { $0.hasPrefix("gcm.n.color '#0f0' ") }, "\(fcmShort.warnings)")
        // The same key of an HTTP v1 message.
        let v1 = try ReadPayload(##"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"color":"#336699"}}}}"##)
        #expect(v1.content?.accentColor == "#FF336699" && v1.warnings.isEmpty, "\(v1.warnings)")
        let v1Bad = try ReadPayload(#"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"color":"rgb(1,2,3)"}}}}"#)
        #expect(v1Bad.content?.accentColor == nil && v1Bad.warnings.contains { $0.hasPrefix("message.android.notification.color 'rgb(1,2,3)' ") }, "\(v1Bad.warnings)")
        // CleverTap's `wzrk_clr`: its SDK calls Color.parseColor unguarded, and shows nothing when it throws.
        #expect(try android(.cleverTap, ##""wzrk_clr":"#80FF0000""##).content?.accentColor == "#80FF0000")
        let cleverTap = try android(.cleverTap, #""wzrk_clr":"orange""#)
        #expect(cleverTap.content?.accentColor == nil && cleverTap.content?.visible == false)
        #expect(cleverTap.warnings.contains { $0.hasPrefix("wzrk_clr 'orange' ") }, "\(cleverTap.warnings)")
        // OneSignal's `bgac` is hexadecimal ARGB without '#'.
        #expect(try android(.oneSignal, #""bgac":"FFFF0000""#).content?.accentColor == "#FFFF0000")
        let oneSignalHash = try android(.oneSignal, ##""bgac":"#FFFF0000""##)
        #expect(oneSignalHash.content?.accentColor == nil && oneSignalHash.warnings.contains { $0.hasPrefix("bgac '#FFFF0000' ") }, "\(oneSignalHash.warnings)")
        let oneSignalShort = try android(.oneSignal, #""bgac":"FF0000""#)
        #expect(oneSignalShort.content?.accentColor == "#00FF0000" && oneSignalShort.warnings.contains { $0.hasPrefix("bgac 'FF0000' ") }, "\(oneSignalShort.warnings)")
        // Airship's `com.urbanairship.icon_color` through Color.parseColor.
        #expect(try android(.airship, ##""com.urbanairship.icon_color":"#ff9900""##).content?.accentColor == "#FFFF9900")
        let airship = try android(.airship, #""com.urbanairship.icon_color":"ff9900""#)
        #expect(airship.content?.accentColor == nil && airship.warnings.contains { $0.hasPrefix("com.urbanairship.icon_color 'ff9900' ") }, "\(airship.warnings)")
        // A colour of 0 is Android's COLOR_DEFAULT: no colour of the notification's own.
        let zero = try android(.firebase, ##""gcm.n.color":"#00000000""##)
        #expect(zero.content?.accentColor == nil && zero.warnings.contains { $0.hasPrefix("gcm.n.color '#00000000' ") }, "\(zero.warnings)")
        // iOS has no accent colour: the same key there is an extra.
        let ios = try ReadPayload(#"{"aps":{"alert":"B"},"ab":{},"ac":"4278190335"}"#)
        #expect(ios.content?.accentColor == nil && ios.content?.extras == ["ac": .string("4278190335")])
    }

    @Test("Android accent colour with alpha 00: a warning for every vendor's key, naming the opaque colour as that key writes it")
    func transparentAccentColour() throws {
        for (vendor, keys, opaque) in [
            (Vendor.braze, #""ac":"16711680""#, "4294901760"),
            (.firebase, ##""gcm.n.color":"#00FF0000""##, "#FFFF0000"),
            (.airship, ##""com.urbanairship.icon_color":"#00FF0000""##, "#FFFF0000"),
            (.cleverTap, ##""wzrk_clr":"#00FF0000""##, "#FFFF0000"),
            (.oneSignal, #""bgac":"00FF0000""#, "FFFF0000"),
        ] {
            let read = try android(vendor, keys)
            #expect(read.content?.accentColor == "#00FF0000", "\(keys)")
            #expect(
                read.warnings.contains { $0.contains("has alpha 00") && $0.contains("fully transparent") && $0.contains("the opaque colour is \(opaque)") },
                "\(keys): \(read.warnings)")
        }
        let v1 = try ReadPayload(##"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"color":"#00336699"}}}}"##)
        #expect(v1.warnings.contains { $0.hasPrefix("message.android.notification.color '#00336699' has alpha 00") && $0.contains("#FF336699") }, "\(v1.warnings)")
        // An opaque colour, or one half transparent, is no mistake.
        #expect(try android(.braze, #""ac":"4294901760""#).warnings.isEmpty)
        #expect(try android(.firebase, ##""gcm.n.color":"#80FF0000""##).warnings.isEmpty)
    }

    @Test("FCM HTTP v1 android.notification.visibility: PRIVATE, PUBLIC and SECRET are Android's; VISIBILITY_UNSPECIFIED sets none; another value fails the send; an enum given by its number is sent, and not read")
    func firebaseHTTPv1Visibility() throws {
        func read(_ value: String) throws -> ReadPayload {
            try ReadPayload(#"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"visibility":"\#(value)"}}}}"#)
        }
        #expect(try read("PRIVATE").content?.lockScreenVisibility == .private)
        #expect(try read("PUBLIC").content?.lockScreenVisibility == .public)
        #expect(try read("SECRET").content?.lockScreenVisibility == .secret)
        let unspecified = try read("VISIBILITY_UNSPECIFIED")
        #expect(unspecified.content?.lockScreenVisibility == nil && unspecified.warnings.isEmpty, "\(unspecified.warnings)")
        let hidden = try read("HIDDEN")
        #expect(hidden.content?.lockScreenVisibility == nil)
        #expect(
            hidden.warnings.contains { $0.hasPrefix("message.android.notification.visibility is 'HIDDEN'") && $0.contains("the send fails") },
            "\(hidden.warnings)")
        // An enum's number is a value the API's JSON accepts (proto3): not a refused send, but
        // one this reading does not map.
        for (field, number) in [("visibility", "2"), ("notification_priority", "4")] {
            let numbered = try ReadPayload(#"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"\#(field)":\#(number)}}}}"#)
            #expect(numbered.content?.lockScreenVisibility == nil && numbered.content?.priority == nil)
            #expect(!numbered.warnings.contains { $0.contains("the send fails") }, "\(numbered.warnings)")
            #expect(
                numbered.warnings.contains { $0.hasPrefix("message.android.notification.\(field) is the number \(number)") && $0.contains("by its name") },
                "\(numbered.warnings)")
        }
    }

    @Test("FCM: a notification with a picture and no text is shown on Android (the FCM SDK draws it whatever its text), with a warning that it has none")
    func firebasePictureWithoutText() throws {
        let noText = "Android shows the picture under the app's name alone, without text"
        let v1 = try ReadPayload(#"{"message":{"notification":{"image":"https://c/a.jpg"}}}"#)
        #expect(v1.content?.visible == true && v1.content?.imageURL == "https://c/a.jpg")
        #expect(v1.warnings.contains { $0.hasPrefix("message.notification.title and message.notification.body are missing: \(noText)") }, "\(v1.warnings)")
        let specific = try ReadPayload(#"{"android":{"notification":{"image":"https://c/a.jpg"}}}"#)
        #expect(specific.content?.visible == true)
        #expect(specific.warnings.contains { $0.hasPrefix("notification.title and notification.body are missing: \(noText)") }, "\(specific.warnings)")
        let device = try ReadPayload(#"{"gcm.n.e":"1","gcm.n.image":"https://c/a.jpg","google.message_id":"0:1"}"#)
        #expect(device.content?.visible == true)
        #expect(device.warnings.contains { $0.hasPrefix("gcm.n.title and gcm.n.body are missing: \(noText)") }, "\(device.warnings)")
        // With a text, or with a title only, no such warning.
        let titled = try ReadPayload(#"{"message":{"notification":{"title":"T","image":"https://c/a.jpg"}}}"#)
        #expect(titled.content?.visible == true && !titled.warnings.contains { $0.contains(noText) }, "\(titled.warnings)")
        // Nothing to show at all: still nothing shown.
        let empty = try ReadPayload(#"{"message":{"notification":{}}}"#)
        #expect(empty.content?.visible == false)
    }

    @Test("Android's public version: what a secure lock screen shows of a private notification, from Braze's ab_pn and Airship's public_notification; a warning when it is never shown or cannot be read")
    func publicVersion() throws {
        // Braze: {t, a, s}; without ab_vs the notification is private (Android's default).
        let braze = try android(.braze, #""ab_pn":"{\"t\":\"New offer\",\"a\":\"Unlock to see it\",\"s\":\"Deals\"}""#)
        #expect(braze.content?.publicVersion == NotificationContent.PublicVersion(title: "New offer", text: "Unlock to see it", summary: "Deals"))
        #expect(braze.warnings.isEmpty, "\(braze.warnings)")
        let brazePublic = try android(.braze, #""ab_vs":"1","ab_pn":"{\"t\":\"New offer\"}""#)
        #expect(brazePublic.content?.publicVersion?.title == "New offer")
        #expect(brazePublic.warnings == ["ab_pn is never shown: the notification is public on the lock screen (shown in full)"], "\(brazePublic.warnings)")
        let brazeSecret = try android(.braze, #""ab_vs":"-1","ab_pn":"{\"t\":\"New offer\"}""#)
        #expect(brazeSecret.warnings == ["ab_pn is never shown: the notification is secret on the lock screen (not shown on a secure lock screen)"], "\(brazeSecret.warnings)")
        // An empty object sets none (BrazeNotificationUtils returns on an empty bundle).
        let brazeEmpty = try android(.braze, #""ab_pn":"{}""#)
        #expect(brazeEmpty.content?.publicVersion == nil && brazeEmpty.warnings.isEmpty, "\(brazeEmpty.warnings)")
        let brazeBroken = try android(.braze, #""ab_pn":"{\"t\":""#)
        #expect(brazeBroken.content?.publicVersion == nil)
        #expect(brazeBroken.warnings.contains { $0.hasPrefix("ab_pn") }, "\(brazeBroken.warnings)")
        // Airship: {title, alert, summary}, used only when the notification is private (Airship's default is public).
        let airship = try android(
            .airship, #""com.urbanairship.visibility":"0","com.urbanairship.public_notification":"{\"title\":\"T2\",\"alert\":\"A2\",\"summary\":\"S2\"}""#)
        #expect(airship.content?.publicVersion == NotificationContent.PublicVersion(title: "T2", text: "A2", summary: "S2"))
        #expect(airship.warnings.isEmpty, "\(airship.warnings)")
        let airshipDefault = try android(.airship, #""com.urbanairship.public_notification":"{\"title\":\"T2\"}""#)
        #expect(
            airshipDefault.warnings == ["com.urbanairship.public_notification is never shown: the notification is public on the lock screen (shown in full)"],
            "\(airshipDefault.warnings)")
    }

    @Test("Android dismissal: FCM's sticky keeps a notification after a tap; Braze's nd (ms, from 1000) and CleverTap's wzrk_dismiss (s) remove it after a time; values the SDKs skip are warnings")
    func dismissal() throws {
        #expect(try android(.firebase, #""gcm.n.sticky":"true""#).content?.staysAfterTap == true)
        #expect(try android(.firebase, #""gcm.n.sticky":"1""#).content?.staysAfterTap == true)
        #expect(try android(.firebase, #""gcm.n.sticky":"false""#).content?.staysAfterTap == nil)
        #expect(try android(.firebase, "").content?.staysAfterTap == nil)
        let v1 = try ReadPayload(#"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"sticky":true}}}}"#)
        #expect(v1.content?.staysAfterTap == true)
        let braze = try android(.braze, #""nd":"30000""#)
        #expect(braze.content?.dismissAfterSeconds == 30 && braze.warnings.isEmpty, "\(braze.warnings)")
        let brazeShort = try android(.braze, #""nd":"500""#)
        #expect(brazeShort.content?.dismissAfterSeconds == nil)
        #expect(brazeShort.warnings == ["nd is 500 ms, under 1000: Braze's SDK sets no timer, and the notification stays"], "\(brazeShort.warnings)")
        let brazeText = try android(.braze, #""nd":"soon""#)
        #expect(brazeText.content?.dismissAfterSeconds == nil)
        #expect(brazeText.warnings.contains { $0.hasPrefix("nd 'soon' is not an integer") }, "\(brazeText.warnings)")
        let cleverTap = try android(.cleverTap, #""wzrk_dismiss":"45""#)
        #expect(cleverTap.content?.dismissAfterSeconds == 45 && cleverTap.warnings.isEmpty, "\(cleverTap.warnings)")
        let cleverTapText = try android(.cleverTap, #""wzrk_dismiss":"1.5""#)
        #expect(cleverTapText.content?.dismissAfterSeconds == nil)
        #expect(cleverTapText.warnings.contains { $0.hasPrefix("wzrk_dismiss '1.5' is not an integer") }, "\(cleverTapText.warnings)")
    }

    @Test("Android ongoing: CleverTap's wzrk_sticky \"true\" (any case) makes the notification ongoing, which its SDK does from Android 14 on")
    func ongoing() throws {
        let sticky = try android(.cleverTap, #""wzrk_sticky":"TRUE""#)
        #expect(sticky.content?.ongoing == true)
        #expect(sticky.warnings == ["wzrk_sticky: CleverTap's SDK makes the notification ongoing (kept by Clear all) on Android 14 (API 34) and later only; earlier versions ignore it"], "\(sticky.warnings)")
        #expect(try android(.cleverTap, #""wzrk_sticky":true"#).content?.ongoing == true)
        #expect(try android(.cleverTap, #""wzrk_sticky":"1""#).content?.ongoing == nil)
        #expect(try android(.cleverTap, "").content?.ongoing == nil)
        #expect(try android(.firebase, "").content?.ongoing == nil)
    }

    @Test("CleverTap Android: wzrk_gif (an http(s) URL) is the picture on Android 14 and later, a warning names both")
    func cleverTapGIF() throws {
        let gif = try android(.cleverTap, #""wzrk_bp":"https://cdn.example.com/still.png","wzrk_gif":"https://cdn.example.com/moving.gif""#)
        #expect(gif.content?.imageURL == "https://cdn.example.com/still.png")
        #expect(
            gif.warnings == ["wzrk_gif: on Android 14 (API 34) and later CleverTap's SDK shows https://cdn.example.com/moving.gif (animated) in place of wzrk_bp, and wzrk_bp when that GIF cannot be loaded; earlier versions show wzrk_bp"],
            "\(gif.warnings)")
        let notHTTP = try android(.cleverTap, #""wzrk_gif":"moving.gif""#)
        #expect(notHTTP.warnings == ["wzrk_gif 'moving.gif' does not start with http: CleverTap's SDK ignores it"], "\(notHTTP.warnings)")
    }

    @Test("Android small icon: the drawable's name from FCM's gcm.n.icon (and HTTP v1's icon), OneSignal's sicon, Airship's icon")
    func smallIcon() throws {
        #expect(try android(.firebase, #""gcm.n.icon":"ic_stat_sale""#).content?.smallIcon == "ic_stat_sale")
        let v1 = try ReadPayload(#"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"icon":"ic_v1"}}}}"#)
        #expect(v1.content?.smallIcon == "ic_v1")
        let v1Number = try ReadPayload(#"{"message":{"notification":{"title":"T","body":"B"},"android":{"notification":{"icon":7}}}}"#)
        #expect(
            v1Number.content?.smallIcon == nil
                && v1Number.warnings.contains { $0.hasPrefix("message.android.notification.icon is not a string: FCM's HTTP v1 API") && $0.contains("the send fails") },
            "\(v1Number.warnings)")
        #expect(try android(.oneSignal, #""sicon":"ic_os""#).content?.smallIcon == "ic_os")
        #expect(try android(.airship, #""com.urbanairship.icon":"ic_ua""#).content?.smallIcon == "ic_ua")
        #expect(try android(.braze, "").content?.smallIcon == nil)
    }

    @Test("Android lock-screen visibility: public, private or secret, as each SDK reads its key; a value out of −1…1 or not a number is a warning")
    func lockScreenVisibility() throws {
        typealias Visibility = NotificationContent.LockScreenVisibility
        // Braze's `ab_vs`: an invalid value sets none.
        #expect(try android(.braze, #""ab_vs":"-1""#).content?.lockScreenVisibility == .secret)
        let brazeHigh = try android(.braze, #""ab_vs":"2""#)
        #expect(brazeHigh.content?.lockScreenVisibility == nil && brazeHigh.warnings.contains { $0.hasPrefix("ab_vs is 2") }, "\(brazeHigh.warnings)")
        let brazeWord = try android(.braze, #""ab_vs":"secret""#)
        #expect(brazeWord.content?.lockScreenVisibility == nil && brazeWord.warnings.contains { $0.hasPrefix("ab_vs 'secret' ") }, "\(brazeWord.warnings)")
        // FCM's `gcm.n.visibility`: skipped out of range.
        #expect(try android(.firebase, #""gcm.n.visibility":"0""#).content?.lockScreenVisibility == .private)
        let fcmHigh = try android(.firebase, #""gcm.n.visibility":"5""#)
        #expect(fcmHigh.content?.lockScreenVisibility == nil && fcmHigh.warnings.contains { $0.hasPrefix("gcm.n.visibility is 5") }, "\(fcmHigh.warnings)")
        let fcmWord = try android(.firebase, #""gcm.n.visibility":"public""#)
        #expect(fcmWord.content?.lockScreenVisibility == nil && fcmWord.warnings.contains { $0.hasPrefix("gcm.n.visibility 'public' ") }, "\(fcmWord.warnings)")
        // OneSignal's `vis`: passed on as it is; its SDK throws on one that is no integer, and shows nothing.
        #expect(try android(.oneSignal, #""vis":"1""#).content?.lockScreenVisibility == .public)
        let oneSignalLow = try android(.oneSignal, #""vis":"-2""#)
        #expect(oneSignalLow.content?.lockScreenVisibility == nil && oneSignalLow.warnings.contains { $0.hasPrefix("vis is -2") }, "\(oneSignalLow.warnings)")
        let oneSignalWord = try android(.oneSignal, #""vis":"private""#)
        #expect(oneSignalWord.content?.visible == false && oneSignalWord.warnings.contains { $0.hasPrefix("vis 'private' ") }, "\(oneSignalWord.warnings)")
        // Airship's `com.urbanairship.visibility`: clamped to −1…1, public when it is no integer.
        #expect(try android(.airship, #""com.urbanairship.visibility":"-1""#).content?.lockScreenVisibility == .secret)
        let airshipHigh = try android(.airship, #""com.urbanairship.visibility":"3""#)
        #expect(airshipHigh.content?.lockScreenVisibility == .public && airshipHigh.warnings.contains { $0.hasPrefix("com.urbanairship.visibility is 3") }, "\(airshipHigh.warnings)")
        let airshipWord = try android(.airship, #""com.urbanairship.visibility":"hidden""#)
        #expect(airshipWord.content?.lockScreenVisibility == .public && airshipWord.warnings.contains { $0.hasPrefix("com.urbanairship.visibility 'hidden' ") }, "\(airshipWord.warnings)")
        // MoEngage's `gcm_privacy`: `setVisibility(Integer.parseInt(…))`, a failure caught.
        #expect(try android(.moengage, #""gcm_privacy":"-1""#).content?.lockScreenVisibility == .secret)
        #expect(try android(.moengage, #""gcm_privacy":"1""#).content?.lockScreenVisibility == .public)
        let moEngageHigh = try android(.moengage, #""gcm_privacy":"2""#)
        #expect(moEngageHigh.content?.lockScreenVisibility == nil && moEngageHigh.warnings.contains { $0.hasPrefix("gcm_privacy is 2") }, "\(moEngageHigh.warnings)")
        let moEngageWord = try android(.moengage, #""gcm_privacy":"public""#)
        #expect(
            moEngageWord.content?.lockScreenVisibility == nil && moEngageWord.content?.visible == true
                && moEngageWord.warnings.contains { $0.hasPrefix("gcm_privacy 'public' ") }, "\(moEngageWord.warnings)")
        #expect(try android(.moengage, "").content?.lockScreenVisibility == nil)
        // None set: Airship's SDK sets its default, public, on every notification it posts.
        #expect(try android(.airship, "").content?.lockScreenVisibility == .public)
        #expect(try android(.airship, #""com.urbanairship.visibility":"""#).content?.lockScreenVisibility == .public)
        #expect([Visibility.public, .private, .secret].map(\.name) == ["public", "private", "secret"])
    }

    @Test("MoEngage Android: moeFeatures.android.largeIcon is the large icon, ahead of the older gcm_l_ic")
    func moEngageLargeIcon() throws {
        let features = #""moeFeatures":"{\"android\":{\"largeIcon\":\"https://cdn.example.com/new.png\"}}""#
        #expect(try android(.moengage, features).content?.largeIconURL == "https://cdn.example.com/new.png")
        #expect(try android(.moengage, features + #","gcm_l_ic":"https://cdn.example.com/old.png""#).content?.largeIconURL == "https://cdn.example.com/new.png")
        #expect(try android(.moengage, #""gcm_l_ic":"https://cdn.example.com/old.png""#).content?.largeIconURL == "https://cdn.example.com/old.png")
        let number = try android(.moengage, #""moeFeatures":"{\"android\":{\"largeIcon\":7}}","gcm_l_ic":"https://cdn.example.com/old.png""#)
        #expect(number.content?.largeIconURL == "https://cdn.example.com/old.png" && number.warnings.contains("moeFeatures.android.largeIcon is not a string"), "\(number.warnings)")
    }

    @Test("Iterable Android: the channel is named after the sound, an https sound's file or a raw resource's name; no sound, or a name no resource has, is the default channel")
    func iterableChannel() throws {
        #expect(try android(.iterable, #""sound":"chime.mp3""#).content?.channel == "chime")
        #expect(try android(.iterable, #""sound":"https://cdn.example.com/s/Bell-Ring.wav""#).content?.channel == "Bell-Ring")
        #expect(try android(.iterable, "").content?.channel == nil)
        #expect(try android(.iterable, #""sound":"Chime""#).content?.channel == nil)
        #expect(try android(.iterable, #""sound":"default""#).content?.channel == nil)
    }
}
