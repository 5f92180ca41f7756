import MockCDN
import Testing

/// The payloads `load-test --scenario custom` plans: how many inject a fault, and which asset URLs
/// the others ask for.
@Suite("load-test custom: the planned spike")
struct SpikePlanTests {
    @Test(
        "--fault-percent p makes exactly ⌊n·p/100⌋ payloads faults, and the asset payloads ask for every one of --urls",
        arguments: [
            // (payloads, urls, percent)
            (100, 10, 10), (200, 10, 30), (100, 1, 51), (100, 5, 75), (100, 20, 34), (1_000, 100, 1),
            (7, 3, 50), (10, 10, 0), (10, 1, 100), (200, 10, 33), (3, 1, 99),
        ])
    func counts(payloads: Int, urls: Int, percent: Int) {
        let slots = SpikePlan.slots(payloads: payloads, urls: urls, faultPercent: percent)
        #expect(slots.count == payloads)
        var faults: [Int] = []
        var assets: [Int] = []
        for slot in slots {
            switch slot {
            case .fault(let number): faults.append(number)
            case .asset(let url): assets.append(url)
            }
        }
        #expect(faults.count == payloads * percent / 100, "faults for \(payloads) payloads at \(percent) %")
        // The faults are numbered in turn, so that every kind of fault comes round.
        #expect(faults == Array(0..<faults.count))
        // Every URL is asked for once there are as many asset payloads, and no other.
        #expect(Set(assets) == Set(0..<min(urls, assets.count)), "distinct asset URLs for \(payloads)/\(urls)/\(percent) %")
        #expect(assets.allSatisfy { (0..<urls).contains($0) })
    }

    @Test("The faults are spread evenly: no run of assets longer than needed between two faults")
    func spread() {
        let slots = SpikePlan.slots(payloads: 100, urls: 10, faultPercent: 30)
        let faultIndices = slots.indices.filter { if case .fault = slots[$0] { true } else { false } }
        #expect(faultIndices.count == 30)
        let gaps = zip(faultIndices.dropFirst(), faultIndices).map { $0 - $1 }
        #expect(gaps.allSatisfy { (3...4).contains($0) }, "\(gaps)")
    }
}
