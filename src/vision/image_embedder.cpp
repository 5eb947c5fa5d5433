// See image_embedder.h.
#include "vision/image_embedder.h"

#include <algorithm>
#include <chrono>

#include "vision/image_decode.h"
#include "vision/image_preprocess.h"
#include "vision/vision_encoder.h"

namespace les::vision {
namespace {

uint64_t view_bytes(const WeightView& w) {
  return w.present() ? static_cast<uint64_t>(w.row_bytes) * static_cast<uint64_t>(std::max<int64_t>(1, w.ne[1])) *
                           static_cast<uint64_t>(std::max<int64_t>(1, w.ne[2]))
                     : 0;
}

// The hyper-parameters a reloaded file must repeat (everything the shapes and
// the preprocessing depend on).
bool same_hparams(const MmprojHparams& a, const MmprojHparams& b) {
  return a.image_size == b.image_size && a.patch_size == b.patch_size && a.n_embd == b.n_embd && a.n_ff == b.n_ff &&
         a.n_layer == b.n_layer && a.n_head == b.n_head && a.eps == b.eps && a.image_mean == b.image_mean &&
         a.image_std == b.image_std && a.insert_layer_id == b.insert_layer_id && a.n_merge == b.n_merge &&
         a.n_ff_ds == b.n_ff_ds && a.n_ff_mm == b.n_ff_mm && a.n_embd_out == b.n_embd_out;
}

}  // namespace

uint64_t mmproj_weight_bytes(const MmprojModel& m) {
  const MmprojWeights& w = m.weights();
  uint64_t n = view_bytes(w.patch_w) + view_bytes(w.patch_b) + view_bytes(w.pos_embd) + view_bytes(w.pre_ln_w) +
               view_bytes(w.pre_ln_b) + view_bytes(w.post_ln_w) + view_bytes(w.post_ln_b);
  for (const VitLayerWeights& L : w.layers)
    for (const WeightView* v : {&L.ln1_w, &L.ln1_b, &L.q_w, &L.k_w, &L.v_w, &L.o_w, &L.q_b, &L.k_b, &L.v_b, &L.o_b,
                                &L.ls1, &L.ls2, &L.ln2_w, &L.ln2_b, &L.up_w, &L.down_w, &L.up_b, &L.down_b})
      n += view_bytes(*v);
  const VitMergerWeights& M = w.merger;
  for (const WeightView* v : {&M.ln1_w, &M.ln1_b, &M.q_w, &M.k_w, &M.v_w, &M.o_w, &M.q_b, &M.k_b, &M.v_b, &M.o_b,
                              &M.ds_ln_w, &M.ds_ln_b, &M.ds_up_w, &M.ds_up_b, &M.ds_down_w, &M.ds_down_b})
    n += view_bytes(*v);
  const ProjectorWeights& P = w.proj;
  for (const WeightView* v : {&P.norm_w, &P.norm_b, &P.up_w, &P.up_b, &P.down_w, &P.down_b}) n += view_bytes(*v);
  return n;
}

uint64_t encode_scratch_bytes(const MmprojHparams& hp) {
  const uint64_t S = static_cast<uint64_t>(hp.image_size), p = static_cast<uint64_t>(hp.patch_size);
  const uint64_t np = (S / p) * (S / p);  // patches of one full chunk
  const uint64_t E = static_cast<uint64_t>(hp.n_embd), ff = static_cast<uint64_t>(hp.n_ff);
  const uint64_t H = static_cast<uint64_t>(hp.n_head);
  const uint64_t ff_ds = static_cast<uint64_t>(hp.n_ff_ds), ff_mm = static_cast<uint64_t>(hp.n_ff_mm);
  const uint64_t out = static_cast<uint64_t>(hp.n_embd_out);
  // Floats alive during one chunk: im2col rows, x/y residual rows, LayerNorm,
  // Q/K/V/attention-output rows, the scores of every head, the FFN rows, the
  // merger's 4E gather + its FFN, the projector's 4E gather + its FFN + out,
  // and the matmul input quantised to F16 (half a float per element).
  uint64_t floats = np * 3 * p * p + np * (2 + 1 + 4) * E + H * np * np + np * ff * 2 + (np / 4) * (4 * E + ff_ds) * 2 +
                    (np / 16) * (4 * E + ff_mm + out) * 2 + np * std::max({3 * p * p, 4 * E, ff}) / 2;
  // The image's chunks: normalised pixels and embeddings of 1 + kMaxSlices chunks.
  floats += static_cast<uint64_t>(1 + kMaxSlices) * (3 * S * S + (np / 16) * out);
  return floats * sizeof(float);
}

ImageEmbedder::~ImageEmbedder() = default;

Result<std::unique_ptr<ImageEmbedder>> ImageEmbedder::create(const std::string& path, const ImageEmbedderParams& p) {
  if (p.n_threads < 1)
    return invalid_argument_error("vision: n_threads " + std::to_string(p.n_threads) + " (at least 1)");
  LES_ASSIGN_OR_RETURN(std::unique_ptr<MmprojModel> m, MmprojModel::load(path, p.text_n_embd));
  std::unique_ptr<ImageEmbedder> e(new ImageEmbedder());
  e->path_ = path;
  e->p_ = p;
  e->hp_ = m->hparams();
  e->weight_bytes_ = mmproj_weight_bytes(*m);
  e->scratch_bytes_ = encode_scratch_bytes(e->hp_);
  e->pool_ = std::make_unique<kernels::ThreadPool>(p.n_threads);
  e->stats_.weight_bytes = e->weight_bytes_;
  e->stats_.n_weight_loads = 1;
  e->stats_.memory_bytes = e->memory_bytes();
  if (!p.release_after_encode) {
    e->model_ = std::move(m);
    e->stats_.weight_bytes_resident = e->weight_bytes_;
  }
  return e;
}

Status ImageEmbedder::ensure_loaded() {
  if (model_) return Status();
  LES_ASSIGN_OR_RETURN(std::unique_ptr<MmprojModel> m, MmprojModel::load(path_, p_.text_n_embd));
  if (!same_hparams(m->hparams(), hp_))
    return format_error("mmproj '" + path_ + "' changed since it was loaded (other hyper-parameters)");
  if (mmproj_weight_bytes(*m) != weight_bytes_)
    return format_error("mmproj '" + path_ + "' changed since it was loaded (other tensor sizes)");
  model_ = std::move(m);
  std::lock_guard<std::mutex> ls(stats_mu_);
  ++stats_.n_weight_loads;
  stats_.weight_bytes_resident = weight_bytes_;
  return Status();
}

Result<EncodedImage> ImageEmbedder::encode(const RgbImage& image) {
  return encode_since(image, std::chrono::steady_clock::now());
}

Result<EncodedImage> ImageEmbedder::encode_file(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  LES_ASSIGN_OR_RETURN(const RgbImage image, decode_image_file(path));
  return encode_since(image, t0);
}

Result<EncodedImage> ImageEmbedder::encode_bytes(std::span<const uint8_t> bytes) {
  const auto t0 = std::chrono::steady_clock::now();
  LES_ASSIGN_OR_RETURN(const RgbImage image, decode_image(bytes));
  return encode_since(image, t0);
}

Result<EncodedImage> ImageEmbedder::encode_since(const RgbImage& image, std::chrono::steady_clock::time_point t0) {
  std::lock_guard<std::mutex> lk(mu_);
  PreprocessParams pp;
  pp.geometry.image_size = static_cast<int32_t>(hp_.image_size);
  pp.geometry.patch_size = static_cast<int32_t>(hp_.patch_size);
  pp.geometry.n_merge = static_cast<int32_t>(hp_.n_merge);
  pp.mean = hp_.image_mean;
  pp.std = hp_.image_std;
  LES_ASSIGN_OR_RETURN(const PreprocessedImage pre, preprocess_image(image, pp));

  Status st = ensure_loaded();
  EncodedImage out;
  if (st.ok()) {
    out.shape = image_shape(pre);
    out.n_embd = hp_.n_embd_out;
    out.width = image.width;
    out.height = image.height;
    out.embd.reserve(static_cast<size_t>(pre.n_tokens() * out.n_embd));
    VisionEncoder enc(*model_, pool_.get());
    std::vector<float> rows;
    for (const ImageChunk& c : pre.chunks) {
      st = enc.encode(c.pixels.data(), c.width, c.height, rows);
      if (!st.ok()) break;
      if (static_cast<int64_t>(rows.size()) != static_cast<int64_t>(c.n_tokens) * out.n_embd) {
        st = internal_error("vision: chunk " + std::to_string(out.chunk_row.size()) + " gave " +
                            std::to_string(rows.size()) + " floats, expected " + std::to_string(c.n_tokens) + " x " +
                            std::to_string(out.n_embd));
        break;
      }
      out.chunk_row.push_back(out.n_rows());
      out.embd.insert(out.embd.end(), rows.begin(), rows.end());
    }
  }
  if (p_.release_after_encode && model_) {
    model_.reset();
    std::lock_guard<std::mutex> ls(stats_mu_);
    stats_.weight_bytes_resident = 0;
  }
  if (!st.ok()) return st;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> ls(stats_mu_);
  ++stats_.n_images;
  stats_.n_chunks += static_cast<int64_t>(pre.chunks.size());
  stats_.n_rows += out.n_rows();
  stats_.encode_ms_total += ms;
  stats_.last_encode_ms = ms;
  return out;
}

ImageEmbedderStats ImageEmbedder::stats() const {
  std::lock_guard<std::mutex> lk(stats_mu_);
  return stats_;
}

}  // namespace les::vision
