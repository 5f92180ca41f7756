@testable import AttachmentFetcher
import Testing

/// libcurl 7.88's words for an HTTP/2 stream's end, read for the code the stream was reset with:
/// the origin's answer (not retried) or, for `CANCEL`, perhaps its connection's teardown.
@Suite("HTTP/2 stream resets in libcurl's words")
struct HTTP2StreamResetTests {
    @Test("A reset's code and name are read; CANCEL alone may be a teardown; other words tell of no reset")
    func parsed() {
        let protocolError = HTTP2StreamReset(libcurlMessage: "HTTP/2 stream 1017 was not closed cleanly: PROTOCOL_ERROR (err 1)")
        #expect(protocolError?.name == "PROTOCOL_ERROR" && protocolError?.code == 1)
        #expect(protocolError?.isConnectionTeardown == false)
        let cancel = HTTP2StreamReset(libcurlMessage: "HTTP/2 stream 5 was not closed cleanly: CANCEL (err 8)")
        #expect(cancel?.code == 8)
        #expect(cancel?.isConnectionTeardown == true)
        #expect(HTTP2StreamReset(libcurlMessage: "HTTP/2 stream 3 was not closed cleanly: unknown (err 99)")?.code == 99)
        for other in [
            "HTTP/2 stream 1 was not closed cleanly before end of the underlying stream",
            "Error in the HTTP2 framing layer", "HTTP/2 stream 1 was not closed cleanly: PROTOCOL_ERROR (err x)", "",
        ] {
            #expect(HTTP2StreamReset(libcurlMessage: other) == nil, "\(other)")
        }
    }
}
