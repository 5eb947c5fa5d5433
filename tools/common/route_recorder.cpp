// RouteRecorder (route_recorder.h): keeps the router's choices by position
// and writes them as route_trace v1.
#include "common/route_recorder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace les::tool {

void RouteRecorder::callback(int32_t layer, int32_t pos, int32_t n_tokens, int32_t n_expert_used,
                             const int32_t* selected, const float* weights, void* user_data) {
  static_cast<RouteRecorder*>(user_data)->on(layer, pos, n_tokens, n_expert_used, selected, weights);
}

void RouteRecorder::on(int32_t layer, int32_t pos, int32_t n_tokens, int32_t k, const int32_t* selected,
                       const float* weights) {
  if (layer < 0 || layer >= n_layer_ || pos < 0 || n_tokens < 0 || k <= 0 || k > k_ || selected == nullptr) {
    if (error_.empty())
      error_ = "route callback outside the model's shape (layer " + std::to_string(layer) + ", position " +
               std::to_string(pos) + ", top-k " + std::to_string(k) + ")";
    return;
  }
  for (int32_t i = 0; i < n_tokens; ++i) {
    const int32_t* sel = selected + static_cast<size_t>(i) * static_cast<size_t>(k);
    for (int32_t j = 0; j < k; ++j)
      if (sel[j] < 0 || sel[j] >= n_expert_) {
        if (error_.empty()) error_ = "route callback named expert " + std::to_string(sel[j]);
        return;
      }
  }
  const size_t need = static_cast<size_t>(pos) + static_cast<size_t>(n_tokens);
  if (routes_.size() < need) routes_.resize(need, std::vector<Route>(static_cast<size_t>(n_layer_)));
  for (int32_t i = 0; i < n_tokens; ++i) {
    Route& r = routes_[static_cast<size_t>(pos + i)][static_cast<size_t>(layer)];
    const size_t off = static_cast<size_t>(i) * static_cast<size_t>(k);
    r.experts.assign(selected + off, selected + off + k);
    if (weights != nullptr)
      r.weights.assign(weights + off, weights + off + k);
    else
      r.weights.assign(static_cast<size_t>(k), 0.0f);
  }
}

int64_t RouteRecorder::n_groups() const noexcept {
  int64_t n = 0;
  for (const auto& pos : routes_)
    for (const Route& r : pos) n += r.experts.empty() ? 0 : 1;
  return n;
}

std::string RouteRecorder::write(const std::string& path, const std::string& model_name, const std::string& arch,
                                 const std::vector<uint64_t>& expert_bytes, int32_t n_prompt,
                                 int32_t n_positions) const {
  if (expert_bytes.size() != static_cast<size_t>(n_layer_))
    return "route trace '" + path + "': " + std::to_string(expert_bytes.size()) + " expert sizes for " +
           std::to_string(n_layer_) + " layers";
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) return "cannot open route trace '" + path + "' for writing: " + std::strerror(errno);
  auto clean = [](std::string s) {
    for (char& ch : s)
      if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') ch = '_';
    return s.empty() ? std::string("unknown") : s;
  };
  std::fprintf(f.get(), "# route_trace v1\n# model=%s arch=%s n_layer=%d n_expert=%d n_expert_used=%d\n",
               clean(model_name).c_str(), clean(arch).c_str(), n_layer_, n_expert_, k_);
  for (int32_t l = 0; l < n_layer_; ++l)
    std::fprintf(f.get(), "# layer=%d expert_bytes=%llu\n", l,
                 static_cast<unsigned long long>(expert_bytes[static_cast<size_t>(l)]));
  std::fputs("turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n", f.get());
  const size_t end = std::min(routes_.size(), static_cast<size_t>(n_positions < 0 ? 0 : n_positions));
  const size_t prompt_end = std::min(end, static_cast<size_t>(n_prompt < 0 ? 0 : n_prompt));
  auto rows = [&](size_t p, int32_t l, int phase) {
    const Route& r = routes_[p][static_cast<size_t>(l)];
    for (size_t s = 0; s < r.experts.size(); ++s)
      std::fprintf(f.get(), "0,%d,%zu,%d,%zu,%d,%.5g,0,0\n", phase, p, l, s, r.experts[s],
                   static_cast<double>(r.weights[s]));
  };
  for (int32_t l = 0; l < n_layer_; ++l)  // the prompt layer-major, as a batched prefill routes it
    for (size_t p = 0; p < prompt_end; ++p) rows(p, l, 0);
  for (size_t p = prompt_end; p < end; ++p)
    for (int32_t l = 0; l < n_layer_; ++l) rows(p, l, 1);
  if (std::ferror(f.get()) != 0) return "cannot write route trace '" + path + "'";
  if (std::fclose(f.release()) != 0) return "cannot write route trace '" + path + "': " + std::strerror(errno);
  return "";
}

}  // namespace les::tool
