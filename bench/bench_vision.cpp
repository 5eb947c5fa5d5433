// Encode time of the MiniCPM-V 4.6 vision encoder (vision/vision_encoder.h):
// milliseconds per image chunk, with the time of each stage, or per image.
//
//   bench_vision [--mmproj FILE | --siglip] [--layers N] [--sizes 224x224,448x448]
//                [--images A.ppm,B.png] [--threads N] [--iters N] [--json]
//                [--write-mmproj FILE] [--write-text FILE]
//
// --mmproj: an mmproj GGUF (default: the fixture's tiny random one, 64 wide).
// --siglip: writes a random-weight mmproj of the real encoder's shape to a
//   temporary file first (vision_synth.h: SigLIP-so400m, E 1152, FFN 4304, 16
//   heads, 27 blocks unless --layers, output width 2048, image size 448, F16).
//   Weights are random, so only the time means anything.
// --images: instead of random chunks of --sizes, whole image files: decoded,
//   preprocessed (overview + slices as llama.cpp) once, then every chunk
//   encoded; the time per image is the sum of its chunks' encode times (what
//   llama-mtmd-cli logs as "batch encoding done in N ms" per chunk), with each
//   chunk's size and best time.
// --write-mmproj FILE (with --siglip): keep the mmproj at FILE. --write-text
//   FILE: also write a one-block llama text model of the mmproj's output width
//   with the fixture vocabulary and its image marker tokens, so llama-mtmd-cli
//   can run the same mmproj (bench/README.md, "Vision encode").
// Each size (image) is encoded once to warm up, then `iters` times (default
// 3); the best time is reported, with the stage split of that run (time from
// the previous tap to each tap). The pool has --threads participants
// (default 2). It measures and prints; it asserts nothing.
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
#include "kernels/kernels.h"
#include "kernels/thread_pool.h"
#include "vision/image_decode.h"
#include "vision/image_preprocess.h"
#include "vision/mmproj_model.h"
#include "vision/vision_encoder.h"
#include "vision_synth.h"

namespace {

using les::bench::Clock;
using les::bench::seconds_since;
using namespace les;

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "bench_vision: %s\n", m.c_str());
  std::exit(2);
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

// Best-of-iters encode of one chunk; stages of the best run when asked.
double time_chunk(vision::VisionEncoder& enc, const float* img, int64_t w, int64_t h, int iters,
                  std::vector<std::pair<std::string, double>>* best_stages) {
  std::vector<float> out;
  std::vector<std::pair<std::string, double>> stages;
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
    const Status st = enc.encode(img, w, h, out, tap);
    const double ms = seconds_since(t0) * 1e3;
    if (!st.ok()) die(st.message());
    if (it > 0 && ms < best) {
      best = ms;
      if (best_stages != nullptr) *best_stages = stages;
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fixtures = LES_FIXTURES_DIR;
  if (const char* env = std::getenv("LES_FIXTURES_DIR")) fixtures = env;
  std::string mmproj = fixtures + "/multimodal/mmproj-minicpmv4_6-tiny-F16.gguf";
  bool siglip = false, json = false;
  int layers = 27, threads = 2, iters = 3;
  std::string sizes = "224x224,448x448", images, write_mmproj, write_text;
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
    else if (a == "--images") images = next();
    else if (a == "--threads") threads = std::atoi(next().c_str());
    else if (a == "--iters") iters = std::atoi(next().c_str());
    else if (a == "--json") json = true;
    else if (a == "--write-mmproj") write_mmproj = next();
    else if (a == "--write-text") write_text = next();
    else die("unknown option " + a);
  }
  if (layers < 1 || layers > 64 || threads < 1 || threads > 256 || iters < 1) die("bad --layers/--threads/--iters");
  std::string tmp;
  if (siglip) {
    const std::string path =
        !write_mmproj.empty()
            ? write_mmproj
            : (std::filesystem::temp_directory_path() / ("bench_vision_siglip_" + std::to_string(layers) + ".gguf"))
                  .string();
    if (write_mmproj.empty()) tmp = path;
    const auto t0 = Clock::now();
    les::bench::write_siglip_mmproj(path, layers);
    std::fprintf(stderr, "bench_vision: wrote %s (%d blocks) in %.1f s\n", path.c_str(), layers, seconds_since(t0));
    mmproj = path;
  }
  auto model = vision::MmprojModel::load(mmproj);
  if (!model.ok()) die(model.status().message());
  const auto& hp = (*model)->hparams();
  if (!write_text.empty()) {
    les::bench::write_marker_text_model(write_text, fixtures + "/multimodal/qwen35moe-mm-F16.gguf", hp.n_embd_out);
    std::fprintf(stderr, "bench_vision: wrote %s (llama, n_embd %lld)\n", write_text.c_str(),
                 static_cast<long long>(hp.n_embd_out));
  }
  kernels::ThreadPool pool(threads);
  vision::VisionEncoder enc(**model, &pool);
  const char* tier = kernels::kernel_tier_name(kernels::best_kernel_tier());
  const char* model_name = siglip ? "siglip-random" : mmproj.c_str();
  if (json) std::printf("[\n");
  bool first = true;
  if (!images.empty()) {
    vision::PreprocessParams pp;
    pp.geometry.image_size = static_cast<int32_t>(hp.image_size);
    pp.geometry.patch_size = static_cast<int32_t>(hp.patch_size);
    pp.geometry.n_merge = static_cast<int32_t>(hp.n_merge);
    pp.mean = hp.image_mean;
    pp.std = hp.image_std;
    for (const std::string& file : les::bench::split(images)) {
      auto img = vision::decode_image_file(file);
      if (!img.ok()) die(img.status().message());
      auto pre = vision::preprocess_image(*img, pp);
      if (!pre.ok()) die(pre.status().message());
      double total = 0;
      std::string detail;
      for (const auto& ch : pre->chunks) {
        const double ms = time_chunk(enc, ch.pixels.data(), ch.width, ch.height, iters, nullptr);
        total += ms;
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%dx%d %.2f ms", detail.empty() ? "" : ", ", ch.width, ch.height, ms);
        detail += buf;
      }
      if (json) {
        std::printf("%s  {\"mmproj\": \"%s\", \"image\": \"%s\", \"chunks\": %zu, \"tokens\": %lld, "
                    "\"threads\": %d, \"tier\": \"%s\", \"ms\": %.3f}",
                    first ? "" : ",\n", model_name, file.c_str(), pre->chunks.size(),
                    static_cast<long long>(pre->n_tokens()), threads, tier, total);
      } else {
        std::printf("%s: %zu chunks, %lld tokens, %d threads, tier %s: %.2f ms per image (%s)\n", file.c_str(),
                    pre->chunks.size(), static_cast<long long>(pre->n_tokens()), threads, tier, total,
                    detail.c_str());
      }
      first = false;
    }
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto [w, h] : images.empty() ? parse_sizes(sizes) : std::vector<std::pair<int64_t, int64_t>>{}) {
    std::vector<float> img(static_cast<size_t>(3 * w * h));
    for (auto& x : img) x = u(rng);
    std::vector<std::pair<std::string, double>> best_stages;
    const double best = time_chunk(enc, img.data(), w, h, iters, &best_stages);
    const int64_t tokens = (*model)->n_output_tokens(w, h);
    if (json) {
      std::printf("%s  {\"mmproj\": \"%s\", \"n_embd\": %lld, \"n_layer\": %lld, \"width\": %lld, \"height\": %lld, "
                  "\"tokens\": %lld, \"threads\": %d, \"tier\": \"%s\", \"ms\": %.3f}",
                  first ? "" : ",\n", model_name, static_cast<long long>(hp.n_embd),
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
