/// Which of a payload's attachments are fetched: each URL once, at most a configured number.
enum AttachmentSelection {
    /// The first `limit` distinct URLs of `requests`, in payload order (a URL named again, in
    /// any spelling `normalise` gives the same form, is dropped, keeping its first type hint).
    /// The fetcher normalises as it fetches (`AttachmentURL.normalised`); by default URLs are
    /// compared as written. Every URL dropped is named in a warning: one for
    /// repeats, one for those past the limit, each URL cut to 200 characters, its credentials redacted.
    /// `pastLimit` is set to the number of distinct URLs left out by the limit.
    static func select(
        _ requests: [RequestedAttachment], limit: Int, warnings: inout [String], pastLimit: inout Int,
        normalise: (String) -> String = { $0 }
    ) -> [RequestedAttachment] {
        pastLimit = 0
        // Most payloads name one attachment: nothing to compare, nothing parsed twice.
        if requests.count == 1, limit >= 1 { return requests }
        var seen: [String: Int] = [:]
        var distinct: [RequestedAttachment] = []
        var repeated: [String] = []
        for request in requests {
            // One URL however it is spelled (`HTTP://`, a host's case, a fragment): one download.
            let normalised = normalise(request.url)
            guard let first = seen[normalised] else {
                seen[normalised] = distinct.count
                distinct.append(request)
                continue
            }
            // Named for another platform (an FCM HTTP v1 message's Android picture and iPhones'
            // image, spelled apart): the one download is judged by both.
            if distinct[first].platforms != request.platforms {
                distinct[first].platforms = distinct[first].platforms.flatMap { mine in request.platforms.map { mine.union($0) } }
            } else {
                repeated.append(request.url)
            }
        }
        if !repeated.isEmpty {
            warnings.append("attachment URLs named more than once, fetched once: \(list(repeated))")
        }
        guard distinct.count > limit else { return distinct }
        let dropped = distinct[limit...].map(\.url)
        pastLimit = dropped.count
        warnings.append(
            "\(dropped.count) attachment\(dropped.count == 1 ? "" : "s") past the limit of \(limit) per payload not fetched: \(list(dropped))")
        return Array(distinct.prefix(limit))
    }

    private static func list(_ urls: [String]) -> String {
        let shown: [String] = urls.map { url in
            let redacted = URLCredentials.redacted(url)
            return redacted.count > 200 ? String(redacted.prefix(200)) + "…" : redacted
        }
        return shown.joined(separator: " ")
    }
}
