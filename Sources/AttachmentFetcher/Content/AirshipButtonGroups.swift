/// Airship's built-in button groups: the buttons a push shows when it names one (Android
/// `com.urbanairship.interactive_type`; iOS `aps.category`, where the SDK registers them as
/// categories). Read from the Android SDK's `ua_notification_buttons.xml` and its English
/// strings; the two icon groups show emoji (Android 6 and later, and iOS). Apps cannot register a
/// group whose name starts with `ua_`, so one not listed here shows no buttons.
///
/// iOS registers the first 27 of them (the SDK's categories list); the ten groups Android added
/// later (`ua_add_calendar_remind` … `ua_book`) are not known to be registered on iOS, so there a
/// category of that name counts as the app's own.
enum AirshipButtonGroups {
    /// A group's buttons, in order: id and English title.
    typealias Group = [(id: String, title: String)]

    /// The group named `name` on `platform`, if Airship has it there.
    static func group(_ name: String, on platform: Platform) -> Group? {
        guard let index = groups.firstIndex(where: { $0.name == name }) else { return nil }
        return platform == .android || index < iOSCount ? groups[index].buttons : nil
    }

    private static let iOSCount = 27

    /// Whether the button `id` of the built-in group `group` opens the app: a foreground button
    /// (`foreground="true"` in `ua_notification_buttons.xml`, the same flags on iOS) brings the
    /// app up; a background one runs its actions and only dismisses the notification
    /// (`NotificationIntentProcessor`). Yes and Accept are foreground only in the `_foreground`
    /// groups; No, Decline, Remind Me Later, Opt-in and -out, (Un)follow, Like, Dislike, More and
    /// Less Like This, Save and the icon buttons never are.
    static func opensApp(_ id: String, inGroup group: String) -> Bool {
        switch id {
        case "yes", "accept": group.hasSuffix("_foreground")
        default: foregroundButtons.contains(id)
        }
    }

    private static let foregroundButtons: Set<String> = [
        "share", "download", "shop_now", "buy_now", "add", "more_info", "rate", "search", "book", "add_calendar",
    ]

    private static let titles: [String: String] = [
        "yes": "Yes", "no": "No", "accept": "Accept", "decline": "Decline", "download": "Download", "share": "Share",
        "remind": "Remind Me Later", "opt_in": "Opt-in", "opt_out": "Opt-out", "follow": "Follow", "unfollow": "Unfollow",
        "shop_now": "Shop Now", "buy_now": "Buy Now", "more_like": "More Like This", "less_like": "Less Like This",
        "like": "Like", "dislike": "Dislike", "up": "👍", "down": "👎", "happy": "😀", "sad": "😞",
        "add_calendar": "Add to Calendar", "add": "Add", "save": "Save", "more_info": "Tell Me More", "rate": "Rate Now",
        "search": "Search", "book": "Book Now",
    ]

    private static let groups: [(name: String, buttons: Group)] = [
        ("ua_yes_no_foreground", ["yes", "no"]), ("ua_yes_no_background", ["yes", "no"]),
        ("ua_accept_decline_foreground", ["accept", "decline"]), ("ua_accept_decline_background", ["accept", "decline"]),
        ("ua_download_share", ["download", "share"]), ("ua_remind_share", ["remind", "share"]),
        ("ua_opt_in_share", ["opt_in", "share"]), ("ua_opt_out_share", ["opt_out", "share"]),
        ("ua_follow_share", ["follow", "share"]), ("ua_unfollow_share", ["unfollow", "share"]),
        ("ua_shop_now_share", ["shop_now", "share"]), ("ua_buy_now_share", ["buy_now", "share"]),
        ("ua_more_like_less_like", ["more_like", "less_like"]), ("ua_like_dislike", ["like", "dislike"]),
        ("ua_like_share", ["like", "share"]), ("ua_shop_now", ["shop_now"]), ("ua_buy_now", ["buy_now"]),
        ("ua_follow", ["follow"]), ("ua_unfollow", ["unfollow"]), ("ua_opt_in", ["opt_in"]), ("ua_opt_out", ["opt_out"]),
        ("ua_remind_me_later", ["remind"]), ("ua_share", ["share"]), ("ua_download", ["download"]), ("ua_like", ["like"]),
        ("ua_icons_up_down", ["up", "down"]), ("ua_icons_happy_sad", ["happy", "sad"]),
        // Android only (see above).
        ("ua_add_calendar_remind", ["add_calendar", "remind"]), ("ua_add", ["add"]), ("ua_save", ["save"]),
        ("ua_follow_save", ["follow", "save"]), ("ua_opt_in_remind", ["opt_in", "remind"]), ("ua_more_info", ["more_info"]),
        ("ua_rate_remind", ["rate", "remind"]), ("ua_rate", ["rate"]), ("ua_search", ["search"]), ("ua_book", ["book"]),
    ].map { name, ids in (name, ids.map { ($0, titles[$0] ?? $0) }) }
}
