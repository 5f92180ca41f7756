@testable import AttachmentFetcher
import Foundation
import Testing

/// Reads a payload as `PushAttachmentFetcher.process` does: recognition, then content.
struct ReadPayload {
    var recognized: RecognizedPayload?
    var content: NotificationContent?
    var warnings: [String]

    init(_ text: String) throws {
        var json = try #require(JSONValue.object(from: Data(text.utf8)), "not a JSON object: \(text)")
        var notes: [String] = []
        if let (device, note) = VendorSchemas.devicePayload(of: json) {
            json = device
            notes.append(note)
        }
        recognized = VendorSchemas.recognize(json)
        if let recognized {
            let (content, warnings) = ContentReader.read(json, vendor: recognized.vendor, platform: recognized.platform)
            self.content = content
            self.warnings = notes + warnings
        } else {
            warnings = notes
        }
    }

    var vendor: Vendor? { recognized?.vendor }
    var platform: Platform? { recognized?.platform }
    var pictureURLs: [String] {
        if case .attachments(let requests)? = recognized?.recognition { return requests.map(\.url) }
        return []
    }
    var isInternal: Bool {
        if case .internalPush? = recognized?.recognition { return true }
        return false
    }
}
