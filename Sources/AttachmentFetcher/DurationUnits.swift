/// A `Duration` in the units of the APIs that take no `Duration`: Foundation's and Dispatch's.
extension Duration {
    /// The duration in seconds, as Foundation's `TimeInterval` counts them.
    package var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole nanoseconds (truncated toward zero), as `DispatchTimeInterval` and
    /// `DispatchTime` count them; `Int.max` or `Int.min` for a duration beyond ±292 years.
    package var wholeNanoseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = Int(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowAgain) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000))
        guard !overflow, !overflowAgain else { return seconds < 0 ? .min : .max }
        return sum
    }
}
