// swift-tools-version:6.1
// Benchmarks of AttachmentFetcher, kept out of the main package so that its users never resolve
// package-benchmark or AsyncHTTPClient. Run from this directory:
//
//   swift package benchmark                      # everything
//   swift package benchmark --filter 'spike.*'   # one group (the regex must match the whole name)
//   swift package benchmark thresholds check     # against Thresholds/
//   swift package --allow-writing-to-package-directory benchmark thresholds update
import PackageDescription

let package = Package(
    name: "AttachmentFetcherBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AttachmentFetcher", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .executableTarget(
            name: "AttachmentFetcherBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AttachmentFetcher", package: "AttachmentFetcher"),
                .product(name: "MockCDN", package: "AttachmentFetcher"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Benchmarks/AttachmentFetcherBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ]
)
