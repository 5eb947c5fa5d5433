// Saving and restoring a Context's session; the format is in session_state.h.
#include "core/model/session_state.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "core/gguf/gguf_reader.h"
#include "core/model/context.h"

namespace les {
namespace {

constexpr char kMagic[8] = {'L', 'E', 'S', 'S', 'T', 'A', 'T', 'E'};
constexpr uint32_t kTagTokens = 1, kTagKv = 2, kTagRecurrent = 3;

struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;  // FNV prime
  }
  template <typename T>
  void pod(const T& v) {
    bytes(&v, sizeof v);
  }
  void str(const std::string& s) {
    pod(static_cast<uint64_t>(s.size()));
    bytes(s.data(), s.size());
  }
};

// The first and last 4 KiB of a tensor, read from the file (so the digest does
// not depend on whether the weights are mapped or copied).
void hash_tensor_ends(Fnv& f, const gguf::GgufFile& g, const char* name) {
  const gguf::TensorInfo* t = g.find_tensor(name);
  if (t == nullptr) return;
  std::ifstream in(g.path(), std::ios::binary);
  const uint64_t n = std::min<uint64_t>(t->n_bytes, 4096);
  std::string buf(n, '\0');
  for (const uint64_t off : {t->file_offset, t->file_offset + t->n_bytes - n}) {
    in.seekg(static_cast<std::streamoff>(off));
    in.read(buf.data(), static_cast<std::streamsize>(n));
    f.pod(static_cast<uint64_t>(in.gcount()));
    f.bytes(buf.data(), static_cast<size_t>(in.gcount()));
    in.clear();
  }
}

class Writer {
 public:
  template <typename T>
  void pod(const T& v) {
    raw(&v, sizeof v);
  }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  // Starts a section; returns the offset of its length field for end_section().
  size_t begin_section(uint32_t tag) {
    pod(tag);
    pod(uint32_t{0});
    const size_t at = out.size();
    pod(uint64_t{0});
    return at;
  }
  void end_section(size_t at) {
    const uint64_t n = out.size() - at - sizeof(uint64_t);
    std::memcpy(out.data() + at, &n, sizeof n);
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  template <typename T>
  Status pod(T* v, const char* what) {
    if (b_.size() - pos_ < sizeof(T))
      return format_error(std::string("session state truncated: ") + what + " at byte " + std::to_string(pos_) +
                          " is past the end (" + std::to_string(b_.size()) + " bytes)");
    std::memcpy(v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status();
  }
  Result<std::span<const uint8_t>> take(uint64_t n, const char* what) {
    if (b_.size() - pos_ < n)
      return format_error(std::string("session state truncated: ") + what + " needs " + std::to_string(n) +
                          " bytes at byte " + std::to_string(pos_) + ", " + std::to_string(b_.size() - pos_) +
                          " remain");
    auto s = b_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  size_t pos() const { return pos_; }

 private:
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
};

// Layers that keep K and V (all of them unless the model is hybrid).
int32_t kv_layer_count(const KvCache& kv) {
  int32_t n = 0;
  for (int32_t il = 0; il < kv.params().n_layer; ++il) n += kv.k_data(il) != nullptr ? 1 : 0;
  return n;
}

// The recurrent (linear-attention) layers, ascending.
std::vector<int32_t> recurrent_layers(const RecurrentState& rec) {
  std::vector<int32_t> out;
  for (size_t il = 0; il < rec.params().layers.size(); ++il)
    if (rec.is_recurrent(static_cast<int32_t>(il))) out.push_back(static_cast<int32_t>(il));
  return out;
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

uint64_t model_fingerprint(const Model& model) {
  const gguf::GgufFile& g = model.file();
  Fnv f;
  f.str(g.architecture());
  for (const gguf::KeyValue& kv : g.metadata()) {
    f.str(kv.key);
    f.pod(static_cast<uint32_t>(kv.value.type()));
    if (const gguf::Array* a = kv.value.as_array()) {
      f.pod(static_cast<uint32_t>(a->elem_type));
      f.pod(a->count);
    } else if (const std::string* s = kv.value.as_string()) {
      f.str(*s);
    } else if (auto u = kv.value.as_uint()) {
      f.pod(*u);
    } else if (auto i = kv.value.as_int()) {
      f.pod(*i);
    } else if (auto b = kv.value.as_bool()) {
      f.pod(static_cast<uint8_t>(*b));
    } else {
      f.pod(kv.value.raw_float());
    }
  }
  for (const gguf::TensorInfo& t : g.tensors()) {
    f.str(t.name);
    f.pod(static_cast<uint32_t>(t.type));
    for (int64_t d : t.ne) f.pod(d);
  }
  hash_tensor_ends(f, g, "token_embd.weight");
  hash_tensor_ends(f, g, "output.weight");
  return f.h;
}

Status check_state_magic(std::span<const uint8_t> head) {
  if (head.size() < sizeof kMagic || std::memcmp(head.data(), kMagic, sizeof kMagic) != 0) {
    const bool gguf = head.size() >= 4 && std::memcmp(head.data(), "GGUF", 4) == 0;
    return format_error(std::string("not a LES session state (no LESSTATE magic at its start") +
                        (gguf ? "; it is a GGUF file, e.g. a model)" : ")"));
  }
  return Status();
}

uint64_t Context::max_state_bytes() const {
  // save_state()'s layout with n_past = n_ctx (n_past + a pending token never exceed n_ctx).
  const KvCache& kv = seq_.kv();
  const uint64_t n = static_cast<uint64_t>(seq_.n_ctx());
  const uint64_t section = 4 + 4 + 8;  // tag, reserved, payload bytes
  uint64_t b = sizeof kMagic + 4 + 4 + 8;
  b += section + 4 + 4 + n * sizeof(int32_t);
  b += section + 6 * 4 + static_cast<uint64_t>(kv_layer_count(kv)) * n * (kv.k_row_bytes() + kv.v_row_bytes());
  if (seq_.has_recurrent()) {
    const RecurrentState& rec = seq_.recurrent();
    b += section + 6 * 4 +
         recurrent_layers(rec).size() * (4 + (rec.conv_floats() + rec.ssm_floats()) * sizeof(float));
  }
  return b + 8;  // checksum
}

Result<std::vector<uint8_t>> Context::save_state() const {
  const KvCache& kv = seq_.kv();
  const RecurrentState& rec = seq_.recurrent();
  const int32_t n_past = seq_.n_past();
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.pod(kSessionStateVersion);
  w.pod(uint32_t{seq_.has_recurrent() ? 3u : 2u});  // sections
  w.pod(model_fingerprint(model_));
  size_t at = w.begin_section(kTagTokens);
  w.pod(n_past);
  w.pod(pending_);
  w.raw(tokens_.data(), tokens_.size() * sizeof(int32_t));
  w.end_section(at);
  at = w.begin_section(kTagKv);
  const KvCacheParams& p = kv.params();
  w.pod(static_cast<uint32_t>(p.type));
  w.pod(static_cast<uint32_t>(p.n_layer));
  w.pod(static_cast<uint32_t>(p.n_embd_k));
  w.pod(static_cast<uint32_t>(p.n_embd_v));
  w.pod(static_cast<uint32_t>(n_past));
  w.pod(static_cast<uint32_t>(kv_layer_count(kv)));
  for (int32_t il = 0; il < p.n_layer; ++il) {
    if (kv.k_data(il) == nullptr) continue;  // a linear-attention layer keeps no K/V
    w.raw(kv.k_data(il), static_cast<size_t>(n_past) * kv.k_row_bytes());
    w.raw(kv.v_data(il), static_cast<size_t>(n_past) * kv.v_row_bytes());
  }
  w.end_section(at);
  if (seq_.has_recurrent()) {
    at = w.begin_section(kTagRecurrent);
    const RecurrentStateParams& rp = rec.params();
    for (int32_t v : {rp.d_conv, rp.conv_channels, rp.n_k_heads, rp.n_v_heads, rp.head_dim})
      w.pod(static_cast<uint32_t>(v));
    std::vector<int32_t> layers = recurrent_layers(rec);
    w.pod(static_cast<uint32_t>(layers.size()));
    for (int32_t il : layers) {
      w.pod(static_cast<uint32_t>(il));
      w.raw(rec.conv_state(il), rec.conv_floats() * sizeof(float));
      w.raw(rec.ssm_state(il), rec.ssm_floats() * sizeof(float));
    }
    w.end_section(at);
  }
  Fnv sum;
  sum.bytes(w.out.data(), w.out.size());
  w.pod(sum.h);
  return std::move(w.out);
}

Status Context::load_state(std::span<const uint8_t> bytes) {
  LES_RETURN_IF_ERROR(check_state_magic(bytes));
  if (bytes.size() < sizeof kMagic + 8)
    return format_error("session state truncated: " + std::to_string(bytes.size()) + " bytes");

  Reader r(bytes);
  (void)r.take(sizeof kMagic, "magic");
  uint32_t version = 0, n_sections = 0;
  uint64_t fingerprint = 0;
  LES_RETURN_IF_ERROR(r.pod(&version, "format version"));
  if (bytes.size() < sizeof(uint64_t) + r.pos())
    return format_error("session state truncated: " + std::to_string(bytes.size()) + " bytes");
  // The checksum first: a damaged version field is corruption, not a newer format.
  Fnv sum;
  sum.bytes(bytes.data(), bytes.size() - sizeof(uint64_t));
  uint64_t stored_sum = 0;
  std::memcpy(&stored_sum, bytes.data() + bytes.size() - sizeof(uint64_t), sizeof stored_sum);
  const std::string version_text = "format version " + std::to_string(version) + "; this LES reads version " +
                                   std::to_string(kSessionStateVersion);
  if (sum.h != stored_sum)
    return format_error("session state is corrupted or truncated: checksum " + hex(sum.h) + " != stored " +
                        hex(stored_sum) + " (" + std::to_string(bytes.size()) + " bytes" +
                        (version != kSessionStateVersion ? "; " + version_text + ": corrupt, or saved by a newer LES"
                                                         : std::string()) +
                        ")");
  if (version != kSessionStateVersion)
    return unsupported_error("session state " + version_text +
                             (version > kSessionStateVersion ? " (saved by a newer LES)" : ""));
  LES_RETURN_IF_ERROR(r.pod(&n_sections, "section count"));
  LES_RETURN_IF_ERROR(r.pod(&fingerprint, "model fingerprint"));
  const uint64_t ours = model_fingerprint(model_);
  if (fingerprint != ours)
    return invalid_argument_error("session state was saved with another model (fingerprint " + hex(fingerprint) +
                                  ", this model " + hex(ours) + ": a different file, type or tokenizer)");

  // Parse and check every section first; copy into the context only at the end.
  int32_t n_past = -1, pending = -1;
  std::span<const uint8_t> ids, kv_rows;
  bool have_kv = false, have_rec = false;
  const KvCache& kv = seq_.kv();
  const KvCacheParams& p = kv.params();
  const int32_t kv_layers = kv_layer_count(kv);
  const RecurrentState& rec = seq_.recurrent();
  const std::vector<int32_t> rec_layers = recurrent_layers(rec);
  std::vector<std::span<const uint8_t>> rec_states;  // per recurrent layer: conv then ssm floats
  for (uint32_t i = 0; i < n_sections; ++i) {
    uint32_t tag = 0, reserved = 0;
    uint64_t len = 0;
    LES_RETURN_IF_ERROR(r.pod(&tag, "section tag"));
    LES_RETURN_IF_ERROR(r.pod(&reserved, "section header"));
    LES_RETURN_IF_ERROR(r.pod(&len, "section length"));
    LES_ASSIGN_OR_RETURN(std::span<const uint8_t> body, r.take(len, "section"));
    Reader s(body);
    if (tag == kTagTokens) {
      LES_RETURN_IF_ERROR(s.pod(&n_past, "n_past"));
      LES_RETURN_IF_ERROR(s.pod(&pending, "pending token"));
      if (n_past < 0) return format_error("session state: n_past " + std::to_string(n_past) + " is negative");
      LES_ASSIGN_OR_RETURN(ids, s.take(static_cast<uint64_t>(n_past) * sizeof(int32_t), "token ids"));
    } else if (tag == kTagKv) {
      uint32_t type = 0, n_layer = 0, n_embd_k = 0, n_embd_v = 0, kv_past = 0, n_kv_layers = 0;
      LES_RETURN_IF_ERROR(s.pod(&type, "KV type"));
      LES_RETURN_IF_ERROR(s.pod(&n_layer, "n_layer"));
      LES_RETURN_IF_ERROR(s.pod(&n_embd_k, "n_embd_k"));
      LES_RETURN_IF_ERROR(s.pod(&n_embd_v, "n_embd_v"));
      LES_RETURN_IF_ERROR(s.pod(&kv_past, "KV positions"));
      LES_RETURN_IF_ERROR(s.pod(&n_kv_layers, "layers with K/V"));
      if (type != static_cast<uint32_t>(p.type))
        return invalid_argument_error(std::string("session state has a KV cache of type ") +
                                      ggml_type_name(static_cast<GgmlType>(type)) + ", this context's is " +
                                      ggml_type_name(p.type) + " (create the context with the same kv_type)");
      if (n_layer != static_cast<uint32_t>(p.n_layer) || n_embd_k != static_cast<uint32_t>(p.n_embd_k) ||
          n_embd_v != static_cast<uint32_t>(p.n_embd_v) || n_kv_layers != static_cast<uint32_t>(kv_layers))
        return format_error("session state KV cache shape (" + std::to_string(n_layer) + " layers, " +
                            std::to_string(n_kv_layers) + " with K/V, " + std::to_string(n_embd_k) + "/" +
                            std::to_string(n_embd_v) + ") differs from this context's");
      if (n_past >= 0 && kv_past != static_cast<uint32_t>(n_past))
        return format_error("session state: the KV cache holds " + std::to_string(kv_past) + " positions, the tokens " +
                            std::to_string(n_past));
      const uint64_t per_layer = static_cast<uint64_t>(kv_past) * (kv.k_row_bytes() + kv.v_row_bytes());
      LES_ASSIGN_OR_RETURN(kv_rows, s.take(per_layer * n_kv_layers, "KV rows"));
      have_kv = true;
    } else if (tag == kTagRecurrent) {
      if (!seq_.has_recurrent())
        return format_error("session state holds a recurrent state, this context's model has none");
      const RecurrentStateParams& rp = rec.params();
      const char* names[] = {"d_conv", "conv_channels", "n_k_heads", "n_v_heads", "head_dim"};
      const int32_t ours[] = {rp.d_conv, rp.conv_channels, rp.n_k_heads, rp.n_v_heads, rp.head_dim};
      for (int i = 0; i < 5; ++i) {
        uint32_t v = 0;
        LES_RETURN_IF_ERROR(s.pod(&v, names[i]));
        if (v != static_cast<uint32_t>(ours[i]))
          return format_error(std::string("session state recurrent ") + names[i] + " " + std::to_string(v) +
                              " differs from this context's " + std::to_string(ours[i]));
      }
      uint32_t n_rec = 0;
      LES_RETURN_IF_ERROR(s.pod(&n_rec, "recurrent layer count"));
      if (n_rec != rec_layers.size())
        return format_error("session state has " + std::to_string(n_rec) + " recurrent layers, this context " +
                            std::to_string(rec_layers.size()));
      const uint64_t floats = rec.conv_floats() + rec.ssm_floats();
      for (uint32_t j = 0; j < n_rec; ++j) {
        uint32_t il = 0;
        LES_RETURN_IF_ERROR(s.pod(&il, "recurrent layer index"));
        if (il != static_cast<uint32_t>(rec_layers[j]))
          return format_error("session state recurrent layer " + std::to_string(il) + " where this context has " +
                              std::to_string(rec_layers[j]));
        LES_ASSIGN_OR_RETURN(std::span<const uint8_t> st, s.take(floats * sizeof(float), "recurrent state"));
        rec_states.push_back(st);
      }
      have_rec = true;
    } else {
      return unsupported_error("session state has section " + std::to_string(tag) +
                               ", which this LES does not read (saved by a newer LES or for another model kind)");
    }
  }
  if (n_past < 0 || !have_kv) return format_error("session state lacks its tokens or KV cache section");
  if (seq_.has_recurrent() && !have_rec)
    return format_error("session state lacks the recurrent state this context's model (" +
                        model_.file().architecture() + ") needs");
  if (kv_rows.size() != static_cast<size_t>(n_past) * (kv.k_row_bytes() + kv.v_row_bytes()) * kv_layers)
    return format_error("session state: KV rows do not match the token count");
  const int32_t needed = n_past + (pending >= 0 ? 1 : 0);
  if (needed > n_ctx())
    return context_full_error("session state holds " + std::to_string(needed) + " tokens; this context has n_ctx " +
                              std::to_string(n_ctx()));
  const int32_t n_vocab = model_.hparams().n_vocab;
  std::vector<int32_t> restored(static_cast<size_t>(n_past));
  if (!ids.empty()) std::memcpy(restored.data(), ids.data(), ids.size());  // memcpy's pointers must be non-null
  for (int32_t t : restored)
    if ((t < 0 && t != kEmbeddingToken) || t >= n_vocab)
      return format_error("session state: token id " + std::to_string(t) + " out of range");
  if (pending >= n_vocab || pending < -1)
    return format_error("session state: pending token " + std::to_string(pending) + " out of range");

  // Everything checked: replace the session.
  reset();
  KvCache& dst = seq_.kv();
  const size_t kb = static_cast<size_t>(n_past) * kv.k_row_bytes(), vb = static_cast<size_t>(n_past) * kv.v_row_bytes();
  const uint8_t* src = kv_rows.data();
  for (int32_t il = 0; il < p.n_layer; ++il) {
    if (dst.k_data_mut(il) == nullptr || kb + vb == 0) continue;
    std::memcpy(dst.k_data_mut(il), src, kb);
    std::memcpy(dst.v_data_mut(il), src + kb, vb);
    src += kb + vb;
  }
  for (size_t j = 0; j < rec_states.size(); ++j) {
    // The bytes of a float array in the buffer may be unaligned: copy them.
    std::vector<float> conv(rec.conv_floats()), ssm(rec.ssm_floats());
    std::memcpy(conv.data(), rec_states[j].data(), conv.size() * sizeof(float));
    std::memcpy(ssm.data(), rec_states[j].data() + conv.size() * sizeof(float), ssm.size() * sizeof(float));
    seq_.recurrent().set_state(rec_layers[j], conv.data(), ssm.data());
  }
  seq_.advance(n_past);
  tokens_ = std::move(restored);
  pending_ = pending;
  return Status();
}

}  // namespace les
