#include "core/model/model.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>

#include "core/gguf/expert_layout.h"
#include "core/gguf/gguf_reader.h"
#include "core/gguf/tensor_arena.h"
#include "core/model/arch/arch_loaders.h"
#include "core/model/metadata_policy.h"
#include "core/model/tensor_lookup.h"
#include "core/model/thread_count.h"
#include "core/model/weight_matmul.h"

namespace les {

Model::~Model() = default;

namespace {

// Marks the pages fully inside [data, data + n) of a read-only file mapping as
// randomly accessed (no readahead) and drops any already mapped, so streamed
// expert bytes never count towards the resident set. Best effort. Only for a
// file mapping (on anonymous memory MADV_DONTNEED would zero the bytes).
void advise_not_resident(const uint8_t* data, size_t n) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t b = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(data) + n) & ~(page - 1);
  if (e <= b) return;
  void* p = reinterpret_cast<void*>(b);
  (void)madvise(p, e - b, MADV_RANDOM);
  (void)madvise(p, e - b, MADV_DONTNEED);
}

}  // namespace

Result<std::unique_ptr<Model>> Model::load(const std::string& path, const ModelParams& params) {
  gguf::ReadOptions opts;
  opts.use_mmap = params.weights != WeightMemory::read;  // read: metadata only, every tensor from the arena
  LES_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path, opts));
  auto r = from_gguf(std::move(file), params);
  if (!r.ok()) return r.status().with_context("loading '" + path + "'");
  return r;
}

namespace {

// Every reason the file cannot run, collected before any weight is read:
// hyperparameters, metadata LES refuses (metadata_policy.h), the
// architecture's tensors (names, shapes, types: a validate-only lookup), the
// tensors it leaves unused, and the tokenizer. `tok` receives the tokenizer
// when it builds.
std::vector<Status> support_problems(const gguf::GgufFile& f, const std::optional<ExpertLayout>& layout,
                                     const Result<Hparams>& hp, std::unique_ptr<Tokenizer>* tok) {
  std::vector<Status> out;
  ArchConfig cfg_scratch;
  ModelWeights w_scratch;
  ArchConfig* cfg = &cfg_scratch;
  ModelWeights* w = &w_scratch;
  if (!hp.ok()) {
    out.push_back(hp.status());
    // The hyperparameters are needed to know the architecture's tensors; still
    // name the tensor types no kernel computes.
    std::vector<TensorProblem> types;
    for (const auto& t : f.tensors())
      if (t.type != GgmlType::F32 && !matmul_type_supported(t.type)) types.push_back({t.name, t.type, TypeClass::matrix});
    for (std::string& m : describe_tensor_problems(types)) out.push_back(unsupported_error(std::move(m)));
  } else {
    for (std::string& m : metadata_problems(f, *hp)) out.push_back(unsupported_error(std::move(m)));
    TensorLookup check(f, layout ? &*layout : nullptr, nullptr, /*validate_only=*/true);
    const Status arch = models::load_architecture(check, *hp, cfg, w);
    if (!arch.ok()) out.push_back(arch);
    for (std::string& m : describe_tensor_problems(check.problems())) out.push_back(unsupported_error(std::move(m)));
    if (arch.ok()) {
      const std::vector<std::string> unused = check.unused_tensors();
      if (!unused.empty()) {
        std::string list;
        for (size_t i = 0; i < unused.size() && i < 4; ++i) list += (i ? ", '" : "'") + unused[i] + "'";
        if (unused.size() > 4) list += ", ...";
        out.push_back(unsupported_error(
            std::to_string(unused.size()) + (unused.size() == 1 ? " tensor" : " tensors") + " that LES's " + hp->arch +
            " does not compute (" + list + "); llama.cpp 81ff7abe refuses files with tensors it does not load"));
      }
    }
  }
  if (f.find("tokenizer.ggml.model") != nullptr) {
    auto t = Tokenizer::from_gguf(f);
    if (t.ok()) {
      *tok = std::move(t).value();
    } else {
      out.push_back(t.status().with_context("tokenizer"));
    }
  }
  return out;
}

// A `les repack` file's expert layout when it is the contiguous one (its
// experts come from the packed tensors), else nullopt. Errors: those of
// ExpertLayout::from_file.
Result<std::optional<ExpertLayout>> contiguous_layout(const gguf::GgufFile& f) {
  std::optional<ExpertLayout> layout;
  if (f.find(kExpertLayoutKey) != nullptr) {
    LES_ASSIGN_OR_RETURN(ExpertLayout x, ExpertLayout::from_file(f));
    if (x.contiguous()) layout = std::move(x);
  }
  return layout;
}

// One status for all reasons: itself when there is one; else numbered in one
// message, format if any is a malformed file, else unsupported.
Status combine(const std::vector<Status>& reasons) {
  if (reasons.size() == 1) return reasons[0];
  bool format = false;
  std::string msg = std::to_string(reasons.size()) + " reasons LES cannot run this file:";
  for (size_t i = 0; i < reasons.size(); ++i) {
    format = format || reasons[i].code() == StatusCode::format;
    msg += " (" + std::to_string(i + 1) + ") " + reasons[i].message() + (i + 1 < reasons.size() ? ";" : "");
  }
  return format ? format_error(msg) : unsupported_error(msg);
}

}  // namespace

std::vector<Status> model_support_problems(const gguf::GgufFile& file) {
  auto layout = contiguous_layout(file);
  if (!layout.ok()) return {layout.status()};
  std::unique_ptr<Tokenizer> tok;
  return support_problems(file, *layout, load_hparams(file), &tok);
}

Result<std::unique_ptr<Model>> Model::from_gguf(std::unique_ptr<gguf::GgufFile> file, const ModelParams& params) {
  LES_RETURN_IF_ERROR(check_thread_count(params.n_threads, "ModelParams.n_threads"));
  std::unique_ptr<Model> m(new Model());
  m->params_ = params;
  m->file_ = std::move(file);
  // A `les repack` file carries les.expert_layout; its experts come from the packed tensors.
  LES_ASSIGN_OR_RETURN(const std::optional<ExpertLayout> layout, contiguous_layout(*m->file_));
  const Result<Hparams> hp = load_hparams(*m->file_);
  {
    const std::vector<Status> reasons = support_problems(*m->file_, layout, hp, &m->tokenizer_);
    if (!reasons.empty()) return combine(reasons);
  }
  m->hp_ = *hp;
  // Which tensors are read into LES's memory (WeightMemory); a file parsed from
  // a caller's buffer has no path and stays where it is.
  const bool read_all = params.weights == WeightMemory::read;
  const bool read_dense = params.weights == WeightMemory::automatic && m->hp_.n_expert > 0;
  if (!m->file_->path().empty() && (read_all || read_dense)) {
    std::unordered_set<std::string> packed;  // `les repack`'s per-layer expert blobs
    for (int32_t l = 0; layout && l < m->hp_.n_layer_all; ++l) packed.insert(packed_experts_tensor_name(l));
    auto routed = [&](const gguf::TensorInfo& t) {
      return t.name.ends_with("_exps.weight") || packed.count(t.name) != 0;  // GGUF's ffn_{gate,up,down}_exps
    };
    LES_ASSIGN_OR_RETURN(gguf::TensorArena arena, gguf::TensorArena::read(*m->file_, [&](const gguf::TensorInfo& t) {
                           return read_all || !routed(t);
                         }));
    m->arena_ = std::make_unique<gguf::TensorArena>(std::move(arena));
    m->experts_mapped_ = !read_all;
    if (params.lock_weights)
      if (Status s = m->arena_->lock(); !s.ok()) m->warnings_.push_back(s.message());
  }
  TensorLookup lookup(*m->file_, layout ? &*layout : nullptr, m->arena_.get());
  LES_RETURN_IF_ERROR(models::load_architecture(lookup, m->hp_, &m->cfg_, &m->w_));
  const float* ff = m->w_.rope_freqs.present() ? reinterpret_cast<const float*>(m->w_.rope_freqs.data) : nullptr;
  m->rope_full_ = rope_scaling_for_layer(m->hp_.rope, m->hp_.n_rot, /*swa=*/false, ff);
  m->rope_swa_ = rope_scaling_for_layer(m->hp_.rope, m->hp_.n_rot, /*swa=*/true, ff);
  std::vector<ResidentExpertSource::LayerExperts> le;
  for (const LayerWeights& l : m->w_.layers) le.push_back({l.gate_exps, l.up_exps, l.down_exps});
  m->experts_ = std::make_unique<ResidentExpertSource>(std::move(le));
  if (m->tokenizer_) {
    const auto& w = m->tokenizer_->vocab().warnings();
    m->warnings_.insert(m->warnings_.end(), w.begin(), w.end());
  }
  return m;
}

size_t Model::weights_read_bytes() const noexcept { return arena_ ? arena_->n_bytes() : 0; }
bool Model::weights_locked() const noexcept { return arena_ && arena_->locked(); }

void Model::release_expert_pages() const noexcept {
  // Only a file mapping may be dropped: on memory from GgufFile::parse (no
  // path), MADV_DONTNEED would zero the weights.
  if (file_->path().empty() || !experts_mapped_) return;
  for (const LayerWeights& l : w_.layers)
    for (const WeightView* v : {&l.gate_exps, &l.up_exps, &l.down_exps})
      if (v->present() && v->data != nullptr)
        advise_not_resident(v->data, (v->expert_stride ? v->expert_stride : v->slab_bytes()) * static_cast<size_t>(v->ne[2]));
}

std::string Model::description() const {
  // e.g. "qwen3moe 8L 256d 32x4 experts F16"
  std::string s = hp_.arch;
  s.append(" ").append(std::to_string(hp_.n_layer)).append("L");
  if (hp_.n_layer_nextn > 0) s.append("+").append(std::to_string(hp_.n_layer_nextn)).append("MTP");
  s.append(" ");
  s.append(std::to_string(hp_.n_embd)).append("d");
  if (hp_.is_moe()) {
    s.append(" ").append(std::to_string(hp_.n_expert)).append("x").append(std::to_string(hp_.n_expert_used));
    s.append(" experts");
  }
  const WeightView* ref = &w_.tok_embd;
  if (!w_.layers.empty()) ref = w_.layers[0].is_moe() ? &w_.layers[0].gate_exps : &w_.layers[0].ffn_gate;
  s.append(" ").append(ggml_type_name(ref->type));
  return s;
}

}  // namespace les
