
/// Values worked out once per string (a URL) rather than once per payload: a campaign names the
/// same few URLs over and over. Bounded: emptied whenever it holds `capacity` strings. Safe from
/// any thread.
final class BoundedMemo<Value: Sendable>: Sendable {
    private struct State {
        var values: [String: Value] = [:]
        /// The string last asked for or remembered, compared before the table is looked up: in a
        /// campaign's spike payload after payload names the same URL, and comparing a URL costs
        /// less than hashing it.
        var latest: (key: String, value: Value)?
    }

    private let state = Locked(State())
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The value remembered for `key`, if any.
    func remembered(_ key: String) -> Value? {
        state.withLock { state in
            if let latest = state.latest, latest.key == key { return latest.value }
            guard let value = state.values[key] else { return nil }
            state.latest = (key, value)
            return value
        }
    }

    /// Remembers `value` for `key`.
    func remember(_ value: Value, for key: String) {
        state.withLock { state in
            if state.values.count >= capacity { state.values.removeAll(keepingCapacity: true) }
            state.values[key] = value
            state.latest = (key, value)
        }
    }
}
