// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "AttachmentFetcher",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AttachmentFetcher", targets: ["AttachmentFetcher"]),
        .library(name: "MockCDN", targets: ["MockCDN", "MockCDNTLS"]),
        .executable(name: "fetch-attachment", targets: ["fetch-attachment"]),
        .executable(name: "mock-cdn", targets: ["mock-cdn"]),
        .executable(name: "load-test", targets: ["load-test"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // Thin C shims over libcurl's variadic API (curl_easy_setopt & co.).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // libmagic's header, exposed to Swift.
        .target(name: "CMagic", linkerSettings: [.linkedLibrary("magic")]),
        .target(
            name: "AttachmentFetcher",
            dependencies: [
                "CCurl",
                "CMagic",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The blocking pool the cache's file-system work runs on (`BlockingIO`).
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // An HTTP/1.1 origin on SwiftNIO (and, given a certificate, HTTPS with HTTP/2) that serves
        // synthetic media and injects faults: the test server, the `mock-cdn` executable and the
        // load test all use it.
        .target(
            name: "MockCDN",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // `openssl` for a TLS certificate: Foundation's `Process.run()` can crash on Linux
                // in a process with many descriptors open (a buffer over-read listing /proc/self/fd).
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // HTTPS with HTTP/2 for the mock CDN: a target of its own, so that fetch-attachment, whose
        // demo needs only plain HTTP, links no TLS stack.
        .target(
            name: "MockCDNTLS",
            dependencies: [
                "MockCDN",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),
        .executableTarget(
            name: "fetch-attachment",
            dependencies: [
                "AttachmentFetcher",
                "MockCDN",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
                // The report's Content-Security-Policy names its one script by its SHA-256.
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "mock-cdn",
            dependencies: [
                "MockCDN",
                "MockCDNTLS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // Replays synchronized download spikes against the mock CDN and compares fetch-attachment
        // with curl --parallel and URLSession, each run as a child process and measured alike.
        .executableTarget(
            name: "load-test",
            dependencies: [
                // For `Locked`, the package's one lock.
                "AttachmentFetcher",
                "MockCDN",
                "MockCDNTLS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // The URLSession baseline the load test runs: what a Swift developer on Linux would write.
        .executableTarget(
            name: "urlsession-fetch",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "AttachmentFetcherTests",
            dependencies: [
                "AttachmentFetcher",
                "MockCDN",
                "MockCDNTLS",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
    ]
)
