import HeapModule

/// The order eviction takes entries in, least recently used first, kept as entries come and go
/// rather than sorted on each pass: a min-heap of (last use, key), put right lazily.
///
/// An entry gets an element when it is added. A use (a cache hit) changes only the index, in
/// O(1): the element keeps its older time, which is never later than the entry's last use. When
/// an element comes out of the heap, the index decides: a key the index no longer holds is
/// dropped; an entry used since goes back in at its last use; an element whose time is the
/// entry's last use is the least recently used entry of all (every other element's time is at
/// most its own entry's last use). A last use moved earlier (a look-up that found an older change
/// time) pushes an element of its own, and the higher one is dropped when it comes out. Taking
/// the oldest entry costs O(log n) per element looked at; the heap is rebuilt from the index, in
/// O(n), should it ever hold more than twice the index's size (plus `slack`).
struct EvictionOrder: Sendable {
    /// One recorded use of an entry.
    struct Candidate: Comparable, Sendable {
        /// Nanoseconds since 1970, as in the index.
        var lastUsed: Int64
        var key: CacheKey

        static func < (lhs: Self, rhs: Self) -> Bool {
            lhs.lastUsed != rhs.lastUsed ? lhs.lastUsed < rhs.lastUsed : lhs.key.hex < rhs.key.hex
        }
    }

    /// Stale elements allowed beyond twice the index's size before a rebuild.
    let slack: Int
    private var heap = Heap<Candidate>()

    init(slack: Int = 1024) { self.slack = max(0, slack) }

    /// Elements held, stale ones included.
    var count: Int { heap.count }

    /// Gives `key` an element at `lastUsed` (it was added, its last use moved earlier, or a
    /// candidate taken out was kept); `index` is the index after the change, from which the heap
    /// is rebuilt when it has grown too large.
    mutating func record(_ key: CacheKey, lastUsed: Int64, in index: [CacheKey: CacheStore.IndexEntry]) {
        heap.insert(Candidate(lastUsed: lastUsed, key: key))
        if heap.count > 2 * index.count + slack { rebuild(from: index) }
    }

    /// Removes and returns the least recently used entry of `index`, putting back entries used
    /// since their element was pushed and dropping elements of removed entries; `nil` when none
    /// is left. An entry taken and then kept must be recorded again to come back.
    mutating func popOldest(in index: [CacheKey: CacheStore.IndexEntry]) -> Candidate? {
        while let candidate = heap.popMin() {
            guard let lastUsed = index[candidate.key]?.lastUsed else { continue }
            if lastUsed == candidate.lastUsed {
                // Its copies (a removed key added again, a kept candidate recorded again) go with it.
                while heap.min == candidate { _ = heap.popMin() }
                return candidate
            }
            // Used since: back in at its last use. (Later than its last use: an element of its
            // own, pushed when the last use moved earlier, is still in the heap.)
            if lastUsed > candidate.lastUsed { heap.insert(Candidate(lastUsed: lastUsed, key: candidate.key)) }
        }
        return nil
    }

    /// One element per entry of `index`, in O(n).
    mutating func rebuild(from index: [CacheKey: CacheStore.IndexEntry]) {
        heap = Heap(index.lazy.map { Candidate(lastUsed: $0.value.lastUsed, key: $0.key) })
    }
}

// The index, its byte count and its eviction order change together.
extension CacheStore.StoreState {
    /// Adds or replaces `key`'s entry.
    mutating func setEntry(_ key: CacheKey, size: Int, lastUsed: Int64) {
        let previous = index.updateValue(CacheStore.IndexEntry(size: size, lastUsed: lastUsed), forKey: key)
        bytes += size - (previous?.size ?? 0)
        // A new entry needs an element; a known one only when its last use moved earlier.
        if previous.map({ lastUsed < $0.lastUsed }) ?? true { order.record(key, lastUsed: lastUsed, in: index) }
    }

    /// Moves `key`'s last use to `lastUsed`, if the index holds it: O(1) when it moves later, as
    /// a use does (the order puts it right when its element comes out).
    mutating func setLastUsed(_ key: CacheKey, to lastUsed: Int64) {
        guard let previous = index[key]?.lastUsed else { return }
        index[key]?.lastUsed = lastUsed
        if lastUsed < previous { order.record(key, lastUsed: lastUsed, in: index) }
    }

    /// Removes `key`'s entry from the index (its elements in the order go stale).
    mutating func removeEntry(_ key: CacheKey) {
        if let removed = index.removeValue(forKey: key) { bytes -= removed.size }
        if !indexed { removedBeforeIndexing.insert(key) }
    }

    /// Adds start-up's scan to the index: every entry it found but those stored or removed
    /// since it began, which the index already has right. The order is built anew, in O(n).
    mutating func mergeIndex(_ scanned: [CacheKey: CacheStore.IndexEntry]) {
        for (key, entry) in scanned where index[key] == nil && !removedBeforeIndexing.contains(key) {
            index[key] = entry
            bytes += entry.size
        }
        removedBeforeIndexing = []
        indexed = true
        order.rebuild(from: index)
    }
}
