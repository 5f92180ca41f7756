@testable import AttachmentFetcher
import Foundation
import Testing

/// The reading of a payload is remembered for the next identical payload only: a campaign's
/// identical payloads are read once, and no payload ever gets another's reading.
@Suite("Prepared payloads: each payload's own reading, remembered for identical bytes")
struct PreparedPayloadTests {
    private let braze = Data(#"{"aps":{"alert":{"title":"Sale","body":"Now"},"mutable-content":1},"ab":{"c":"x"}}"#.utf8)
    private let moengage = Data(#"{"aps":{"alert":{"title":"Hello","body":"There"}},"moengage":{"cid":"1"},"app_extra":{}}"#.utf8)

    @Test("Identical bytes share one reading; different bytes get their own")
    func latest() {
        let memo = LatestPayload()
        let first = memo.prepared(braze, maximumAttachments: 4)
        #expect(first.vendor == .braze)
        #expect(first.notification?.title == "Sale")
        let other = memo.prepared(moengage, maximumAttachments: 4)
        #expect(other.vendor == .moengage)
        #expect(other.notification?.title == "Hello")
        // A copy of the first payload's bytes (not the same buffer) reads as the first did.
        let again = memo.prepared(Data(Array(braze)), maximumAttachments: 4)
        #expect(again.vendor == .braze)
        #expect(again.notification?.title == "Sale")
        // One byte changed is another payload.
        var changed = Array(braze)
        changed[changed.firstIndex(of: UInt8(ascii: "S"))!] = UInt8(ascii: "T")
        #expect(memo.prepared(Data(changed), maximumAttachments: 4).notification?.title == "Tale")
    }

    @Test(
        "A payload that is not a JSON object says what is wrong and where, as a person fixing a template needs",
        arguments: [
            (#"{"aps":{"alert":B},"ab":{}}"#, "the payload is not JSON: unexpected character at offset 16"),
            (#"{"aps":{"alert":"B"}"#, "the payload is not JSON: expected ',' or '}' in an object at offset 20"),
            (#"[{"aps":{}}]"#, "the payload is not a JSON object: its top level is an array"),
            (#""x""#, "the payload is not a JSON object: its top level is a string"),
            (" 42 ", "the payload is not a JSON object: its top level is a number"),
            ("true", "the payload is not a JSON object: its top level is true"),
            ("null", "the payload is not a JSON object: its top level is null"),
            ("nope", "the payload is not JSON: unexpected character at offset 0"),
            ("", "the payload is empty"),
            (String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
             "the payload is not JSON: more than 512 levels of nesting at offset 512"),
        ])
    func notAnObject(text: String, detail: String) {
        let prepared = PreparedPayload(Data(text.utf8), maximumAttachments: 4)
        guard case .original(let reason, let said) = prepared.next else {
            Issue.record("\(text) was not refused")
            return
        }
        #expect(reason == .invalidPayload)
        #expect(said == detail)
    }

    @Test("Payloads interleaved across tasks each get their own outcome")
    func interleaved() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fetcher = try PushAttachmentFetcher(configuration: .init(outputDirectory: directory))
        let payloads = (0..<400).map { $0 % 3 == 0 ? moengage : braze }
        let outcomes = await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, payload) in payloads.enumerated() { group.addTask { (index, await fetcher.process(payload)) } }
            var outcomes = [Outcome?](repeating: nil, count: payloads.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.compactMap { $0 }
        }
        await fetcher.shutdown()
        #expect(outcomes.count == payloads.count)
        for (index, outcome) in outcomes.enumerated() {
            #expect(outcome.vendor == (index % 3 == 0 ? .moengage : .braze))
            #expect(outcome.notification?.title == (index % 3 == 0 ? "Hello" : "Sale"))
            #expect(outcome.payload == payloads[index])
        }
    }
}
