/// The failures of recent shared downloads, by key, each until an instant: payloads for a URL
/// that just failed get the same reason without a request, so that a spike does not hammer a
/// failing origin.
///
/// Bounded: at `capacity`, the expired failures go first, then the half that expires soonest. A
/// value type without a clock: the instant comes in with each call.
struct FailureMemory {
    private var failures: [CacheKey: (failure: TransferFailure, until: ContinuousClock.Instant)] = [:]
    /// How many failures are kept at most.
    let capacity: Int

    init(capacity: Int = 4096) { self.capacity = max(2, capacity) }

    /// How many failures are kept now, expired ones included until they are looked up or pushed out.
    var count: Int { failures.count }

    /// Remembers `failure` for `key` until `until`.
    mutating func remember(_ failure: TransferFailure, for key: CacheKey, until: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        if failures[key] == nil, failures.count >= capacity {
            failures = failures.filter { $0.value.until > now }
            if failures.count >= capacity {
                let soonest = failures.sorted { $0.value.until < $1.value.until }.prefix(capacity / 2)
                for (old, _) in soonest { failures[old] = nil }
            }
        }
        failures[key] = (failure, until)
    }

    /// The failure remembered for `key`, if it has not expired by `now` (an expired one is forgotten).
    mutating func recall(_ key: CacheKey, now: ContinuousClock.Instant) -> TransferFailure? {
        guard let remembered = failures[key] else { return nil }
        guard now < remembered.until else {
            failures[key] = nil
            return nil
        }
        return remembered.failure
    }
}
