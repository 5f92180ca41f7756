/// Maintenance of an on-disk attachment cache (the one `Configuration.cache` names), without a
/// fetcher: what `fetch-attachment cache stats|prune|clear` runs.
public struct AttachmentCache: Sendable {
    private let store: CacheStore

    /// Opens the cache (creating it if missing, and removing what crashed processes left).
    public init(configuration: PushAttachmentFetcher.Configuration.Cache) async throws(AttachmentFetcherError) {
        let result = await BlockingIO.run { () -> Result<CacheStore, AttachmentFetcherError> in
            do throws(AttachmentFetcherError) { return .success(try CacheStore(configuration: configuration)) } catch {
                return .failure(error)
            }
        }
        store = try result.get()
    }

    /// Entries, fresh entries, bytes, budget and temporary files.
    public func statistics() async -> CacheStatistics {
        await BlockingIO.run { [store] in store.statistics() }
    }

    /// Removes stale entries and evicts least recently used ones beyond the budget, now.
    /// Returns how many entries and bytes were removed.
    public func prune() async -> (entries: Int, bytes: Int) {
        await BlockingIO.run { [store] in store.prune() }
    }

    /// Removes every entry (except ones another process is writing right now). Returns how many.
    public func clear() async -> Int {
        await BlockingIO.run { [store] in store.clear() }
    }
}
