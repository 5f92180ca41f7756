import Foundation

/// A value behind a lock: the one lock type of this package.
///
/// Backed by `NSLock`, that is a `pthread_mutex_t`, rather than `Synchronization.Mutex`: on
/// Linux that one waits on a futex of its own, which ThreadSanitizer cannot see, so a TSan run
/// over code using it reports its every critical section as a race and says nothing about real
/// ones. ThreadSanitizer intercepts `pthread_mutex_lock`, wherever it is called from.
///
/// A reference type: share it by keeping it in a `let`.
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    /// A lock around `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock; what `body` returns is returned.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
