@testable import AttachmentFetcher

extension TransferEngine {
    /// An engine for tests that drive transfers directly: loopback allowed, small limits.
    static func forTests(connectionsPerHost: Int = 8) throws -> TransferEngine {
        var addressPolicy = PushAttachmentFetcher.Configuration.AddressPolicy()
        addressPolicy.allowsPrivateNetworks = true
        return try TransferEngine(
            configuration: .init(
                sizeLimits: .init(), maximumConnectionsPerHost: connectionsPerHost, maximumConcurrentTransfers: 8, maximumRedirects: 5,
                userAgent: "test", addressPolicy: addressPolicy),
            logger: .init(label: "test"), classifier: MediaClassifier())
    }
}
