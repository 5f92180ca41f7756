/// Which payloads of a spike ask for an asset and which inject a fault (the load test's `custom`
/// scenario), without any I/O.
///
/// Payload `i` is a fault exactly when `⌊(i+1)·p/100⌋ > ⌊i·p/100⌋`: `p` % of the payloads, spread
/// evenly, `⌊n·p/100⌋` in all. Faults and assets are numbered apart: the `k`-th fault is fault
/// `k`, the `k`-th asset payload asks for URL `k mod urls`, so every URL is fetched once there are
/// at least `urls` asset payloads.
public enum SpikePlan {
    /// What one payload asks for.
    public enum Slot: Equatable, Sendable {
        /// The `number`-th fault of the spike (0-based).
        case fault(number: Int)
        /// The asset URL numbered `url` (0..<urls).
        case asset(url: Int)
    }

    /// Whether payload `index` of a spike with `percent` % faults is a fault.
    public static func isFault(_ index: Int, percent: Int) -> Bool {
        (index + 1) * percent / 100 > index * percent / 100
    }

    /// The slot of every payload of a spike of `payloads` payloads, `percent` % faults (0...100),
    /// assets over `urls` URLs (at least 1).
    public static func slots(payloads: Int, urls: Int, faultPercent percent: Int) -> [Slot] {
        let urls = max(1, urls)
        let percent = min(100, max(0, percent))
        var faults = 0
        var assets = 0
        return (0..<max(0, payloads)).map { index in
            if isFault(index, percent: percent) {
                defer { faults += 1 }
                return .fault(number: faults)
            }
            defer { assets += 1 }
            return .asset(url: assets % urls)
        }
    }
}
