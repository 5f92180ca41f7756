extension NotificationContent: Encodable {
    private enum CodingKeys: String, CodingKey {
        case platform, visible, title, subtitle, body, badge, sound, category
        case threadID = "thread_id", openURL = "open_url", openInWebview = "open_in_webview"
        case buttons, extras, campaignID = "campaign_id"
        case titleLocKey = "title_loc_key", titleLocArgs = "title_loc_args"
        case subtitleLocKey = "subtitle_loc_key", subtitleLocArgs = "subtitle_loc_args"
        case bodyLocKey = "body_loc_key", bodyLocArgs = "body_loc_args"
        case interruptionLevel = "interruption_level", relevanceScore = "relevance_score"
        case channel, priority, summary, largeIconURL = "large_icon_url", imageURL = "image_url"
        case inlineImage = "inline_image", thumbnailID = "thumbnail_id", crop, time, hidden
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
        try container.encodeIfPresent(channel, forKey: .channel)
        try container.encodeIfPresent(priority, forKey: .priority)
        try container.encodeIfPresent(summary, forKey: .summary)
        try container.encodeIfPresent(largeIconURL, forKey: .largeIconURL)
        try container.encodeIfPresent(imageURL, forKey: .imageURL)
        try container.encodeIfPresent(inlineImage, forKey: .inlineImage)
        try container.encodeIfPresent(thumbnailID, forKey: .thumbnailID)
        try container.encodeIfPresent(crop, forKey: .crop)
        try container.encodeIfPresent(time.map(PayloadValue.number), forKey: .time)
        try container.encodeIfPresent(hidden, forKey: .hidden)
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
    private enum CodingKeys: String, CodingKey { case id, title, url, webview }

    /// `{"id", "title", "url", "webview"}`, `null` for an absent title or URL.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
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
        var writer = SortedObjectWriter(buffer: buffer)
        buffer = []
        if let badge {
            writer.key("badge")
            switch badge {
            case .set(let value): writer.raw(#"{"set":\#(value)}"#)
            case .increment(let value): writer.raw(#"{"increment":\#(value)}"#)
            }
        } else {
            writer.field("badge", nil as String?)
        }
        writer.field("body", body)
        writer.optionalArray("body_loc_args", bodyLocArgs)
        writer.optionalField("body_loc_key", bodyLocKey)
        writer.key("buttons")
        writer.buffer.append(UInt8(ascii: "["))
        for (position, button) in buttons.enumerated() {
            if position > 0 { writer.buffer.append(UInt8(ascii: ",")) }
            var inner = SortedObjectWriter(buffer: writer.buffer)
            inner.field("id", button.id)
            inner.field("title", button.title)
            inner.field("url", button.url)
            inner.flag("webview", button.webview)
            writer.buffer = inner.finish()
        }
        writer.buffer.append(UInt8(ascii: "]"))
        writer.field("campaign_id", campaignID)
        writer.field("category", category)
        writer.optionalField("channel", channel)
        if let crop {
            writer.key("crop")
            var inner = SortedObjectWriter(buffer: writer.buffer)
            inner.number("height", crop.height)
            inner.number("width", crop.width)
            inner.number("x", crop.x)
            inner.number("y", crop.y)
            writer.buffer = inner.finish()
        }
        writer.key("extras")
        PayloadValue.appendObject(extras, to: &writer.buffer)
        if let hidden { writer.flag("hidden", hidden) }
        writer.optionalField("image_url", imageURL)
        if let inlineImage { writer.flag("inline_image", inlineImage) }
        writer.optionalField("interruption_level", interruptionLevel)
        writer.optionalField("large_icon_url", largeIconURL)
        writer.flag("open_in_webview", openInWebview)
        writer.field("open_url", openURL)
        writer.field("platform", platform.rawValue)
        if let priority { writer.number("priority", Double(priority)) }
        if let relevanceScore { writer.number("relevance_score", relevanceScore) }
        writer.field("sound", sound)
        writer.field("subtitle", subtitle)
        writer.optionalArray("subtitle_loc_args", subtitleLocArgs)
        writer.optionalField("subtitle_loc_key", subtitleLocKey)
        writer.optionalField("summary", summary)
        writer.field("thread_id", threadID)
        writer.optionalField("thumbnail_id", thumbnailID)
        if let time { writer.number("time", time) }
        writer.field("title", title)
        writer.optionalArray("title_loc_args", titleLocArgs)
        writer.optionalField("title_loc_key", titleLocKey)
        writer.flag("visible", visible)
        buffer = writer.finish()
    }
}

/// Writes one JSON object's members in the order given (the caller gives them sorted).
private struct SortedObjectWriter {
    var buffer: [UInt8]
    private var first = true

    init(buffer: [UInt8]) {
        self.buffer = buffer
        self.buffer.append(UInt8(ascii: "{"))
    }

    mutating func key(_ name: String) {
        if !first { buffer.append(UInt8(ascii: ",")) }
        first = false
        JSONText.appendString(name, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
    }

    mutating func raw(_ text: String) { buffer.append(contentsOf: text.utf8) }

    mutating func field(_ name: String, _ value: String?) {
        key(name)
        JSONText.appendOptionalString(value, to: &buffer)
    }

    mutating func optionalField(_ name: String, _ value: String?) {
        if let value { field(name, value) }
    }

    mutating func optionalArray(_ name: String, _ values: [String]?) {
        guard let values else { return }
        key(name)
        PayloadValue.array(values.map(PayloadValue.string)).appendJSON(to: &buffer)
    }

    mutating func flag(_ name: String, _ value: Bool) {
        key(name)
        raw(value ? "true" : "false")
    }

    mutating func number(_ name: String, _ value: Double) {
        key(name)
        JSONText.appendNumber(value, to: &buffer)
    }

    consuming func finish() -> [UInt8] {
        buffer.append(UInt8(ascii: "}"))
        return buffer
    }
}
