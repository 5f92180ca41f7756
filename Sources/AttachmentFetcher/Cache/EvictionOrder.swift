import HeapModule

/// The order eviction takes entries in, least recently used first, kept as uses happen rather
/// than sorted on each pass: a min-heap of (last use, key) with lazy invalidation.
///
/// Every time an entry is added or its last use changes, a new element is pushed; the older
/// elements of that key stay in the heap and are skipped when they come out, because their last
/// use no longer equals the index's (or their key left the index). Taking the oldest entry costs
/// O(log n) plus the stale elements it skips; the heap is rebuilt from the index, in O(n), when
/// stale elements make it more than twice the index's size (plus `slack`), so that its memory
/// stays bounded and the rebuilds cost O(1) per use on average.
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

    /// The index's entries, in order.
    init(_ index: [CacheKey: CacheStore.IndexEntry], slack: Int = 1024) {
        self.init(slack: slack)
        rebuild(from: index)
    }

    /// Elements held, stale ones included.
    var count: Int { heap.count }

    /// Records that `key` was last used at `lastUsed` (it was added, used, or found used by
    /// another process); `index` is the index after the change, from which the heap is rebuilt
    /// when it has grown too large.
    mutating func record(_ key: CacheKey, lastUsed: Int64, in index: [CacheKey: CacheStore.IndexEntry]) {
        heap.insert(Candidate(lastUsed: lastUsed, key: key))
        if heap.count > 2 * index.count + slack { rebuild(from: index) }
    }

    /// Removes and returns the least recently used entry of `index`, skipping stale elements;
    /// `nil` when none is left. An entry taken and then kept must be recorded again to come back.
    mutating func popOldest(in index: [CacheKey: CacheStore.IndexEntry]) -> Candidate? {
        while let candidate = heap.popMin() {
            if index[candidate.key]?.lastUsed == candidate.lastUsed { return candidate }
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
        order.record(key, lastUsed: lastUsed, in: index)
    }

    /// Moves `key`'s last use to `lastUsed`, if the index holds it.
    mutating func setLastUsed(_ key: CacheKey, to lastUsed: Int64) {
        guard index[key] != nil else { return }
        index[key]?.lastUsed = lastUsed
        order.record(key, lastUsed: lastUsed, in: index)
    }

    /// Removes `key`'s entry from the index (its elements in the order go stale).
    mutating func removeEntry(_ key: CacheKey) {
        if let removed = index.removeValue(forKey: key) { bytes -= removed.size }
    }

    /// Replaces the whole index (start-up's scan).
    mutating func setIndex(_ entries: [CacheKey: CacheStore.IndexEntry]) {
        index = entries
        bytes = entries.values.reduce(0) { $0 + $1.size }
        order.rebuild(from: entries)
    }
}
