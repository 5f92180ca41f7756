extension NotificationContent: Encodable {
    private enum CodingKeys: String, CodingKey {
        case platform, visible, title, subtitle, body, badge, sound, category
        case criticalSound = "critical_sound", soundVolume = "sound_volume"
        case threadID = "thread_id", openURL = "open_url", openInWebview = "open_in_webview"
        case buttons, extras, campaignID = "campaign_id"
        case titleLocKey = "title_loc_key", titleLocArgs = "title_loc_args"
        case subtitleLocKey = "subtitle_loc_key", subtitleLocArgs = "subtitle_loc_args"
        case bodyLocKey = "body_loc_key", bodyLocArgs = "body_loc_args"
        case interruptionLevel = "interruption_level", relevanceScore = "relevance_score"
        case serviceExtension = "service_extension"
        case channel, priority, summary, largeIconURL = "large_icon_url", imageURL = "image_url"
        case expandedTitle = "expanded_title", expandedText = "expanded_text"
        case inlineImage = "inline_image", thumbnailID = "thumbnail_id", crop, time, hidden
        case messageCenterID = "message_center_id", tag, ongoing
        case accentColor = "accent_color", smallIcon = "small_icon", lockScreenVisibility = "lock_screen_visibility"
        case publicVersion = "public_version", staysAfterTap = "stays_after_tap", dismissAfterSeconds = "dismiss_after_seconds"
        case targetContentID = "target_content_id", launchImage = "launch_image"
    }

    /// The `"notification"` object of the CLI's JSON: the contract's fields always (`null` when
    /// absent), the optional ones only when present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(platform, forKey: .platform)
        try container.encode(visible, forKey: .visible)
        try container.encode(title, forKey: .title)
        try container.encode(subtitle, forKey: .subtitle)
        try container.encode(body, forKey: .body)
        try container.encode(badge, forKey: .badge)
        try container.encode(sound, forKey: .sound)
        try container.encodeIfPresent(criticalSound, forKey: .criticalSound)
        try container.encodeIfPresent(soundVolume.map(PayloadValue.number), forKey: .soundVolume)
        try container.encode(category, forKey: .category)
        try container.encode(threadID, forKey: .threadID)
        try container.encode(openURL, forKey: .openURL)
        try container.encode(openInWebview, forKey: .openInWebview)
        try container.encode(buttons, forKey: .buttons)
        try container.encode(extras, forKey: .extras)
        try container.encode(campaignID, forKey: .campaignID)
        try container.encodeIfPresent(titleLocKey, forKey: .titleLocKey)
        try container.encodeIfPresent(titleLocArgs, forKey: .titleLocArgs)
        try container.encodeIfPresent(subtitleLocKey, forKey: .subtitleLocKey)
        try container.encodeIfPresent(subtitleLocArgs, forKey: .subtitleLocArgs)
        try container.encodeIfPresent(bodyLocKey, forKey: .bodyLocKey)
        try container.encodeIfPresent(bodyLocArgs, forKey: .bodyLocArgs)
        try container.encodeIfPresent(interruptionLevel, forKey: .interruptionLevel)
        try container.encodeIfPresent(relevanceScore.map(PayloadValue.number), forKey: .relevanceScore)
        try container.encodeIfPresent(serviceExtension, forKey: .serviceExtension)
        try container.encodeIfPresent(channel, forKey: .channel)
        try container.encodeIfPresent(priority, forKey: .priority)
        try container.encodeIfPresent(summary, forKey: .summary)
        try container.encodeIfPresent(expandedTitle, forKey: .expandedTitle)
        try container.encodeIfPresent(expandedText, forKey: .expandedText)
        try container.encodeIfPresent(largeIconURL, forKey: .largeIconURL)
        try container.encodeIfPresent(imageURL, forKey: .imageURL)
        try container.encodeIfPresent(inlineImage, forKey: .inlineImage)
        try container.encodeIfPresent(thumbnailID, forKey: .thumbnailID)
        try container.encodeIfPresent(crop, forKey: .crop)
        try container.encodeIfPresent(time.map(PayloadValue.number), forKey: .time)
        try container.encodeIfPresent(hidden, forKey: .hidden)
        try container.encodeIfPresent(messageCenterID, forKey: .messageCenterID)
        try container.encodeIfPresent(tag, forKey: .tag)
        try container.encodeIfPresent(accentColor, forKey: .accentColor)
        try container.encodeIfPresent(smallIcon, forKey: .smallIcon)
        try container.encodeIfPresent(lockScreenVisibility?.name, forKey: .lockScreenVisibility)
        try container.encodeIfPresent(publicVersion, forKey: .publicVersion)
        try container.encodeIfPresent(staysAfterTap, forKey: .staysAfterTap)
        try container.encodeIfPresent(ongoing, forKey: .ongoing)
        try container.encodeIfPresent(dismissAfterSeconds.map(PayloadValue.number), forKey: .dismissAfterSeconds)
        try container.encodeIfPresent(targetContentID, forKey: .targetContentID)
        try container.encodeIfPresent(launchImage, forKey: .launchImage)
    }
}

extension NotificationContent.PublicVersion: Encodable {
    private enum CodingKeys: String, CodingKey { case title, text, summary }

    /// `{"title", "text", "summary"}`, each only when given.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(text, forKey: .text)
        try container.encodeIfPresent(summary, forKey: .summary)
    }
}

extension NotificationContent.Badge: Encodable {
    /// `{"set": N}` or `{"increment": N}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .set(let value): try container.encode(["set": value])
        case .increment(let value): try container.encode(["increment": value])
        }
    }
}

extension NotificationContent.Button: Encodable {
    private enum CodingKeys: String, CodingKey { case id, tap, title, url, webview }

    /// `{"id", "tap", "title", "url", "webview"}`, `null` for an absent title, URL or tap
    /// (`"opens-app"`, `"opens-url"`, `"dismisses"`: what a tap on the button does).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(tap?.rawValue, forKey: .tap)
        try container.encode(title, forKey: .title)
        try container.encode(url, forKey: .url)
        try container.encode(webview, forKey: .webview)
    }
}

extension NotificationContent.Crop: Encodable {
    private enum CodingKeys: String, CodingKey { case x, y, width, height }

    /// `{"x", "y", "width", "height"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(PayloadValue.number(x), forKey: .x)
        try container.encode(PayloadValue.number(y), forKey: .y)
        try container.encode(PayloadValue.number(width), forKey: .width)
        try container.encode(PayloadValue.number(height), forKey: .height)
    }
}

extension NotificationContent {
    /// Appends the object `encode(to:)` makes, keys sorted, as `JSONEncoder` with `.sortedKeys`
    /// and `.withoutEscapingSlashes` writes it; for `Outcome.appendJSONLine`.
    func appendJSON(to buffer: inout [UInt8]) {
        var object = SortedObjectWriter(&buffer)
        object.optionalField("accent_color", accentColor, &buffer)
        object.key("badge", &buffer)
        switch badge {
        case .set(let value)?: buffer.append(contentsOf: #"{"set":\#(value)}"#.utf8)
        case .increment(let value)?: buffer.append(contentsOf: #"{"increment":\#(value)}"#.utf8)
        case nil: buffer.append(contentsOf: "null".utf8)
        }
        object.field("body", body, &buffer)
        object.optionalArray("body_loc_args", bodyLocArgs, &buffer)
        object.optionalField("body_loc_key", bodyLocKey, &buffer)
        object.key("buttons", &buffer)
        buffer.append(UInt8(ascii: "["))
        for (position, button) in buttons.enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            var inner = SortedObjectWriter(&buffer)
            inner.field("id", button.id, &buffer)
            inner.field("tap", button.tap?.rawValue, &buffer)
            inner.field("title", button.title, &buffer)
            inner.field("url", button.url, &buffer)
            inner.flag("webview", button.webview, &buffer)
            buffer.append(UInt8(ascii: "}"))
        }
        buffer.append(UInt8(ascii: "]"))
        object.field("campaign_id", campaignID, &buffer)
        object.field("category", category, &buffer)
        object.optionalField("channel", channel, &buffer)
        if let criticalSound { object.flag("critical_sound", criticalSound, &buffer) }
        if let crop {
            object.key("crop", &buffer)
            var inner = SortedObjectWriter(&buffer)
            inner.number("height", crop.height, &buffer)
            inner.number("width", crop.width, &buffer)
            inner.number("x", crop.x, &buffer)
            inner.number("y", crop.y, &buffer)
            buffer.append(UInt8(ascii: "}"))
        }
        if let dismissAfterSeconds { object.number("dismiss_after_seconds", dismissAfterSeconds, &buffer) }
        object.optionalField("expanded_text", expandedText, &buffer)
        object.optionalField("expanded_title", expandedTitle, &buffer)
        object.key("extras", &buffer)
        PayloadValue.appendObject(extras, to: &buffer)
        if let hidden { object.flag("hidden", hidden, &buffer) }
        object.optionalField("image_url", imageURL, &buffer)
        if let inlineImage { object.flag("inline_image", inlineImage, &buffer) }
        object.optionalField("interruption_level", interruptionLevel, &buffer)
        object.optionalField("large_icon_url", largeIconURL, &buffer)
        object.optionalField("launch_image", launchImage, &buffer)
        object.optionalField("lock_screen_visibility", lockScreenVisibility?.name, &buffer)
        object.optionalField("message_center_id", messageCenterID, &buffer)
        if let ongoing { object.flag("ongoing", ongoing, &buffer) }
        object.flag("open_in_webview", openInWebview, &buffer)
        object.field("open_url", openURL, &buffer)
        object.field("platform", platform.rawValue, &buffer)
        if let priority { object.number("priority", Double(priority), &buffer) }
        if let publicVersion {
            object.key("public_version", &buffer)
            var inner = SortedObjectWriter(&buffer)
            inner.optionalField("summary", publicVersion.summary, &buffer)
            inner.optionalField("text", publicVersion.text, &buffer)
            inner.optionalField("title", publicVersion.title, &buffer)
            buffer.append(UInt8(ascii: "}"))
        }
        if let relevanceScore { object.number("relevance_score", relevanceScore, &buffer) }
        if let serviceExtension { object.flag("service_extension", serviceExtension, &buffer) }
        object.optionalField("small_icon", smallIcon, &buffer)
        object.field("sound", sound, &buffer)
        if let soundVolume { object.number("sound_volume", soundVolume, &buffer) }
        if let staysAfterTap { object.flag("stays_after_tap", staysAfterTap, &buffer) }
        object.field("subtitle", subtitle, &buffer)
        object.optionalArray("subtitle_loc_args", subtitleLocArgs, &buffer)
        object.optionalField("subtitle_loc_key", subtitleLocKey, &buffer)
        object.optionalField("summary", summary, &buffer)
        object.optionalField("tag", tag, &buffer)
        object.optionalField("target_content_id", targetContentID, &buffer)
        object.field("thread_id", threadID, &buffer)
        object.optionalField("thumbnail_id", thumbnailID, &buffer)
        if let time { object.number("time", time, &buffer) }
        object.field("title", title, &buffer)
        object.optionalArray("title_loc_args", titleLocArgs, &buffer)
        object.optionalField("title_loc_key", titleLocKey, &buffer)
        object.flag("visible", visible, &buffer)
        buffer.append(UInt8(ascii: "}"))
    }
}

/// Writes one JSON object's members, in the order given (the caller gives them sorted), into the
/// caller's buffer; the caller closes the object.
private struct SortedObjectWriter {
    private var first = true

    /// Opens the object.
    init(_ buffer: inout [UInt8]) { buffer.append(UInt8(ascii: "{")) }

    mutating func key(_ name: String, _ buffer: inout [UInt8]) {
        if !first { buffer.append(UInt8(ascii: ",")) }
        first = false
        JSONText.appendString(name, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
    }

    mutating func field(_ name: String, _ value: String?, _ buffer: inout [UInt8]) {
        key(name, &buffer)
        JSONText.appendOptionalString(value, to: &buffer)
    }

    mutating func optionalField(_ name: String, _ value: String?, _ buffer: inout [UInt8]) {
        if let value { field(name, value, &buffer) }
    }

    mutating func optionalArray(_ name: String, _ values: [String]?, _ buffer: inout [UInt8]) {
        guard let values else { return }
        key(name, &buffer)
        buffer.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { buffer.append(UInt8(ascii: ",")) }
            JSONText.appendString(value, to: &buffer)
        }
        buffer.append(UInt8(ascii: "]"))
    }

    mutating func flag(_ name: String, _ value: Bool, _ buffer: inout [UInt8]) {
        key(name, &buffer)
        buffer.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func number(_ name: String, _ value: Double, _ buffer: inout [UInt8]) {
        key(name, &buffer)
        JSONText.appendNumber(value, to: &buffer)
    }
}
