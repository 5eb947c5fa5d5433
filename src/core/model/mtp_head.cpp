#include "core/model/mtp_head.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "kernels/ops.h"

namespace les {
namespace {

const float* f32(const WeightView& w) { return reinterpret_cast<const float*>(w.data); }

}  // namespace

MtpHead::MtpHead(const Model& model, KvCache kv, int n_threads)
    : model_(model), layer_(model.hparams().n_layer), kv_(std::move(kv)),
      pool_(std::make_unique<kernels::ThreadPool>(n_threads)) {
  mm_.pool = pool_.get();
}

Result<std::unique_ptr<MtpHead>> MtpHead::create(const Model& model, const MtpHeadParams& p) {
  const Hparams& hp = model.hparams();
  if (hp.n_layer_nextn < 1 || model.weights().layers.size() <= static_cast<size_t>(hp.n_layer) ||
      !model.weights().layers[static_cast<size_t>(hp.n_layer)].nextn.eh_proj.present())
    return unsupported_error("model '" + model.description() + "' has no MTP (nextn) block");
  if (p.n_ctx < 0) return invalid_argument_error("MtpHeadParams.n_ctx " + std::to_string(p.n_ctx) + " is negative");
  KvCacheParams kp;
  kp.n_layer = 1;
  kp.n_ctx = p.n_ctx > 0 ? p.n_ctx : std::min<int32_t>(hp.n_ctx_train, 4096);
  kp.n_embd_k = hp.n_embd_k();
  kp.n_embd_v = hp.n_embd_v();
  kp.head_dim = hp.head_dim;
  kp.head_dim_v = hp.head_dim_v;
  kp.type = p.kv_type;
  LES_ASSIGN_OR_RETURN(KvCache kv, KvCache::create(kp));
  int n_threads = p.n_threads > 0 ? p.n_threads : model.params().n_threads;
  if (n_threads <= 0) n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::unique_ptr<MtpHead>(new MtpHead(model, std::move(kv), n_threads));
}

Status MtpHead::trim(int32_t n_keep) {
  if (n_keep < 0 || n_keep > n_past_)
    return invalid_argument_error("MTP trim to " + std::to_string(n_keep) + " positions, but " +
                                  std::to_string(n_past_) + " are filled");
  n_past_ = n_keep;
  return Status();
}

Status MtpHead::decode(std::span<const int32_t> tokens, std::span<const float> h_prev, ExpertSource& experts,
                       bool all_logits) {
  const Hparams& hp = model_.hparams();
  const ModelWeights& W = model_.weights();
  const LayerWeights& l = W.layers[static_cast<size_t>(layer_)];
  const NextnWeights& nx = l.nextn;
  const int64_t n = static_cast<int64_t>(tokens.size()), E = hp.n_embd, V = hp.n_vocab;
  if (n == 0) return invalid_argument_error("MTP decode: no tokens");
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= V)
      return invalid_argument_error("MTP decode: token id " + std::to_string(tokens[i]) + " at index " +
                                    std::to_string(i) + " out of range [0, " + std::to_string(V) + ")");
  if (h_prev.size() < static_cast<size_t>(n * E))
    return invalid_argument_error("MTP decode: " + std::to_string(h_prev.size()) + " hidden floats for " +
                                  std::to_string(n) + " tokens of n_embd " + std::to_string(E));
  if (n_past_ + n > kv_.n_ctx())
    return context_full_error("MTP context full: " + std::to_string(n_past_) + " + " + std::to_string(n) +
                              " tokens exceed n_ctx " + std::to_string(kv_.n_ctx()));

  const WeightView& embd = nx.embed_tokens.present() ? nx.embed_tokens : W.tok_embd;
  e_.resize(static_cast<size_t>(n * E));
  cat_.resize(static_cast<size_t>(n * 2 * E));
  x_.resize(static_cast<size_t>(n * E));
  h_.resize(static_cast<size_t>(n * E));
  o_.resize(static_cast<size_t>(n * E));
  for (int64_t t = 0; t < n; ++t) {
    LES_RETURN_IF_ERROR(dequantize_row(embd, tokens[t], e_.data() + t * E));
    ops::rms_norm(e_.data() + t * E, f32(nx.enorm), E, hp.rms_eps, cat_.data() + t * 2 * E);
    ops::rms_norm(h_prev.data() + t * E, f32(nx.hnorm), E, hp.rms_eps, cat_.data() + t * 2 * E + E);
  }
  LES_RETURN_IF_ERROR(matmul(nx.eh_proj, cat_.data(), n, x_.data(), mm_));
  for (int64_t t = 0; t < n; ++t) ops::rms_norm(x_.data() + t * E, f32(l.attn_norm), E, hp.rms_eps, h_.data() + t * E);
  LES_RETURN_IF_ERROR(attention_layer(model_, layer_, kv_, 0, n_past_, h_.data(), n, 0, o_.data(), attn_, mm_));
  for (int64_t i = 0; i < n * E; ++i) x_[static_cast<size_t>(i)] += o_[static_cast<size_t>(i)];
  for (int64_t t = 0; t < n; ++t) ops::rms_norm(x_.data() + t * E, f32(l.ffn_norm), E, hp.rms_eps, h_.data() + t * E);
  LES_RETURN_IF_ERROR(ffn_forward(model_, layer_, experts, h_.data(), n, 0, o_.data(), ffn_, mm_, nullptr));
  for (int64_t i = 0; i < n * E; ++i) x_[static_cast<size_t>(i)] += o_[static_cast<size_t>(i)];
  const WeightView& head_norm = nx.shared_head_norm.present() ? nx.shared_head_norm : W.output_norm;
  const WeightView& head = nx.shared_head_head.present() ? nx.shared_head_head : W.output;
  const int64_t out0 = all_logits ? 0 : n - 1;
  for (int64_t t = out0; t < n; ++t) ops::rms_norm(x_.data() + t * E, f32(head_norm), E, hp.rms_eps, h_.data() + t * E);
  std::vector<float> logits(static_cast<size_t>((n - out0) * V));
  LES_RETURN_IF_ERROR(matmul(head, h_.data() + out0 * E, n - out0, logits.data(), mm_));
  n_past_ += static_cast<int32_t>(n);
  hidden_.assign(h_.begin() + (n - 1) * E, h_.begin() + n * E);
  logits_.assign(logits.end() - V, logits.end());
  if (all_logits) {
    logits_all_ = std::move(logits);
  } else {
    logits_all_.clear();
  }
  return Status();
}

}  // namespace les
