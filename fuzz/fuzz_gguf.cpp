// libFuzzer target for the GGUF reader: any byte string must parse or fail
// with a format/unsupported status, never crash, hang or read out of bounds.
// A successful parse is walked completely (every value, every tensor byte).
//
// Build: CC=clang CXX=clang++ cmake -DLES_BUILD_FUZZ=ON -DLES_BUILD_TESTS=OFF -DLES_BUILD_BENCH=OFF
// Run:   ./fuzz_gguf -max_total_time=60 corpus_dir   (seeds: fuzz/corpus/gguf)
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/gguf/gguf_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = les::gguf::GgufFile::parse(data, size);
  if (!r.ok()) {
    const auto c = r.status().code();
    if (c != les::StatusCode::format && c != les::StatusCode::unsupported) std::abort();
    return 0;
  }
  const auto& g = **r;
  uint64_t h = 0;
  for (const auto& kv : g.metadata()) {
    h += kv.key.size();
    if (const auto* a = kv.value.as_array()) {
      for (uint64_t i = 0; i < a->count; ++i) {
        auto v = a->value_at(i);
        if (!v) std::abort();  // count and storage must agree
        if (const auto* s = v->as_string()) h += s->size();
      }
    }
  }
  for (const auto& t : g.tensors()) {
    auto span = g.tensor_data(t);
    if (span.size() != t.n_bytes) std::abort();
    for (uint8_t b : span) h += b;
  }
  volatile uint64_t sink = h;
  (void)sink;
  return 0;
}
