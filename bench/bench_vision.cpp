// Encode time of the MiniCPM-V 4.6 vision encoder (vision/vision_encoder.h):
// milliseconds per image chunk, with the time of each stage.
//
//   bench_vision [--mmproj FILE | --siglip] [--layers N] [--sizes 224x224,448x448]
//                [--threads N] [--iters N] [--json]
//
// --mmproj: an mmproj GGUF (default: the fixture's tiny random one, 64 wide).
// --siglip: writes a random-weight mmproj of the real encoder's shape to a
//   temporary file first: SigLIP-so400m (E 1152, FFN 4304, 16 heads, 27 blocks
//   unless --layers, merger after block 0), ViT-merger MLP 3E and projector
//   6E wide (the fixture's ratios), output width 2048, F16 matrices. Weights
//   are random, so only the time means anything.
// Each size is encoded once to warm up, then `iters` times (default 3); the
// best time is reported, with the stage split of that run (time from the
// previous tap to each tap). The pool has --threads participants (default 2).
// Comparison with llama.cpp's llama-mtmd-cli on the same files is done
// separately (bench/results). It measures and prints; it asserts nothing.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.h"
#include "core/gguf/gguf_writer.h"
#include "kernels/fp16.h"
#include "kernels/kernels.h"
#include "kernels/thread_pool.h"
#include "vision/mmproj_model.h"
#include "vision/vision_encoder.h"

namespace {

using les::bench::Clock;
using les::bench::seconds_since;
using namespace les;

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "bench_vision: %s\n", m.c_str());
  std::exit(2);
}

// A random-weight mmproj of SigLIP-so400m's shape at `path` (see the header).
void write_siglip(const std::string& path, int layers) {
  const int64_t E = 1152, F = 4304, H = 16, P = 14, FD = 3 * E, FM = 6 * E, OUT = 2048;
  gguf::GgufWriter w;
  auto ok = [](const Status& s) {
    if (!s.ok()) die(s.message());
  };
  ok(w.set_string("general.architecture", "clip"));
  ok(w.set_bool("clip.has_vision_encoder", true));
  ok(w.set_string("clip.projector_type", "minicpmv4_6"));
  ok(w.set_bool("clip.use_gelu", true));
  ok(w.set_u32("clip.vision.image_size", 448));
  ok(w.set_u32("clip.vision.patch_size", P));
  ok(w.set_u32("clip.vision.embedding_length", E));
  ok(w.set_u32("clip.vision.feed_forward_length", F));
  ok(w.set_u32("clip.vision.block_count", static_cast<uint32_t>(layers)));
  ok(w.set_u32("clip.vision.projection_dim", OUT));
  ok(w.set_u32("clip.vision.attention.head_count", H));
  ok(w.set_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f));
  const double half[3] = {0.5, 0.5, 0.5};
  ok(w.set_array_numbers("clip.vision.image_mean", gguf::ValueType::FLOAT32, half));
  ok(w.set_array_numbers("clip.vision.image_std", gguf::ValueType::FLOAT32, half));
  const int64_t wa[1] = {0};
  ok(w.set_array_ints("clip.vision.wa_layer_indexes", gguf::ValueType::INT32, wa));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint8_t> buf;
  std::vector<float> pool16;
  auto f16 = [&](const std::string& name, std::vector<int64_t> ne, float scale) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    // Tiles a pool of 65521 (prime) random halves from a random start: random
    // enough for timing, and fast to write for a 400M-parameter model.
    if (pool16.empty()) {
      pool16.resize(65521);
      for (auto& x : pool16) x = u(rng);
    }
    buf.resize(static_cast<size_t>(n) * 2);
    auto* h = reinterpret_cast<les::fp16_t*>(buf.data());
    size_t at = rng() % pool16.size();
    std::vector<les::fp16_t> scaled(pool16.size());
    for (size_t i = 0; i < pool16.size(); ++i) scaled[i] = les::fp32_to_fp16(pool16[i] * scale);
    for (int64_t i = 0; i < n; ++i) {
      h[i] = scaled[at];
      if (++at == scaled.size()) at = 0;
    }
    ok(w.add_tensor(name, GgmlType::F16, ne, buf.data(), buf.size()));
  };
  auto f32 = [&](const std::string& name, int64_t n, float base, float scale) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = base + u(rng) * scale;
    ok(w.add_tensor(name, GgmlType::F32, std::vector<int64_t>{n}, v.data(), v.size() * sizeof(float)));
  };
  const float ws = 0.03f;
  f16("v.patch_embd.weight", {P, P, 3, E}, ws);
  f32("v.patch_embd.bias", E, 0.0f, 0.02f);
  f16("v.position_embd.weight", {E, 4900}, 0.2f);
  for (int il = 0; il < layers; ++il) {
    const std::string b = "v.blk." + std::to_string(il) + ".";
    for (const char* ln : {"ln1", "ln2"}) {
      f32(b + ln + ".weight", E, 1.0f, 0.1f);
      f32(b + ln + ".bias", E, 0.0f, 0.02f);
    }
    for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      f16(b + m + ".weight", {E, E}, ws);
      f32(b + m + ".bias", E, 0.0f, 0.02f);
    }
    f16(b + "ffn_up.weight", {E, F}, ws);
    f32(b + "ffn_up.bias", F, 0.0f, 0.02f);
    f16(b + "ffn_down.weight", {F, E}, ws);
    f32(b + "ffn_down.bias", E, 0.0f, 0.02f);
  }
  const std::string vm = "v.vit_merger.";
  f32(vm + "ln1.weight", E, 1.0f, 0.1f);
  f32(vm + "ln1.bias", E, 0.0f, 0.02f);
  for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
    f16(vm + m + ".weight", {E, E}, ws);
    f32(vm + m + ".bias", E, 0.0f, 0.02f);
  }
  f32(vm + "ds_ln.weight", 4 * E, 1.0f, 0.1f);
  f32(vm + "ds_ln.bias", 4 * E, 0.0f, 0.02f);
  f16(vm + "ds_ffn_up.weight", {4 * E, FD}, ws);
  f32(vm + "ds_ffn_up.bias", FD, 0.0f, 0.02f);
  f16(vm + "ds_ffn_down.weight", {FD, E}, ws);
  f32(vm + "ds_ffn_down.bias", E, 0.0f, 0.02f);
  f32("v.post_ln.weight", E, 1.0f, 0.1f);
  f32("v.post_ln.bias", E, 0.0f, 0.02f);
  f32("mm.input_norm.weight", 4 * E, 1.0f, 0.1f);
  f32("mm.input_norm.bias", 4 * E, 0.0f, 0.02f);
  f16("mm.up.weight", {4 * E, FM}, ws);
  f32("mm.up.bias", FM, 0.0f, 0.02f);
  f16("mm.down.weight", {FM, OUT}, ws);
  f32("mm.down.bias", OUT, 0.0f, 0.02f);
  ok(w.write_to_file(path));
}

std::vector<std::pair<int64_t, int64_t>> parse_sizes(const std::string& s) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const std::string& e : les::bench::split(s)) {
    long long a = 0, b = 0;
    if (std::sscanf(e.c_str(), "%lldx%lld", &a, &b) != 2 || a <= 0 || b <= 0) die("--sizes wants WxH,WxH,...");
    out.emplace_back(a, b);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mmproj = std::string(LES_FIXTURES_DIR) + "/multimodal/mmproj-minicpmv4_6-tiny-F16.gguf";
  if (const char* env = std::getenv("LES_FIXTURES_DIR")) mmproj = std::string(env) + "/multimodal/mmproj-minicpmv4_6-tiny-F16.gguf";
  bool siglip = false, json = false;
  int layers = 27, threads = 2, iters = 3;
  std::string sizes = "224x224,448x448";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mmproj") mmproj = next();
    else if (a == "--siglip") siglip = true;
    else if (a == "--layers") layers = std::atoi(next().c_str());
    else if (a == "--sizes") sizes = next();
    else if (a == "--threads") threads = std::atoi(next().c_str());
    else if (a == "--iters") iters = std::atoi(next().c_str());
    else if (a == "--json") json = true;
    else die("unknown option " + a);
  }
  if (layers < 1 || layers > 64 || threads < 1 || threads > 256 || iters < 1) die("bad --layers/--threads/--iters");
  std::string tmp;
  if (siglip) {
    tmp = (std::filesystem::temp_directory_path() / ("bench_vision_siglip_" + std::to_string(layers) + ".gguf")).string();
    const auto t0 = Clock::now();
    write_siglip(tmp, layers);
    std::fprintf(stderr, "bench_vision: wrote %s (%d blocks) in %.1f s\n", tmp.c_str(), layers, seconds_since(t0));
    mmproj = tmp;
  }
  auto model = vision::MmprojModel::load(mmproj);
  if (!model.ok()) die(model.status().message());
  const auto& hp = (*model)->hparams();
  kernels::ThreadPool pool(threads);
  vision::VisionEncoder enc(**model, &pool);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const char* tier = kernels::kernel_tier_name(kernels::best_kernel_tier());
  if (json) std::printf("[\n");
  bool first = true;
  for (auto [w, h] : parse_sizes(sizes)) {
    std::vector<float> img(static_cast<size_t>(3 * w * h));
    for (auto& x : img) x = u(rng);
    std::vector<float> out;
    std::vector<std::pair<std::string, double>> stages, best_stages;
    Clock::time_point last;
    auto tap = [&](std::string_view stage, const float*, int64_t, int64_t) {
      stages.emplace_back(std::string(stage), seconds_since(last) * 1e3);
      last = Clock::now();
    };
    double best = 1e30;
    for (int it = 0; it <= iters; ++it) {
      stages.clear();
      const auto t0 = Clock::now();
      last = t0;
      const Status st = enc.encode(img.data(), w, h, out, tap);
      const double ms = seconds_since(t0) * 1e3;
      if (!st.ok()) die(st.message());
      if (it > 0 && ms < best) {
        best = ms;
        best_stages = stages;
      }
    }
    const int64_t tokens = (*model)->n_output_tokens(w, h);
    if (json) {
      std::printf("%s  {\"mmproj\": \"%s\", \"n_embd\": %lld, \"n_layer\": %lld, \"width\": %lld, \"height\": %lld, "
                  "\"tokens\": %lld, \"threads\": %d, \"tier\": \"%s\", \"ms\": %.3f}",
                  first ? "" : ",\n", siglip ? "siglip-random" : mmproj.c_str(), static_cast<long long>(hp.n_embd),
                  static_cast<long long>(hp.n_layer), static_cast<long long>(w), static_cast<long long>(h),
                  static_cast<long long>(tokens), threads, tier, best);
    } else {
      std::printf("%lldx%lld: %lld tokens, E %lld, %lld blocks, %d threads, tier %s: %.2f ms per chunk\n",
                  static_cast<long long>(w), static_cast<long long>(h), static_cast<long long>(tokens),
                  static_cast<long long>(hp.n_embd), static_cast<long long>(hp.n_layer), threads, tier, best);
      for (const auto& [name, ms] : best_stages) std::printf("  %-26s %9.2f ms\n", name.c_str(), ms);
    }
    first = false;
  }
  if (json) std::printf("\n]\n");
  if (!tmp.empty()) std::filesystem::remove(tmp);
  return 0;
}
