// See mmproj_model.h. Key and tensor names: docs/model-graphs.md section 6.
#include "vision/mmproj_model.h"

#include <string_view>

#include "core/gguf/gguf_reader.h"
#include "core/model/tensor_lookup.h"
#include "core/model/weight_matmul.h"

namespace les::vision {
namespace {

constexpr std::string_view kProjector = "minicpmv4_6";
// Upper bound of every size key: far above any real encoder (SigLIP-so400m has
// E = 1152, n_ff = 4304, 27 blocks), low enough that products cannot overflow.
constexpr uint64_t kMaxDim = 1u << 16;

Result<int64_t> get_dim(const gguf::GgufFile& f, const std::string& key, uint64_t lo, uint64_t hi) {
  auto v = f.get_uint(key);
  if (!v.ok()) return v.status();
  if (*v < lo || *v > hi)
    return format_error("key '" + key + "' is " + std::to_string(*v) + ", expected " + std::to_string(lo) + ".." +
                        std::to_string(hi));
  return static_cast<int64_t>(*v);
}

Result<std::array<float, 3>> get_rgb(const gguf::GgufFile& f, const std::string& key) {
  auto a = f.get_array(key);
  if (!a.ok()) return a.status();
  if ((*a)->count < 3) return format_error("key '" + key + "' has " + std::to_string((*a)->count) + " elements, expected 3");
  std::array<float, 3> out{};
  for (int i = 0; i < 3; ++i) {
    auto x = (*a)->float_at(static_cast<uint64_t>(i));
    if (!x) return format_error("key '" + key + "' element " + std::to_string(i) + " is not a number");
    out[static_cast<size_t>(i)] = static_cast<float>(*x);
  }
  return out;
}

}  // namespace

MmprojModel::~MmprojModel() = default;

const std::string& MmprojModel::path() const noexcept { return file_->path(); }

int64_t MmprojModel::n_output_tokens(int64_t width, int64_t height) const noexcept {
  const int64_t p = hp_.patch_size, m = hp_.n_merge;
  return (width / p) * (height / p) / (m * m);
}

Result<std::unique_ptr<MmprojModel>> MmprojModel::load(const std::string& path, int64_t text_n_embd) {
  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) return file.status().with_context("mmproj '" + path + "'");
  std::unique_ptr<MmprojModel> m(new MmprojModel());
  m->file_ = std::move(*file);
  Status st = m->read_hparams();
  if (st.ok()) st = m->read_weights();
  if (!st.ok()) return st.with_context("mmproj '" + path + "'");
  if (text_n_embd > 0 && m->hp_.n_embd_out != text_n_embd)
    return invalid_argument_error("mmproj '" + path + "' gives embeddings of width " +
                                  std::to_string(m->hp_.n_embd_out) + " (mm.down.weight rows), but the text model's n_embd is " +
                                  std::to_string(text_n_embd));
  return m;
}

Status MmprojModel::read_hparams() {
  const gguf::GgufFile& f = *file_;
  const std::string arch = f.architecture();
  if (arch != "clip")
    return format_error("general.architecture is '" + arch + "', expected 'clip' (not an mmproj file)");
  auto has_vision = f.get_bool_or("clip.has_vision_encoder", false);
  if (!has_vision.ok()) return has_vision.status();
  if (!*has_vision) return unsupported_error("clip.has_vision_encoder is not true (no vision encoder in this file)");
  auto proj = f.get_string("clip.projector_type");
  if (!proj.ok()) return proj.status();
  if (*proj != kProjector)
    return unsupported_error("projector type '" + *proj + "' is not supported (only '" + std::string(kProjector) +
                             "', MiniCPM-V 4.6)");
  auto gelu = f.get_bool_or("clip.use_gelu", false);
  if (!gelu.ok()) return gelu.status();
  if (!*gelu)
    return unsupported_error("clip.use_gelu is not true: only the tanh-GELU ViT FFN is supported (not quick-GELU / SiLU)");

  MmprojHparams& h = hp_;
  const std::string v = "clip.vision.";
  LES_ASSIGN_OR_RETURN(h.image_size, get_dim(f, v + "image_size", 1, kMaxDim));
  LES_ASSIGN_OR_RETURN(h.patch_size, get_dim(f, v + "patch_size", 1, 1024));
  LES_ASSIGN_OR_RETURN(h.n_embd, get_dim(f, v + "embedding_length", 1, kMaxDim));
  LES_ASSIGN_OR_RETURN(h.n_ff, get_dim(f, v + "feed_forward_length", 1, kMaxDim));
  LES_ASSIGN_OR_RETURN(h.n_layer, get_dim(f, v + "block_count", 1, 1024));
  LES_ASSIGN_OR_RETURN(h.n_head, get_dim(f, v + "attention.head_count", 1, kMaxDim));
  LES_ASSIGN_OR_RETURN(h.projection_dim, get_dim(f, v + "projection_dim", 1, kMaxDim));
  if (h.n_embd % h.n_head != 0)
    return format_error("clip.vision.embedding_length " + std::to_string(h.n_embd) +
                        " is not a multiple of attention.head_count " + std::to_string(h.n_head));
  auto eps = f.get_float(v + "attention.layer_norm_epsilon");
  if (!eps.ok()) return eps.status();
  if (!(*eps > 0.0 && *eps < 1.0))
    return format_error("clip.vision.attention.layer_norm_epsilon is " + std::to_string(*eps) + ", expected in (0, 1)");
  h.eps = static_cast<float>(*eps);
  LES_ASSIGN_OR_RETURN(h.image_mean, get_rgb(f, v + "image_mean"));
  LES_ASSIGN_OR_RETURN(h.image_std, get_rgb(f, v + "image_std"));
  for (float s : h.image_std)
    if (!(s > 0.0f)) return format_error("clip.vision.image_std has a value that is not > 0");
  auto merge = f.get_uint_or(v + "projector.scale_factor", 4);
  if (!merge.ok()) return merge.status();
  // The graph merges 2x2 twice, so only 4 makes the sizes agree (README graph steps 5 and 7).
  if (*merge != 4)
    return unsupported_error("clip.vision.projector.scale_factor is " + std::to_string(*merge) +
                             ", only 4 (two 2x2 merges) is supported");
  h.n_merge = 4;
  h.insert_layer_id = 0;
  if (f.find(v + "wa_layer_indexes") != nullptr) {
    auto a = f.get_array(v + "wa_layer_indexes");
    if (!a.ok()) return a.status();
    if ((*a)->count > 0) {
      auto id = (*a)->int_at(0);
      if (!id) return format_error("clip.vision.wa_layer_indexes[0] is not an integer");
      h.insert_layer_id = *id;
    }
  }
  if (h.insert_layer_id < 0 || h.insert_layer_id >= h.n_layer)
    return format_error("clip.vision.wa_layer_indexes[0] is " + std::to_string(h.insert_layer_id) +
                        ", expected a block index 0.." + std::to_string(h.n_layer - 1));
  return Status();
}

Status MmprojModel::read_weights() {
  const gguf::GgufFile& f = *file_;
  const TensorLookup lk(f);
  MmprojHparams& h = hp_;
  const int64_t E = h.n_embd, p = h.patch_size;
  using TC = TypeClass;

  // The 4-D patch embedding {p, p, 3, E} is E rows of 3 p p inputs (channel,
  // row, column order, matching the im2col patch layout of vision_encoder).
  {
    const std::string name = "v.patch_embd.weight";
    const gguf::TensorInfo* t = f.find_tensor(name);
    if (t == nullptr) return format_error("missing tensor '" + name + "'");
    if (t->ne[0] != p || t->ne[1] != p || t->ne[2] != 3 || t->ne[3] != E)
      return format_error("tensor '" + name + "' has shape [" + std::to_string(t->ne[0]) + ", " +
                          std::to_string(t->ne[1]) + ", " + std::to_string(t->ne[2]) + ", " +
                          std::to_string(t->ne[3]) + "], expected [" + std::to_string(p) + ", " + std::to_string(p) +
                          ", 3, " + std::to_string(E) + "]");
    const auto row_all = ggml_row_bytes(t->type, 3 * p * p), row_one = ggml_row_bytes(t->type, p);
    if (!matmul_type_supported(t->type) || !row_all || !row_one || *row_all != *row_one * 3 * static_cast<size_t>(p))
      return unsupported_error("tensor '" + name + "' has type " + ggml_type_name(t->type) +
                               ", which has no matrix kernel for rows of " + std::to_string(3 * p * p));
    const auto data = f.tensor_data(*t);
    if (data.size() < t->n_bytes || data.empty()) return io_error("tensor '" + name + "' has no data in memory");
    WeightView& w = w_.patch_w;
    w.data = data.data();
    w.type = t->type;
    w.ne[0] = 3 * p * p;
    w.ne[1] = E;
    w.row_bytes = *row_all;
    w.name = name;
  }
  LES_ASSIGN_OR_RETURN(w_.patch_b, lk.optional("v.patch_embd.bias", {E}, TC::f32_only));
  LES_ASSIGN_OR_RETURN(w_.pos_embd, lk.require("v.position_embd.weight", {E, kPosBuckets * kPosBuckets}, TC::matrix));
  LES_ASSIGN_OR_RETURN(w_.pre_ln_w, lk.optional("v.pre_ln.weight", {E}, TC::f32_only));
  LES_ASSIGN_OR_RETURN(w_.pre_ln_b, lk.optional("v.pre_ln.bias", {E}, TC::f32_only));

  w_.layers.resize(static_cast<size_t>(h.n_layer));
  for (int il = 0; il < h.n_layer; ++il) {
    VitLayerWeights& L = w_.layers[static_cast<size_t>(il)];
    auto n = [il](const char* s) { return "v." + blk_name(il, s); };
    LES_ASSIGN_OR_RETURN(L.ln1_w, lk.require(n("ln1.weight"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.ln1_b, lk.require(n("ln1.bias"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.ln2_w, lk.require(n("ln2.weight"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.ln2_b, lk.require(n("ln2.bias"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.q_w, lk.require(n("attn_q.weight"), {E, E}, TC::matrix));
    LES_ASSIGN_OR_RETURN(L.k_w, lk.require(n("attn_k.weight"), {E, E}, TC::matrix));
    LES_ASSIGN_OR_RETURN(L.v_w, lk.require(n("attn_v.weight"), {E, E}, TC::matrix));
    LES_ASSIGN_OR_RETURN(L.o_w, lk.require(n("attn_out.weight"), {E, E}, TC::matrix));
    LES_ASSIGN_OR_RETURN(L.q_b, lk.optional(n("attn_q.bias"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.k_b, lk.optional(n("attn_k.bias"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.v_b, lk.optional(n("attn_v.bias"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.o_b, lk.optional(n("attn_out.bias"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.ls1, lk.optional(n("ls1.weight"), {E}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.ls2, lk.optional(n("ls2.weight"), {E}, TC::f32_only));
    // Older conversions name the FFN matrices the other way round; like
    // llama.cpp's clip loader, a "ffn_down" whose input width is E is the up
    // projection (its bias goes with it). Only decidable when n_ff != E.
    const gguf::TensorInfo* down_info = f.find_tensor(n("ffn_down.weight"));
    const bool swapped = h.n_ff != E && down_info != nullptr && down_info->ne[0] == E;
    const std::string up = swapped ? "ffn_down" : "ffn_up", down = swapped ? "ffn_up" : "ffn_down";
    LES_ASSIGN_OR_RETURN(L.up_w, lk.require(n((up + ".weight").c_str()), {E, h.n_ff}, TC::matrix));
    LES_ASSIGN_OR_RETURN(L.up_b, lk.optional(n((up + ".bias").c_str()), {h.n_ff}, TC::f32_only));
    LES_ASSIGN_OR_RETURN(L.down_w, lk.require(n((down + ".weight").c_str()), {h.n_ff, E}, TC::matrix));
    LES_ASSIGN_OR_RETURN(L.down_b, lk.optional(n((down + ".bias").c_str()), {E}, TC::f32_only));
  }

  VitMergerWeights& M = w_.merger;
  const std::string vm = "v.vit_merger.";
  LES_ASSIGN_OR_RETURN(M.ln1_w, lk.require(vm + "ln1.weight", {E}, TC::f32_only));
  LES_ASSIGN_OR_RETURN(M.ln1_b, lk.require(vm + "ln1.bias", {E}, TC::f32_only));
  const char* qkvo[4] = {"attn_q", "attn_k", "attn_v", "attn_out"};
  WeightView* mw[4] = {&M.q_w, &M.k_w, &M.v_w, &M.o_w};
  WeightView* mb[4] = {&M.q_b, &M.k_b, &M.v_b, &M.o_b};
  for (int i = 0; i < 4; ++i) {
    LES_ASSIGN_OR_RETURN(*mw[i], lk.require(vm + qkvo[i] + ".weight", {E, E}, TC::matrix));
    LES_ASSIGN_OR_RETURN(*mb[i], lk.optional(vm + qkvo[i] + ".bias", {E}, TC::f32_only));
  }
  LES_ASSIGN_OR_RETURN(M.ds_ln_w, lk.require(vm + "ds_ln.weight", {4 * E}, TC::f32_only));
  LES_ASSIGN_OR_RETURN(M.ds_ln_b, lk.require(vm + "ds_ln.bias", {4 * E}, TC::f32_only));
  const gguf::TensorInfo* ds_up = f.find_tensor(vm + "ds_ffn_up.weight");
  if (ds_up == nullptr) return format_error("missing tensor '" + vm + "ds_ffn_up.weight'");
  h.n_ff_ds = ds_up->ne[1];
  LES_ASSIGN_OR_RETURN(M.ds_up_w, lk.require(vm + "ds_ffn_up.weight", {4 * E, h.n_ff_ds}, TC::matrix));
  LES_ASSIGN_OR_RETURN(M.ds_up_b, lk.optional(vm + "ds_ffn_up.bias", {h.n_ff_ds}, TC::f32_only));
  LES_ASSIGN_OR_RETURN(M.ds_down_w, lk.require(vm + "ds_ffn_down.weight", {h.n_ff_ds, E}, TC::matrix));
  LES_ASSIGN_OR_RETURN(M.ds_down_b, lk.optional(vm + "ds_ffn_down.bias", {E}, TC::f32_only));

  LES_ASSIGN_OR_RETURN(w_.post_ln_w, lk.optional("v.post_ln.weight", {E}, TC::f32_only));
  LES_ASSIGN_OR_RETURN(w_.post_ln_b, lk.optional("v.post_ln.bias", {E}, TC::f32_only));

  ProjectorWeights& P = w_.proj;
  LES_ASSIGN_OR_RETURN(P.norm_w, lk.require("mm.input_norm.weight", {4 * E}, TC::f32_only));
  LES_ASSIGN_OR_RETURN(P.norm_b, lk.optional("mm.input_norm.bias", {4 * E}, TC::f32_only));
  const gguf::TensorInfo* up = f.find_tensor("mm.up.weight");
  if (up == nullptr) return format_error("missing tensor 'mm.up.weight'");
  h.n_ff_mm = up->ne[1];
  LES_ASSIGN_OR_RETURN(P.up_w, lk.require("mm.up.weight", {4 * E, h.n_ff_mm}, TC::matrix));
  LES_ASSIGN_OR_RETURN(P.up_b, lk.optional("mm.up.bias", {h.n_ff_mm}, TC::f32_only));
  const gguf::TensorInfo* down = f.find_tensor("mm.down.weight");
  if (down == nullptr) return format_error("missing tensor 'mm.down.weight'");
  h.n_embd_out = down->ne[1];
  LES_ASSIGN_OR_RETURN(P.down_w, lk.require("mm.down.weight", {h.n_ff_mm, h.n_embd_out}, TC::matrix));
  LES_ASSIGN_OR_RETURN(P.down_b, lk.optional("mm.down.bias", {h.n_embd_out}, TC::f32_only));
  return Status();
}

}  // namespace les::vision
