/// What a push shows and does, read from its vendor's keys: the same shape for every vendor and
/// for both payload shapes (an APNs payload on iOS, an FCM data map on Android).
///
/// `PushAttachmentFetcher.process(_:)` reads it once per payload whose vendor it recognises, or
/// from a plain APNs payload's `aps` when it recognises none (`Outcome.notification`). The
/// CLI's `--json` writes it as the `"notification"` object: every field of the contract below is
/// always there (`null` when the payload has none), and the optional fields (localisation,
/// interruption level, relevance score, channel, priority, summary,
/// the expanded view's texts, icon and picture URLs, inline-image style, Airship's media options,
/// Android's accent colour, small icon and lock-screen visibility) only when the payload has them.
///
/// Keys a payload holds with the wrong type, and JSON-in-string fields that do not parse, are left
/// out and named in the outcome's warnings; the rest of the notification stands.
public struct NotificationContent: Sendable, Hashable {
    /// What a push does to the app icon's badge.
    public enum Badge: Sendable, Hashable {
        /// The badge becomes this number (`aps.badge`, Android notification counts); 0 clears it.
        case set(Int)
        /// The badge changes by this signed amount (OneSignal's `badge_inc`).
        case increment(Int)

        /// The badge after this push, given the badge before it: an increment never goes below 0.
        public func count(from current: Int) -> Int {
            switch self {
            case .set(let value): max(0, value)
            case .increment(let delta):
                current.addingReportingOverflow(delta).overflow
                    ? (delta > 0 ? Int.max : 0) : max(0, current + delta)
            }
        }
    }

    /// One action button.
    public struct Button: Sendable, Hashable {
        /// What a tap on a button does.
        public enum Tap: String, Sendable, Hashable {
            /// It opens the app (Braze's `ab_open`, and `ab_uri` without a URL; Iterable's
            /// `openApp`, true unless the payload says false).
            case opensApp = "opens-app"
            /// It opens the button's `url`.
            case opensURL = "opens-url"
            /// It only dismisses the notification, opening neither the app nor a URL (Braze's
            /// `ab_none`; Iterable's `openApp: false`, whose action the app may run in the
            /// background).
            case dismisses
        }

        /// The action's identifier, as the app receives it.
        public var id: String
        /// The button's text, when the payload gives it.
        public var title: String?
        /// What a tap on the button opens; `nil` when it opens none (see `tap`).
        public var url: String?
        /// Whether `url` opens in an in-app web view.
        public var webview: Bool
        /// What a tap on the button does: `.opensURL` for a button with a `url`; `nil` where the
        /// payload does not say (an app's own category or button group, a vendor whose buttons
        /// the app handles, Iterable's text input).
        public var tap: Tap?

        /// A button; one with a `url` opens it, whatever `tap` says.
        public init(id: String, title: String? = nil, url: String? = nil, webview: Bool = false, tap: Tap? = nil) {
            self.id = id
            self.title = title
            self.url = url
            self.webview = webview
            self.tap = url != nil ? .opensURL : tap
        }
    }

    /// Android's lock-screen visibility: `Notification.VISIBILITY_PUBLIC` (1), `VISIBILITY_PRIVATE`
    /// (0) and `VISIBILITY_SECRET` (−1), the only values Android defines. The user's lock-screen
    /// setting and the channel's may hide more than the notification asks.
    public enum LockScreenVisibility: Int, Sendable, Hashable {
        /// Shown in full on every lock screen.
        case `public` = 1
        /// Shown on every lock screen, its content concealed on a secure one.
        case `private` = 0
        /// Not shown at all on a secure lock screen.
        case secret = -1

        /// `"public"`, `"private"` or `"secret"`, as the CLI's JSON writes it.
        public var name: String {
            switch self {
            case .public: "public"
            case .private: "private"
            case .secret: "secret"
            }
        }

        /// What the lock screen shows, after `Notification.VISIBILITY_*`'s documentation.
        public var effect: String {
            switch self {
            case .public: "shown in full"
            case .private: "its content concealed on a secure lock screen"
            case .secret: "not shown on a secure lock screen"
            }
        }
    }

    /// What a secure lock screen shows in place of a private notification
    /// (`NotificationCompat.Builder.setPublicVersion`): its own title, text and summary (subtext).
    public struct PublicVersion: Sendable, Hashable {
        /// The locked screen's title.
        public var title: String?
        /// The locked screen's text.
        public var text: String?
        /// The locked screen's summary line (subtext).
        public var summary: String?

        /// A public version with these texts.
        public init(title: String? = nil, text: String? = nil, summary: String? = nil) {
            self.title = title
            self.text = text
            self.summary = summary
        }

        /// Its title, text and summary, those it has, in that order.
        public var texts: [String] { [title, text, summary].compactMap { $0 } }
    }

    /// Airship's crop of an attachment's thumbnail, each value a fraction (0–1) of the image.
    public struct Crop: Sendable, Hashable {
        /// The left edge.
        public var x: Double
        /// The top edge.
        public var y: Double
        /// The width.
        public var width: Double
        /// The height.
        public var height: Double

        /// A crop rectangle.
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// The stored fields, behind one reference, copied on write: a notification travels through
    /// each payload's chain of async calls and into its outcome, and inline its ~500 bytes were
    /// copied into every frame of that chain (see docs/performance.md, Memory).
    struct Fields: Sendable, Hashable {
        var platform: Platform
        var visible: Bool
        var title: String?
        var subtitle: String?
        var body: String?
        var badge: Badge?
        var sound: String?
        var criticalSound: Bool?
        var soundVolume: Double?
        var category: String?
        var threadID: String?
        var targetContentID: String?
        var launchImage: String?
        var tag: String?
        var openURL: String?
        var openInWebview: Bool = false
        var buttons: [Button] = []
        var extras: [String: PayloadValue] = [:]
        var campaignID: String?
        var serviceExtension: Bool?
        var titleLocKey: String?
        var titleLocArgs: [String]?
        var subtitleLocKey: String?
        var subtitleLocArgs: [String]?
        var bodyLocKey: String?
        var bodyLocArgs: [String]?
        var interruptionLevel: String?
        var relevanceScore: Double?
        var channel: String?
        var priority: Int?
        var summary: String?
        var expandedTitle: String?
        var expandedText: String?
        var largeIconURL: String?
        var imageURL: String?
        var inlineImage: Bool?
        var thumbnailID: String?
        var crop: Crop?
        var time: Double?
        var hidden: Bool?
        var messageCenterID: String?
        var accentColor: String?
        var smallIcon: String?
        var lockScreenVisibility: LockScreenVisibility?
        var publicVersion: PublicVersion?
        var staysAfterTap: Bool?
        var ongoing: Bool?
        var dismissAfterSeconds: Double?
        var androidPictureDrawer: Vendor?
        var soundBeforeAndroid8Only = false
    }

    /// The texts a push shows before its service extension changes them.
    struct TextsBeforeExtension: Sendable, Hashable {
        var title: String?
        var subtitle: String?
        var body: String?
        var visible: Bool
    }

    /// For a push whose extension attaches all of its media or none (Airship's on iOS), the
    /// texts it shows when the extension attaches none; `nil` for every other push. Neither in
    /// the outcome's JSON nor in equality: what the notification says is its fields.
    var allOrNothing: TextsBeforeExtension? {
        get { textsBeforeExtension?.texts }
        set { textsBeforeExtension = newValue.map(TextsBox.init) }
    }

    private final class TextsBox: Sendable {
        let texts: TextsBeforeExtension
        init(_ texts: TextsBeforeExtension) { self.texts = texts }
    }

    private var textsBeforeExtension: TextsBox?

    /// What shows when the extension applies none of its changes: for an all-or-nothing push,
    /// its texts before them; any other push as it is.
    var withoutExtensionChanges: NotificationContent {
        guard let texts = allOrNothing else { return self }
        var content = self
        content.title = texts.title
        content.subtitle = texts.subtitle
        content.body = texts.body
        content.visible = texts.visible
        return content
    }

    private final class Storage: @unchecked Sendable {
        /// Mutated only through a uniquely referenced storage (`fields`' `_modify`), as
        /// `Array`'s buffer is: never while another value shares it.
        var fields: Fields

        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    private var fields: Fields {
        get { storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }

    /// The payload's shape.
    public var platform: Platform {
        get { fields.platform }
        set { fields.platform = newValue }
    }
    /// Whether the device shows the notification (a banner, in the list): `false` for silent and
    /// internal pushes, and where the vendor's own rule says the push is not displayed. iOS still
    /// applies the badge and plays the sound of an APNs push that shows nothing else.
    public var visible: Bool {
        get { fields.visible }
        set { fields.visible = newValue }
    }
    /// The title (after Airship's `content` override).
    public var title: String? {
        get { fields.title }
        set { fields.title = newValue }
    }
    /// The subtitle (iOS).
    public var subtitle: String? {
        get { fields.subtitle }
        set { fields.subtitle = newValue }
    }
    /// The body text.
    public var body: String? {
        get { fields.body }
        set { fields.body = newValue }
    }
    /// What happens to the badge; `nil` leaves it as it is.
    public var badge: Badge? {
        get { fields.badge }
        set { fields.badge = newValue }
    }
    /// `"default"`, a sound's name (a critical sound's name too), or `nil` when the push names
    /// none: iOS then plays no sound, and Android (8 and later) the sound of the notification's
    /// channel (`channel`, else the vendor SDK's default channel, which plays the default sound).
    public var sound: String? {
        get { fields.sound }
        set { fields.sound = newValue }
    }
    /// `true` when `aps.sound` is a critical alert's (`{"critical": 1, …}`): it plays through Do
    /// Not Disturb and the ring/silent switch, if the app holds Apple's critical-alerts
    /// entitlement and the user allowed critical alerts; otherwise iOS plays it as any other
    /// sound. `nil` for every other sound.
    public var criticalSound: Bool? {
        get { fields.criticalSound }
        set { fields.criticalSound = newValue }
    }
    /// A critical sound's `volume`, 0 (silent) to 1 (full), as the payload gives it.
    public var soundVolume: Double? {
        get { fields.soundVolume }
        set { fields.soundVolume = newValue }
    }
    /// The notification category (iOS) or Android category / button group.
    public var category: String? {
        get { fields.category }
        set { fields.category = newValue }
    }
    /// iOS's `aps.target-content-id`: the identifier of the app's window (scene) a tap brings
    /// forward, where an app has several (iPad, Mac).
    public var targetContentID: String? {
        get { fields.targetContentID }
        set { fields.targetContentID = newValue }
    }
    /// iOS's `aps.alert.launch-image`: the image or storyboard iOS shows in place of the app's
    /// launch screen when a tap on the push launches the app.
    public var launchImage: String? {
        get { fields.launchImage }
        set { fields.launchImage = newValue }
    }
    /// iOS's `thread-id`; on Android the vendor's group key.
    public var threadID: String? {
        get { fields.threadID }
        set { fields.threadID = newValue }
    }
    /// What replaces this notification on Android: a later notification of the app with the same
    /// tag replaces it in the shade, rather than grouping with it (so it is not `threadID`). The
    /// tag Android posts it under: FCM's `gcm.n.tag` (HTTP v1's `android.notification.tag`) and
    /// Airship's `com.urbanairship.notification_tag`. The keys from which the vendor's SDK makes
    /// the notification's id, to the same effect: CleverTap's collapse key `wzrk_ck`, OneSignal's
    /// `collapse_key` (not `"do_not_collapse"`, which its SDK ignores) and Braze's custom
    /// notification id `n`.
    public var tag: String? {
        get { fields.tag }
        set { fields.tag = newValue }
    }
    /// What a tap opens; `nil` opens the app.
    public var openURL: String? {
        get { fields.openURL }
        set { fields.openURL = newValue }
    }
    /// Whether `openURL` opens in an in-app web view.
    public var openInWebview: Bool {
        get { fields.openInWebview }
        set { fields.openInWebview = newValue }
    }
    /// The action buttons, left to right.
    public var buttons: [Button] {
        get { fields.buttons }
        set { fields.buttons = newValue }
    }
    /// The vendor's custom key-value pairs, with the vendor's own keys removed; the credentials
    /// of a URL among them (`https://user:pass@…`) are redacted, as in every URL an outcome shows.
    public var extras: [String: PayloadValue] {
        get { fields.extras }
        set { fields.extras = newValue }
    }
    /// The vendor's campaign, send or notification id.
    public var campaignID: String? {
        get { fields.campaignID }
        set { fields.campaignID = newValue }
    }

    /// iOS: whether iOS runs the app's notification service extension for this push
    /// (`aps.mutable-content` is 1). Without it iOS shows no attachment, and what the vendor's
    /// extension would change (OneSignal's `badge_inc` and buttons, Iterable's buttons, Airship's
    /// `content`) is not in this notification. `nil` on Android, which shows a push without one,
    /// and for a push the vendor's SDK shows itself as a local notification the app makes, with
    /// the attachments the app downloads (OneSignal's minified form, without `aps.alert`).
    public var serviceExtension: Bool? {
        get { fields.serviceExtension }
        set { fields.serviceExtension = newValue }
    }

    /// The title's localisation key (APNs `title-loc-key`, FCM `title_loc_key`).
    public var titleLocKey: String? {
        get { fields.titleLocKey }
        set { fields.titleLocKey = newValue }
    }
    /// The title's localisation arguments.
    public var titleLocArgs: [String]? {
        get { fields.titleLocArgs }
        set { fields.titleLocArgs = newValue }
    }
    /// The subtitle's localisation key (APNs `subtitle-loc-key`).
    public var subtitleLocKey: String? {
        get { fields.subtitleLocKey }
        set { fields.subtitleLocKey = newValue }
    }
    /// The subtitle's localisation arguments.
    public var subtitleLocArgs: [String]? {
        get { fields.subtitleLocArgs }
        set { fields.subtitleLocArgs = newValue }
    }
    /// The body's localisation key (APNs `loc-key`, FCM `body_loc_key`).
    public var bodyLocKey: String? {
        get { fields.bodyLocKey }
        set { fields.bodyLocKey = newValue }
    }
    /// The body's localisation arguments.
    public var bodyLocArgs: [String]? {
        get { fields.bodyLocArgs }
        set { fields.bodyLocArgs = newValue }
    }
    /// iOS's `interruption-level` (`passive`, `active`, `time-sensitive`, `critical`).
    public var interruptionLevel: String? {
        get { fields.interruptionLevel }
        set { fields.interruptionLevel = newValue }
    }
    /// iOS's `relevance-score` (0–1).
    public var relevanceScore: Double? {
        get { fields.relevanceScore }
        set { fields.relevanceScore = newValue }
    }
    /// The Android notification channel id.
    public var channel: String? {
        get { fields.channel }
        set { fields.channel = newValue }
    }
    /// Android's notification priority, normalised to NotificationCompat's −2 (min) … 2 (max).
    public var priority: Int? {
        get { fields.priority }
        set { fields.priority = newValue }
    }
    /// Android's summary line (subText), in the header.
    public var summary: String? {
        get { fields.summary }
        set { fields.summary = newValue }
    }
    /// Android's title when the notification is expanded (the big style's content title: Braze
    /// `ab_bt`, Airship's style `title`); `nil` keeps `title`.
    public var expandedTitle: String? {
        get { fields.expandedTitle }
        set { fields.expandedTitle = newValue }
    }
    /// Android's line under the title when the notification is expanded (the big style's summary
    /// text: Braze `ab_bs`, else the body with a picture and no `s`; Airship's style `summary`;
    /// CleverTap `wzrk_nms`, else the body with a picture); `nil` when the payload sets none.
    public var expandedText: String? {
        get { fields.expandedText }
        set { fields.expandedText = newValue }
    }
    /// The URL of Android's large icon.
    public var largeIconURL: String? {
        get { fields.largeIconURL }
        set { fields.largeIconURL = newValue }
    }
    /// The URL of Android's big picture (the payload's attachment on Android).
    public var imageURL: String? {
        get { fields.imageURL }
        set { fields.imageURL = newValue }
    }
    /// Braze's inline-image style on Android: `true` when the payload has the key `ab_iip`, whatever
    /// its value (the receiver checks only that it is there).
    public var inlineImage: Bool? {
        get { fields.inlineImage }
        set { fields.inlineImage = newValue }
    }
    /// Airship: the id of the attachment shown as the thumbnail.
    public var thumbnailID: String? {
        get { fields.thumbnailID }
        set { fields.thumbnailID = newValue }
    }
    /// Airship: the thumbnail's crop.
    public var crop: Crop? {
        get { fields.crop }
        set { fields.crop = newValue }
    }
    /// Airship: the moment (seconds) of a video or animation shown as the thumbnail.
    public var time: Double? {
        get { fields.time }
        set { fields.time = newValue }
    }
    /// Airship: whether the thumbnail is hidden.
    public var hidden: Bool? {
        get { fields.hidden }
        set { fields.hidden = newValue }
    }
    /// Airship: the Message Center message a tap opens, besides ``openURL``; an empty string
    /// for the Message Center's inbox. On Android a rich message id (`_uamid`) opens its message
    /// (the SDK adds the `^mc` action to whatever the payload's actions are); on iOS only a
    /// top-level `^mc` / `open_mc_action` action does (`"auto"`: the push's `_uamid`).
    public var messageCenterID: String? {
        get { fields.messageCenterID }
        set { fields.messageCenterID = newValue }
    }

    /// Android's accent colour (`NotificationCompat.Builder.setColor`: the small icon's and the
    /// header's tint), written `#AARRGGBB` in upper-case hexadecimal whatever the vendor's
    /// spelling, so that one colour always reads the same: alpha first, as Android's `@ColorInt`
    /// holds it, and `FF` where the payload gives none (`#RRGGBB`, a colour name), as
    /// `Color.parseColor` makes it. Read as each SDK reads its key: Braze's `ac` a decimal ARGB
    /// number (`BrazeNotificationPayload.parseStringAsColorInt`: `(int) Long.parseLong`); FCM's
    /// `gcm.n.color` (HTTP v1 `android.notification.color`), CleverTap's `wzrk_clr` and Airship's
    /// `com.urbanairship.icon_color` through `Color.parseColor` (`#RRGGBB`, `#AARRGGBB` or one of
    /// its colour names); OneSignal's `bgac` hexadecimal ARGB without `#` (`BigInteger(bgac,
    /// 16).toInt()`). A value the SDK cannot parse is `nil` with a warning: the app's default
    /// colour then, except CleverTap's, whose SDK then shows no notification at all.
    public var accentColor: String? {
        get { fields.accentColor }
        set { fields.accentColor = newValue }
    }
    /// The name of Android's small icon, a drawable the app bundles: FCM's `gcm.n.icon` (HTTP v1
    /// `android.notification.icon`), OneSignal's `sicon`, Airship's `com.urbanairship.icon`. A name
    /// the app has no drawable for gets the app's default small icon (each SDK looks it up with
    /// `Resources.getIdentifier`), which the payload cannot tell.
    public var smallIcon: String? {
        get { fields.smallIcon }
        set { fields.smallIcon = newValue }
    }
    /// What Android's lock screen shows of the notification (`NotificationCompat.setVisibility`),
    /// when the payload sets it: Braze's `ab_vs`, FCM's `gcm.n.visibility`, OneSignal's `vis`,
    /// Airship's `com.urbanairship.visibility`. `nil` when the payload sets none: Android's own
    /// default is private, Airship's SDK sets public.
    public var lockScreenVisibility: LockScreenVisibility? {
        get { fields.lockScreenVisibility }
        set { fields.lockScreenVisibility = newValue }
    }
    /// What a secure lock screen shows in place of the notification while it is private (its
    /// `lockScreenVisibility`, or Android's default, private, when the payload sets none), when
    /// the payload gives one: Braze's `ab_pn` (`{t, a, s}`), Airship's
    /// `com.urbanairship.public_notification` (`{title, alert, summary}`). Without one, a private
    /// notification shows there as the app's name and that its content is hidden.
    public var publicVersion: PublicVersion? {
        get { fields.publicVersion }
        set { fields.publicVersion = newValue }
    }
    /// `publicVersion` when a secure lock screen shows it: while the notification is private
    /// (its `lockScreenVisibility`, or Android's default, private, when the payload sets none).
    public var shownPublicVersion: PublicVersion? {
        (lockScreenVisibility ?? .private) == .private ? publicVersion : nil
    }
    /// `true` when the payload keeps the notification in the shade after a tap
    /// (`setAutoCancel(false)`): FCM's `gcm.n.sticky` (HTTP v1 `android.notification.sticky`).
    /// `nil` otherwise: a tap removes it, as every SDK here sets by default.
    public var staysAfterTap: Bool? {
        get { fields.staysAfterTap }
        set { fields.staysAfterTap = newValue }
    }
    /// `true` when the payload makes the notification ongoing (`setOngoing(true)`): "Clear all"
    /// leaves it, and up to Android 13 a swipe does not remove it either: CleverTap's
    /// `wzrk_sticky` `"true"` (in any case), which its SDK sets from Android 14 (API 34) on only
    /// (a warning says so). `nil` otherwise.
    public var ongoing: Bool? {
        get { fields.ongoing }
        set { fields.ongoing = newValue }
    }
    /// After how many seconds the notification removes itself, when the payload sets a timer:
    /// Braze's `nd` (milliseconds, an alarm the SDK sets from 1,000 on), CleverTap's
    /// `wzrk_dismiss` (seconds, `setTimeoutAfter`).
    public var dismissAfterSeconds: Double? {
        get { fields.dismissAfterSeconds }
        set { fields.dismissAfterSeconds = newValue }
    }

    /// Whose code draws the Android picture when it is not the vendor's own SDK: FCM's display
    /// (`.firebase`) for a Customer.io push that is an FCM notification message. Its size and
    /// time limits are then FCM's (`PlatformRules`). Not in the outcome's JSON.
    var androidPictureDrawer: Vendor? {
        get { fields.androidPictureDrawer }
        set { fields.androidPictureDrawer = newValue }
    }

    /// Whether Android plays `sound` before Android 8 (API 26) only, the SDK setting it on the
    /// notification, which from Android 8 on plays its channel's sound instead
    /// (`ContentReader.warnSoundBeforeChannels`, which warns of it). Not in the outcome's JSON.
    var soundBeforeAndroid8Only: Bool {
        get { fields.soundBeforeAndroid8Only }
        set { fields.soundBeforeAndroid8Only = newValue }
    }

    /// An empty notification of `platform`: nothing to show, no badge, no buttons.
    public init(platform: Platform, visible: Bool = false) {
        storage = Storage(Fields(platform: platform, visible: visible))
    }

    public static func == (left: NotificationContent, right: NotificationContent) -> Bool {
        left.storage === right.storage || left.storage.fields == right.storage.fields
    }

    public func hash(into hasher: inout Hasher) { storage.fields.hash(into: &hasher) }
}
