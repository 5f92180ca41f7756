@testable import AttachmentFetcher
import Foundation
import Testing

@Suite("Notification content: wrong types, broken JSON-in-string, badge arithmetic, recognition", .timeLimit(.minutes(1)))
struct NotificationWarningTests {
    @Test("A value of the wrong type is a warning, and the rest of the notification stands")
    func wrongTypes() throws {
        let ios = try ReadPayload(#"{"aps":{"alert":{"title":7,"body":"B"},"badge":"x","sound":5,"mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/a.jpg"}},"ab_uri":["x"],"k":"v"}"#)
        #expect(ios.content?.title == nil && ios.content?.body == "B" && ios.content?.badge == nil && ios.content?.sound == nil)
        #expect(ios.content?.openURL == nil && ios.content?.extras == ["k": .string("v")] && ios.content?.visible == true)
        #expect(ios.pictureURLs == ["https://cdn.example.com/a.jpg"])
        for path in ["aps.alert.title", "aps.badge", "aps.sound", "ab_uri"] {
            #expect(ios.warnings.contains { $0.hasPrefix(path + " ") }, "\(path): \(ios.warnings)")
        }

        let android = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","ab_bc":"three","p":{"x":1},"ab_iu":"https://cdn.example.com/a.jpg"}"#)
        #expect(android.content?.title == "T" && android.content?.badge == nil && android.content?.priority == nil)
        #expect(android.warnings.contains("ab_bc is not an integer") && android.warnings.contains("p is not an integer"))
        #expect(android.pictureURLs == ["https://cdn.example.com/a.jpg"])
    }

    @Test("CleverTap Android: a wzrk_bp that is no http(s) URL is a warning that says so")
    func cleverTapPictureNotHTTP() throws {
        let read = try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_bp":"//cdn.example.com/y.jpg"}"#)
        #expect(read.content?.imageURL == nil && read.pictureURLs.isEmpty)
        #expect(read.warnings.contains { $0.hasPrefix("wzrk_bp '//cdn.example.com/y.jpg' is not an http(s) URL") }, "\(read.warnings)")
        #expect(try ReadPayload(#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_bp":"https://cdn.example.com/y.jpg"}"#).warnings.isEmpty)
    }

    @Test("A critical sound is read whole: its name, that it is critical, its volume; a volume outside 0–1 is a warning")
    func criticalSound() throws {
        let critical = try ReadPayload(#"{"aps":{"alert":"B","sound":{"critical":1,"name":"alarm.caf","volume":0.8}},"ab":{}}"#)
        #expect(critical.content?.sound == "alarm.caf" && critical.content?.criticalSound == true && critical.content?.soundVolume == 0.8)
        #expect(critical.warnings.isEmpty, "\(critical.warnings)")
        let plain = try ReadPayload(#"{"aps":{"alert":"B","sound":"chime.caf"},"ab":{}}"#)
        #expect(plain.content?.sound == "chime.caf" && plain.content?.criticalSound == nil && plain.content?.soundVolume == nil)
        let loud = try ReadPayload(#"{"aps":{"alert":"B","sound":{"critical":0,"name":"a.caf","volume":7}},"ab":{}}"#)
        #expect(loud.content?.criticalSound == false && loud.content?.soundVolume == 7)
        #expect(loud.warnings == ["aps.sound.volume is 7, outside 0–1"])
        let odd = try ReadPayload(#"{"aps":{"alert":"B","sound":{"critical":"yes","name":"a.caf","volume":"loud"}},"ab":{}}"#)
        #expect(odd.content?.sound == "a.caf" && odd.content?.criticalSound == nil && odd.content?.soundVolume == nil)
        #expect(odd.warnings.contains { $0.hasPrefix("aps.sound.critical ") } && odd.warnings.contains { $0.hasPrefix("aps.sound.volume ") })
    }

    @Test(
        "A JSON-in-string field that does not parse is a warning; the rest stands",
        arguments: [
            (#"{"_ab":"true","t":"T","a":"B","ab_iu":"https://cdn.example.com/a.jpg","extra":"{\"promo\":"}"#, "extra"),
            (#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.style":"{big_picture}"}"#, "com.urbanairship.style"),
            (#"{"title":"T","alert":"B","custom":"{\"i\":\"n\"}","o":"[{\"i\":\"yes\""}"#, "o"),
            (#"{"wzrk_pn":"true","nt":"T","nm":"B","wzrk_acts":"[{\"l\":}]"}"#, "wzrk_acts"),
            (#"{"title":"T","body":"B","itbl":"{\"defaultAction\":"}"#, "itbl"),
            (#"{"push_from":"moengage","gcm_notificationType":"n","gcm_campaign_id":"c","gcm_title":"T","gcm_alert":"B","gcm_actions":"[oops]"}"#, "gcm_actions"),
            (#"{"gcm.n.e":"1","gcm.n.title":"T","gcm.n.body":"B","gcm.n.body_loc_args":"[\"Ann\""}"#, "gcm.n.body_loc_args"),
        ])
    func brokenJSONInString(text: String, field: String) throws {
        let read = try ReadPayload(text)
        #expect(read.platform == .android)
        #expect(read.content?.body == "B" && read.content?.visible == true)
        #expect(read.warnings.contains { $0.hasPrefix("\(field) is not valid JSON") }, "\(read.warnings)")
    }

    @Test(
        "A JSON-in-string field that starts with a line break or a tab is read, as Android's JSONTokener skips them, not dropped as 'not JSON'",
        arguments: ["\\n", "\\r\\n", "\\t", " \\n "])
    func jsonInStringAfterWhitespace(lead: String) throws {
        let style = try ReadPayload(#"{"com.urbanairship.push.ALERT":"B","com.urbanairship.style":"\#(lead){\"type\":\"big_picture\",\"big_picture\":\"https://cdn.example.com/a.jpg\"}"}"#)
        #expect(style.pictureURLs == ["https://cdn.example.com/a.jpg"], "\(style.warnings)")
        #expect(!style.warnings.contains { $0.hasPrefix("com.urbanairship.style") }, "\(style.warnings)")
        let itbl = try ReadPayload(#"{"title":"T","body":"B","itbl":"\#(lead){\"campaignId\":1,\"templateId\":2,\"messageId\":\"m\",\"defaultAction\":{\"type\":\"openUrl\",\"data\":\"https://x.example.com/\"}}"}"#)
        #expect(itbl.content?.openURL == "https://x.example.com/", "\(itbl.warnings)")
        let oneSignal = try ReadPayload(#"{"alert":"B","custom":"\#(lead){\"i\":\"n1\"}","o":"\#(lead)[{\"i\":\"a\",\"n\":\"A\"}]"}"#)
        #expect(oneSignal.content?.buttons.map(\.title) == ["A"], "\(oneSignal.warnings)")
        let cleverTap = try ReadPayload(#"{"wzrk_pn":"true","nm":"B","wzrk_acts":"\#(lead)[{\"l\":\"OK\",\"id\":\"ok\"}]"}"#)
        #expect(cleverTap.content?.buttons.map(\.title) == ["OK"], "\(cleverTap.warnings)")
        let braze = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","extra":"\#(lead){\"k\":\"v\"}"}"#)
        #expect(braze.content?.extras == ["k": .string("v")], "\(braze.warnings)")
        // Other control characters are no whitespace to JSONTokener: still not JSON.
        let formFeed = try ReadPayload(#"{"_ab":"true","t":"T","a":"B","extra":"\f{\"k\":\"v\"}"}"#)
        #expect(formFeed.content?.extras == [:] && formFeed.warnings == ["extra is not JSON"], "\(formFeed.warnings)")
    }

    @Test("A text or a tap target that still holds a template's placeholder ({{first_name}}, {% if %}, ${name}) is a warning: the phone shows it as it is")
    func unrenderedPlaceholders() throws {
        let braze = try ReadPayload(#"{"aps":{"alert":{"title":"Hi {{${first_name} | default: 'there'}}","body":"Your {% if vip %}VIP {% endif %}offer"}},"ab":{},"ab_uri":"myapp://deal/{{deal_id}}"}"#)
        #expect(braze.warnings.contains("title holds '{{${first_name} | default: 'there'}}', a template placeholder left unrendered: the phone shows it as it is"), "\(braze.warnings)")
        #expect(braze.warnings.contains("body holds '{% if vip %}', a template placeholder left unrendered: the phone shows it as it is"), "\(braze.warnings)")
        #expect(braze.warnings.contains("tap target holds '{{deal_id}}', a template placeholder left unrendered: the phone shows it as it is"), "\(braze.warnings)")
        let android = try ReadPayload(#"{"wzrk_pn":"true","nt":"Hello ${name}","nm":"B","wzrk_acts":"[{\"l\":\"Open {{ item }}\",\"id\":\"o\"}]"}"#)
        #expect(android.warnings.contains { $0.hasPrefix("title holds '${name}'") }, "\(android.warnings)")
        #expect(android.warnings.contains { $0.hasPrefix("button 'Open {{ item }}' holds '{{ item }}'") }, "\(android.warnings)")
        // Braces that are no placeholder, and a placeholder too long to be one, are left alone.
        let plain = try ReadPayload(#"{"aps":{"alert":{"title":"{ } and {x} and $5","body":"a {{ b"}},"ab":{}}"#)
        #expect(!plain.warnings.contains { $0.contains("placeholder") }, "\(plain.warnings)")
    }

    @Test("Android colours parse as Android's Color.parseColor, Braze's decimal Long and OneSignal's hexadecimal BigInteger parse them")
    func androidColours() {
        #expect(AndroidColor.parse("#FF0000") == 0xFFFF_0000)
        #expect(AndroidColor.parse("#80ff0000") == 0x80FF_0000)
        #expect(AndroidColor.parse("RED") == 0xFFFF_0000)
        // `Long.parseLong` takes a sign after the '#'.
        #expect(AndroidColor.parse("#+12345") == 0xFF01_2345)
        for text in ["", "#", "#FFF", "#GG0000", "FF0000", "#FF00000", "orange", " #FF0000", "#FF0000 "] {
            #expect(AndroidColor.parse(text) == nil, "\(text)")
        }
        #expect(AndroidColor.decimal("4278190335")?.color == 0xFF00_00FF && AndroidColor.decimal("4278190335")?.exact == true)
        #expect(AndroidColor.decimal("-1")?.color == 0xFFFF_FFFF)
        #expect(AndroidColor.decimal("0x10") == nil && AndroidColor.decimal(" 1") == nil)
        #expect(AndroidColor.bigIntegerHex("-1") == 0xFFFF_FFFF)
        #expect(AndroidColor.bigIntegerHex("1FFFF0000") == 0xFFFF_0000)
        #expect(AndroidColor.bigIntegerHex("") == nil && AndroidColor.bigIntegerHex("#FF") == nil && AndroidColor.bigIntegerHex("-") == nil)
        #expect(AndroidColor.text(0x0000_00FF) == "#000000FF")
    }

    @Test("Badge arithmetic: a set badge is its number, an increment never goes below 0")
    func badgeArithmetic() {
        typealias Badge = NotificationContent.Badge
        #expect(Badge.set(3).count(from: 10) == 3)
        #expect(Badge.set(0).count(from: 10) == 0)
        #expect(Badge.set(-2).count(from: 10) == 0)
        #expect(Badge.increment(1).count(from: 4) == 5)
        #expect(Badge.increment(-1).count(from: 0) == 0)
        #expect(Badge.increment(-5).count(from: 3) == 0)
        #expect(Badge.increment(2).count(from: -3) == 0)
        #expect(Badge.increment(1).count(from: Int.max) == Int.max)
    }

    @Test("Payloads recognised today keep their recognition, now on iOS")
    func iOSRecognitionUnchanged() throws {
        let read = try ReadPayload(#"{"aps":{"alert":"x","mutable-content":1},"wzrk_pn":true,"ct_mediaUrl":"https://cdn.example.com/a.png","ct_mediaType":"image"}"#)
        #expect(read.vendor == .cleverTap && read.platform == .ios && read.pictureURLs == ["https://cdn.example.com/a.png"])
        let noAps = try ReadPayload(#"{"ab":{"att":{"url":"https://cdn.example.com/a.jpg"}}}"#)
        #expect(noAps.vendor == .braze && noAps.platform == .ios && noAps.pictureURLs == ["https://cdn.example.com/a.jpg"])
        let fcmNoAps = try ReadPayload(#"{"fcm_options":{"image":"https://cdn.example.com/a.jpg"},"gcm.message_id":"1"}"#)
        #expect(fcmNoAps.vendor == .firebase && fcmNoAps.platform == .ios && fcmNoAps.pictureURLs == ["https://cdn.example.com/a.jpg"])
    }
}
