// swift-tools-version:5.7
// Swift package for LES: `CLes` imports les.h directly (a system-library target
// with a module map; the header and libles come from an installed prefix found
// through pkg-config), `LES` is a small idiomatic wrapper over it.
// Untested here (no Swift toolchain on the LES build machine): see README.md.
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
  ]
)
