import Synchronization

/// Values worked out once per string (a URL) rather than once per payload: a campaign names the
/// same few URLs over and over. Bounded: emptied whenever it holds `capacity` strings. Safe from
/// any thread.
final class BoundedMemo<Value: Sendable>: Sendable {
    private let values = Mutex<[String: Value]>([:])
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The value remembered for `key`, if any.
    func remembered(_ key: String) -> Value? {
        values.withLock { $0[key] }
    }

    /// Remembers `value` for `key`.
    func remember(_ value: Value, for key: String) {
        values.withLock { values in
            if values.count >= capacity { values.removeAll(keepingCapacity: true) }
            values[key] = value
        }
    }
}
