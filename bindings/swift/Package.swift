// swift-tools-version:5.7
// Swift package for LES: `CLes` imports les.h directly (a system-library target
// with a module map; the header and libles come from pkg-config's `les`: an
// installed prefix, or the build tree's build/swift/pkgconfig/les.pc), `LES` is a
// small idiomatic wrapper over it, `LESTests` its XCTest suite on the fixtures.
// Built and tested on Linux by CTest's swift_package_test (run_swift_test.sh).
import PackageDescription

let package = Package(
  name: "LES",
  platforms: [.macOS(.v12), .iOS(.v15)],
  products: [
    .library(name: "LES", targets: ["LES"]),
  ],
  targets: [
    .systemLibrary(
      name: "CLes",
      path: "Sources/CLes",
      pkgConfig: "les",
      providers: []),
    .target(
      name: "LES",
      dependencies: ["CLes"],
      path: "Sources/LES"),
    .testTarget(
      name: "LESTests",
      dependencies: ["LES", "CLes"],
      path: "Tests/LESTests"),
  ]
)
