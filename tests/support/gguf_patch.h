// Test helper: golden models for formats whose llama-quantize files are too
// big to ship. A patch GGUF (tests/core/model/data/*.patch.gguf, written by
// make_golden_patch.py) holds some tensors of a llama-quantize output byte for
// byte; the model is a shared F16 fixture with those tensors replaced, built
// the same way as the model llama.cpp ran for the committed reference.
#pragma once

#include <string>

namespace les::test {

// Writes `dst`: `base`'s metadata and tensors in order, every tensor the GGUF
// `patch` also holds replaced by the patch's (type, shape, bytes). REQUIREs
// that every patch tensor replaces one of `base`'s and that writing succeeds.
void write_patched_gguf(const std::string& base, const std::string& patch, const std::string& dst);

// A golden patch model built once per process in temp_dir(): `base_fixture`
// (relative to the fixtures root) patched by tests/core/model/data/<patch>.
// Returns "" after marking the test skipped when the base fixture is absent.
std::string golden_patch_model(const std::string& base_fixture, const std::string& patch);

}  // namespace les::test
