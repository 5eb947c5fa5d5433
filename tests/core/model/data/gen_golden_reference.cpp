// Writes a golden reference (the JSON schema of shared/fixtures/README.md
// section 3, without the "experts" record) for one model file by running it
// in llama.cpp through its public C API (llama.h): each prompt decoded as one
// batch (top-20 logits, logsumexp and entropy at the last position), then 32
// greedy tokens one per decode (argmax, ties to the lowest id; the margin
// between the two best logits, logsumexp and entropy at each step), with
// n_ctx 512, batch 512, 2 threads, F16 KV cache, flash attention off; plus
// the full logits of prompt 1's last position as little-endian F32.
//
// Not part of the build: compile it against a llama.cpp build at the
// fixtures' commit (81ff7abe; shared/tools/build-llama-cpp.sh builds one), e.g.
//   L=~/.cache/les-peers/llama.cpp-81ff7abe
//   g++ -O2 -std=c++17 gen_golden_reference.cpp -I$L/include -I$L/ggml/include \
//       $L/build/src/libllama.a $L/build/ggml/src/libggml.a $L/build/ggml/src/libggml-cpu.a \
//       $L/build/ggml/src/libggml-base.a -fopenmp -lpthread -o gen_golden_reference
// usage: gen_golden_reference MODEL.gguf PROMPTS.json OUT.json OUT_LOGITS.f32 MODEL_FILE_FIELD
//   PROMPTS.json: {"prompts": [{"text": ...}, ...]} (a reference JSON works);
//   MODEL_FILE_FIELD: what to record as model_file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) h += {d[c >> 4], d[c & 15]};
  return h;
}

// JSON string literal; invalid UTF-8 bytes become U+FFFD.
std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (int k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    if (!ok) {
      o += "\\ufffd";
      ++i;
      continue;
    }
    if (len == 1) {
      if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
      else if (c == '\n') o += "\\n";
      else if (c == '\t') o += "\\t";
      else if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        o += b;
      } else o += static_cast<char>(c);
    } else {
      o += s.substr(i, len);
    }
    i += len;
  }
  return o + "\"";
}

// The "text" values of a prompts file, read with a minimal scan.
std::vector<std::string> read_prompts(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string j = ss.str();
  std::vector<std::string> out;
  size_t at = j.find("\"prompts\"");
  while ((at = j.find("\"text\": \"", at)) != std::string::npos) {
    // Only prompt-level "text" keys: the greedy record's text follows "greedy".
    const size_t greedy = j.rfind("\"greedy\"", at), index = j.rfind("\"index\"", at);
    at += 9;
    std::string s;
    for (; j[at] != '"'; ++at) {
      if (j[at] != '\\') {
        s += j[at];
        continue;
      }
      const char e = j[++at];
      if (e == 'n') s += '\n';
      else if (e == 't') s += '\t';
      else if (e == 'u') {
        const unsigned cp = static_cast<unsigned>(std::stoul(j.substr(at + 1, 4), nullptr, 16));
        at += 4;
        if (cp < 0x80) s += static_cast<char>(cp);
        else if (cp < 0x800) s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 63));
        else {
          s += static_cast<char>(0xE0 | (cp >> 12));
          s += static_cast<char>(0x80 | ((cp >> 6) & 63));
          s += static_cast<char>(0x80 | (cp & 63));
        }
      } else s += e;
    }
    if (greedy == std::string::npos || (index != std::string::npos && index > greedy)) out.push_back(s);
  }
  return out;
}

struct Stats {
  double logsumexp = 0, entropy = 0;
};
Stats stats_of(const float* l, int n) {
  const double m = *std::max_element(l, l + n);
  double z = 0;
  for (int i = 0; i < n; ++i) z += std::exp(l[i] - m);
  Stats s;
  s.logsumexp = m + std::log(z);
  for (int i = 0; i < n; ++i) {
    const double p = std::exp(l[i] - s.logsumexp);
    if (p > 0) s.entropy -= p * std::log(p);
  }
  return s;
}

std::vector<int> top_ids(const float* l, int n, int k) {
  std::vector<int> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = i;
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                    [&](int a, int b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  ids.resize(k);
  return ids;
}

std::string piece(const llama_vocab* v, llama_token t) {
  char buf[256];
  const int n = llama_token_to_piece(v, t, buf, sizeof buf, 0, false);
  return n > 0 ? std::string(buf, n) : std::string();
}

std::vector<llama_token> tokenize(const llama_vocab* v, const std::string& text, bool add_special) {
  std::vector<llama_token> t(text.size() + 8);
  const int n = llama_tokenize(v, text.c_str(), static_cast<int>(text.size()), t.data(), static_cast<int>(t.size()),
                               add_special, false);
  t.resize(n > 0 ? n : 0);
  return t;
}

template <typename T>
std::string list(const std::vector<T>& v) {
  std::ostringstream o;
  o.precision(9);
  o << "[";
  for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << v[i];
  return o.str() + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL.gguf PROMPTS.json OUT.json OUT_LOGITS.f32 MODEL_FILE_FIELD\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> prompts = read_prompts(argv[2]);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 512;
  cp.n_batch = 512;
  cp.n_ubatch = 512;
  cp.n_threads = 2;
  cp.n_threads_batch = 2;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.type_k = GGML_TYPE_F16;
  cp.type_v = GGML_TYPE_F16;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return 1;
  char desc[256];
  llama_model_desc(model, desc, sizeof desc);

  std::ostringstream js;
  js.precision(9);
  js << "{\n \"model_file\": " << json_str(argv[5]) << ",\n \"llama_cpp_commit\": \"81ff7abe50b95fb81cc70a6cdba1eb1a02a48f62\",\n"
     << " \"generator\": \"tests/core/model/data/gen_golden_reference.cpp\",\n \"model_desc\": " << json_str(desc)
     << ",\n \"settings\": {\"n_ctx\": 512, \"n_batch\": 512, \"n_ubatch\": 512, \"n_threads\": 2, \"flash_attn\": false, "
        "\"kv_cache_type\": \"f16\"},\n \"vocab\": {\"n_vocab\": "
     << n_vocab << ", \"add_bos\": " << (llama_vocab_get_add_bos(vocab) ? "true" : "false") << ", \"bos\": "
     << llama_vocab_bos(vocab) << ", \"eos\": " << llama_vocab_eos(vocab) << "},\n \"prompts\": [";
  for (size_t pi = 0; pi < prompts.size(); ++pi) {
    llama_memory_clear(llama_get_memory(ctx), true);
    std::vector<llama_token> toks = tokenize(vocab, prompts[pi], true);
    if (llama_decode(ctx, llama_batch_get_one(toks.data(), static_cast<int>(toks.size()))) != 0) return 1;
    const float* l = llama_get_logits_ith(ctx, -1);
    const std::vector<int> top = top_ids(l, n_vocab, 20);
    std::vector<double> top_l;
    for (int id : top) top_l.push_back(l[id]);
    const Stats st = stats_of(l, n_vocab);
    if (pi == 0) {
      std::ofstream lf(argv[4], std::ios::binary);
      lf.write(reinterpret_cast<const char*>(l), static_cast<std::streamsize>(n_vocab * sizeof(float)));
    }
    js << (pi ? "," : "") << "\n  {\"index\": " << pi << ", \"text\": " << json_str(prompts[pi])
       << ",\n   \"tokens_no_special\": " << list(tokenize(vocab, prompts[pi], false))
       << ",\n   \"tokens_model\": " << list(toks) << ",\n   \"last_position\": {\"top20_ids\": " << list(top)
       << ", \"top20_logits\": " << list(top_l) << ", \"logsumexp\": " << st.logsumexp
       << ", \"entropy\": " << st.entropy << "},\n";
    std::vector<llama_token> ids;
    std::vector<double> chosen, margin, lse, ent;
    std::vector<std::string> pieces_hex;
    std::string text;
    for (int step = 0; step < 32; ++step) {
      const float* g = llama_get_logits_ith(ctx, -1);
      const std::vector<int> t2 = top_ids(g, n_vocab, 2);
      const Stats s = stats_of(g, n_vocab);
      llama_token tok = t2[0];
      ids.push_back(tok);
      chosen.push_back(g[t2[0]]);
      margin.push_back(static_cast<double>(g[t2[0]]) - g[t2[1]]);
      lse.push_back(s.logsumexp);
      ent.push_back(s.entropy);
      const std::string p = piece(vocab, tok);
      pieces_hex.push_back("\"" + hex(p) + "\"");
      text += p;
      if (step + 1 < 32 && llama_decode(ctx, llama_batch_get_one(&tok, 1)) != 0) return 1;
    }
    // The continuation as llama_detokenize renders it (SPM drops the first piece's leading space).
    std::vector<char> buf(text.size() + 64);
    const int n_text = llama_detokenize(vocab, ids.data(), static_cast<int>(ids.size()), buf.data(),
                                        static_cast<int>(buf.size()), false, false);
    text.assign(buf.data(), n_text > 0 ? n_text : 0);
    js << "   \"greedy\": {\"ids\": " << list(ids) << ", \"text\": " << json_str(text) << ", \"text_hex\": \""
       << hex(text) << "\", \"pieces_hex\": " << list(pieces_hex) << ", \"chosen_logit\": " << list(chosen)
       << ", \"margin_top1_top2\": " << list(margin) << ", \"logsumexp\": " << list(lse) << ", \"entropy\": "
       << list(ent) << "}";
    if (pi == 0) js << ",\n   \"full_logits_bin\": " << json_str(std::string(argv[4]).substr(std::string(argv[4]).rfind('/') + 1));
    js << "}";
  }
  js << "\n ]\n}\n";
  std::ofstream(argv[3]) << js.str();
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
