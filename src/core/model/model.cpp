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
#include "core/model/tensor_lookup.h"
#include "core/model/thread_count.h"

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

Result<std::unique_ptr<Model>> Model::from_gguf(std::unique_ptr<gguf::GgufFile> file, const ModelParams& params) {
  LES_RETURN_IF_ERROR(check_thread_count(params.n_threads, "ModelParams.n_threads"));
  std::unique_ptr<Model> m(new Model());
  m->params_ = params;
  m->file_ = std::move(file);
  LES_ASSIGN_OR_RETURN(m->hp_, load_hparams(*m->file_));
  // A `les repack` file carries les.expert_layout; its experts come from the packed tensors.
  std::optional<ExpertLayout> layout;
  if (m->file_->find(kExpertLayoutKey) != nullptr) {
    auto x = ExpertLayout::from_file(*m->file_);
    if (!x.ok()) return x.status();
    if (x->contiguous()) layout = std::move(x).value();
  }
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
  std::vector<ResidentExpertSource::LayerExperts> le;
  for (const LayerWeights& l : m->w_.layers) le.push_back({l.gate_exps, l.up_exps, l.down_exps});
  m->experts_ = std::make_unique<ResidentExpertSource>(std::move(le));
  if (m->file_->find("tokenizer.ggml.model") != nullptr) {
    auto tok = Tokenizer::from_gguf(*m->file_);
    if (!tok.ok()) return tok.status().with_context("tokenizer");
    m->tokenizer_ = std::move(tok).value();
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
