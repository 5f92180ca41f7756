import Foundation

/// libFuzzer's entry point for the payload reader, vendor recognition, the notification's
/// content and the whole reading of a payload (`scripts/fuzz.sh`
/// builds it with `-sanitize=fuzzer,address` from the sources it exercises).
///
/// Besides not crashing, every input read as an object must keep the reader's promises: its
/// members sorted by key are in strictly ascending byte order, and a lookup of each key finds the
/// value listed for it (the last one, when the key repeats).
@_cdecl("LLVMFuzzerTestOneInput")
public func payloadFuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    // The whole reading the fetcher makes of a payload before any request, attachments chosen,
    // judged on both platforms (an FCM HTTP v1 message is then read for iPhones too).
    let prepared = PreparedPayload(data, maximumAttachments: 4, judging: [.ios, .android])
    for notification in prepared.otherPlatformNotifications {
        var line: [UInt8] = []
        notification.appendJSON(to: &line)
        precondition((try? JSONSerialization.jsonObject(with: Data(line))) != nil, "the iPhone notification's JSON does not parse")
    }
    if case .download(let requests, _) = prepared.next { precondition(!requests.isEmpty && requests.count <= 4, "\(requests.count) attachments chosen") }
    guard let object = JSONValue.object(from: data) else { return 0 }
    check(object)
    if let recognized = VendorSchemas.recognize(object) {
        let (content, _) = ContentReader.read(object, vendor: recognized.vendor, platform: recognized.platform)
        var line: [UInt8] = []
        content.appendJSON(to: &line)
        precondition((try? JSONSerialization.jsonObject(with: Data(line))) != nil, "the notification's JSON does not parse")
    }
    return 0
}

private func check(_ object: JSONObject) {
    let sorted = object.sortedByKey
    for (previous, next) in zip(sorted, sorted.dropFirst()) {
        precondition(previous.key.utf8.lexicographicallyPrecedes(next.key.utf8), "keys out of byte order")
    }
    for member in sorted {
        precondition(object[member.key] == member.value, "a lookup disagrees with sortedByKey")
        if case .object(let inner) = member.value { check(inner) }
    }
}
