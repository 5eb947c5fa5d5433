// C ABI: model loading, hyperparameters, metadata and tokens (les.h).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

#include "capi_internal.h"
#include "core/model/thread_count.h"
#include "core/gguf/expert_layout.h"
#include "core/gguf/gguf_reader.h"
#include "log_sink.h"

using les::capi::fail;
using les::capi::guarded;
using les::capi::raw_enum;

namespace {

// Copies `text` NUL-terminated into buf (truncating); returns its full length.
int32_t copy_out(const std::string& text, char* buf, size_t buf_size) {
  if (buf != nullptr && buf_size > 0) {
    const size_t n = std::min(text.size(), buf_size - 1);
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return static_cast<int32_t>(std::min<size_t>(text.size(), INT32_MAX));
}

std::string value_to_text(const les::gguf::Value& v) {
  using les::gguf::ValueType;
  switch (v.type()) {
    case ValueType::STRING: return *v.as_string();
    case ValueType::BOOL: return *v.as_bool() ? "true" : "false";
    case ValueType::FLOAT32:
    case ValueType::FLOAT64: {
      char b[64];
      std::snprintf(b, sizeof b, "%.9g", *v.as_float());
      return b;
    }
    case ValueType::ARRAY: {
      const auto* a = v.as_array();
      return "[array of " + std::to_string(a->count) + " " + les::gguf::value_type_name(a->elem_type) + "]";
    }
    default: {
      if (auto i = v.as_int()) return std::to_string(*i);
      if (auto u = v.as_uint()) return std::to_string(*u);
      return "?";
    }
  }
}

const les::Hparams* hp(const les_model* m) { return m && m->state ? &m->state->model->hparams() : nullptr; }

// 0.2 removed the streaming fields: the struct is its first version again
// (0.1's first version ended where they began).
// 0.2.0's les_model_params ended at log_level (0.2.1 appended weights, lock_weights).
constexpr size_t kModelParamsV1 = offsetof(les_model_params, weights);

}  // namespace

extern "C" {

les_model_params les_model_default_params(void) {
  les_model_params p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof(les_model_params);
  p.n_threads = 0;
  p.log_callback = nullptr;
  p.log_user_data = nullptr;
  p.log_level = LES_LOG_WARN;
  p.weights = LES_WEIGHTS_AUTO;
  p.lock_weights = false;
  return p;
}

les_status les_model_load(const char* path, const les_model_params* params, les_model** out_model) {
  return guarded("les_model_load", [&]() -> les_status {
    if (out_model == nullptr) return fail(les::invalid_argument_error("les_model_load: out_model is NULL"));
    *out_model = nullptr;
    if (path == nullptr) return fail(les::invalid_argument_error("les_model_load: path is NULL"));
    les_model_params p = les_model_default_params();
    les::Status s = les::capi::copy_versioned_in(params, p, kModelParamsV1, "les_model_params");
    if (!s.ok()) return fail(s);
    s = les::check_thread_count(p.n_threads, "les_model_params.n_threads");
    if (!s.ok()) return fail(s);
    auto state = std::make_shared<les::capi::ModelState>();
    state->params = p;
    state->logger = les::capi::make_logger(p.log_callback, p.log_user_data, p.log_level);
    les::ModelParams mp;
    mp.n_threads = p.n_threads;
    switch (const int32_t w = raw_enum(&p.weights)) {
      case LES_WEIGHTS_AUTO: mp.weights = les::WeightMemory::automatic; break;
      case LES_WEIGHTS_MMAP: mp.weights = les::WeightMemory::mmap; break;
      case LES_WEIGHTS_READ: mp.weights = les::WeightMemory::read; break;
      default:
        return fail(les::invalid_argument_error("les_model_params.weights " + std::to_string(w) +
                                                " is not a les_weight_memory"));
    }
    mp.lock_weights = p.lock_weights;
    auto model = les::Model::load(path, mp);
    if (!model.ok()) {
      state->logger->error("cannot load '{}': {}", path, model.status().message());
      return fail(model.status());
    }
    state->model = std::move(model).value();
    if (!state->model->has_tokenizer()) {
      state->logger->error("'{}' has no tokenizer (tokenizer.ggml.model)", path);
      return fail(les::unsupported_error(std::string("'") + path +
                                         "' has no tokenizer (no tokenizer.ggml.model key); les.h needs one"));
    }
    state->tokenizer = &state->model->tokenizer();
    for (const std::string& w : state->model->warnings()) state->logger->warn("{}", w);
    state->logger->info("loaded '{}': {}", path, state->model->description());
    auto* handle = new les_model{std::move(state)};
    *out_model = handle;
    return LES_OK;
  });
}

void les_model_free(les_model* model) { delete model; }

int32_t les_model_n_vocab(const les_model* m) { return hp(m) ? hp(m)->n_vocab : 0; }
int32_t les_model_n_embd(const les_model* m) { return hp(m) ? hp(m)->n_embd : 0; }
int32_t les_model_n_layer(const les_model* m) { return hp(m) ? hp(m)->n_layer : 0; }
int32_t les_model_n_head(const les_model* m) { return hp(m) ? hp(m)->n_head : 0; }
int32_t les_model_n_head_kv(const les_model* m) { return hp(m) ? hp(m)->n_head_kv : 0; }
int32_t les_model_n_expert(const les_model* m) { return hp(m) ? hp(m)->n_expert : 0; }
int32_t les_model_n_expert_used(const les_model* m) { return hp(m) ? hp(m)->n_expert_used : 0; }
int32_t les_model_n_ctx_train(const les_model* m) { return hp(m) ? hp(m)->n_ctx_train : 0; }

uint64_t les_model_expert_bytes(const les_model* m, int32_t layer) {
  if (hp(m) == nullptr || layer < 0 || layer >= hp(m)->n_layer) return 0;
  try {
    auto x = les::ExpertLayout::from_file(m->state->model->file());
    if (!x.ok() || layer >= x->n_layer()) return 0;
    const les::LayerExpertInfo& li = x->layer(layer);
    return li.present ? li.expert_bytes : 0;
  } catch (...) {
    return 0;
  }
}

int32_t les_model_desc(const les_model* m, char* buf, size_t buf_size) {
  if (m == nullptr || !m->state) return -1;
  try {
    return copy_out(m->state->model->description(), buf, buf_size);
  } catch (...) {
    return -1;
  }
}

int32_t les_model_meta_str(const les_model* m, const char* key, char* buf, size_t buf_size) {
  if (m == nullptr || !m->state || key == nullptr) return -1;
  try {
    const les::gguf::Value* v = m->state->model->file().find(key);
    if (v == nullptr) return -1;
    return copy_out(value_to_text(*v), buf, buf_size);
  } catch (...) {
    return -1;
  }
}

les_token les_token_bos(const les_model* m) {
  if (m == nullptr || !m->state) return -1;
  const auto& v = m->state->tokenizer->vocab();
  return v.is_valid_id(v.bos()) ? v.bos() : -1;
}

les_token les_token_eos(const les_model* m) {
  if (m == nullptr || !m->state) return -1;
  const auto& v = m->state->tokenizer->vocab();
  return v.is_valid_id(v.eos()) ? v.eos() : -1;
}

les_status les_tokenize(const les_model* m, const char* text, size_t text_len, bool add_special, bool parse_special,
                        les_token* tokens, int32_t n_tokens_max, int32_t* n_tokens_out) {
  return guarded("les_tokenize", [&]() -> les_status {
    if (m == nullptr || !m->state) return fail(les::invalid_argument_error("les_tokenize: model is NULL"));
    if (text == nullptr && text_len > 0) return fail(les::invalid_argument_error("les_tokenize: text is NULL"));
    if (n_tokens_out == nullptr) return fail(les::invalid_argument_error("les_tokenize: n_tokens_out is NULL"));
    if (n_tokens_max < 0 || (tokens == nullptr && n_tokens_max > 0))
      return fail(les::invalid_argument_error("les_tokenize: tokens is NULL or n_tokens_max < 0"));
    auto ids = m->state->tokenizer->tokenize(std::string_view(text ? text : "", text_len), add_special,
                                             parse_special);
    if (!ids.ok()) return fail(ids.status());
    if (ids->size() > static_cast<size_t>(INT32_MAX))
      return fail(les::invalid_argument_error("les_tokenize: more than 2^31 tokens"));
    *n_tokens_out = static_cast<int32_t>(ids->size());
    if (ids->size() > static_cast<size_t>(n_tokens_max))
      return fail(les::invalid_argument_error("les_tokenize: the text has " + std::to_string(ids->size()) +
                                              " tokens but the buffer holds " + std::to_string(n_tokens_max)));
    std::copy(ids->begin(), ids->end(), tokens);
    return LES_OK;
  });
}

les_status les_token_to_piece(const les_model* m, les_token token, char* buf, size_t buf_size, size_t* n_out) {
  return guarded("les_token_to_piece", [&]() -> les_status {
    if (m == nullptr || !m->state) return fail(les::invalid_argument_error("les_token_to_piece: model is NULL"));
    if (n_out == nullptr) return fail(les::invalid_argument_error("les_token_to_piece: n_out is NULL"));
    auto piece = m->state->tokenizer->token_to_piece(token);
    if (!piece.ok()) return fail(piece.status());
    *n_out = piece->size();
    if (piece->size() > buf_size || (buf == nullptr && !piece->empty()))
      return fail(les::invalid_argument_error("les_token_to_piece: token " + std::to_string(token) + " needs " +
                                              std::to_string(piece->size()) + " bytes, buffer has " +
                                              std::to_string(buf_size)));
    if (!piece->empty()) std::memcpy(buf, piece->data(), piece->size());
    return LES_OK;
  });
}

}  // extern "C"
