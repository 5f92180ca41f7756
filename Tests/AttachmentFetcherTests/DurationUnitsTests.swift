@testable import AttachmentFetcher
import Testing

@Suite("A Duration in Foundation's and Dispatch's units")
struct DurationUnitsTests {
    @Test("Seconds as a TimeInterval keep the fraction")
    func timeInterval() {
        #expect(Duration.milliseconds(1_500).timeInterval == 1.5)
        #expect(Duration.microseconds(-250).timeInterval == -0.000_25)
        #expect(Duration.zero.timeInterval == 0)
    }

    @Test("Whole nanoseconds truncate toward zero and saturate beyond Int's range")
    func wholeNanoseconds() {
        #expect(Duration.seconds(2).wholeNanoseconds == 2_000_000_000)
        #expect((Duration.nanoseconds(7) + .init(secondsComponent: 0, attosecondsComponent: 999_999_999)).wholeNanoseconds == 7)
        #expect(Duration.nanoseconds(-3).wholeNanoseconds == -3)
        #expect(Duration.seconds(Int64.max / 2).wholeNanoseconds == .max)
        #expect(Duration.seconds(Int64.min / 2).wholeNanoseconds == .min)
    }
}
