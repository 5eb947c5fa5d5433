// BPE vocabulary learning for synthetic models; see synth_vocab.h.
#include "synth/synth_vocab.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace les {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581

// Length of the UTF-8 sequence starting with byte b, 0 if b cannot start one.
size_t utf8_len(unsigned char b) {
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 0;
}

// Splits text into words: runs of non-whitespace; each becomes "▁" + word,
// then a sequence of UTF-8 characters. Errors on invalid UTF-8.
Result<std::map<std::vector<std::string>, int64_t>> split_words(std::string_view text) {
  std::map<std::vector<std::string>, int64_t> words;
  std::vector<std::string> cur;
  auto flush = [&] {
    if (!cur.empty()) ++words[cur];
    cur.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (b == ' ' || b == '\n' || b == '\t' || b == '\r') {
      flush();
      ++i;
      continue;
    }
    const size_t n = utf8_len(b);
    if (n == 0 || i + n > text.size())
      return invalid_argument_error("synth vocab: invalid UTF-8 at byte " + std::to_string(i));
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80)
        return invalid_argument_error("synth vocab: invalid UTF-8 at byte " + std::to_string(i + k));
    if (cur.empty()) cur.emplace_back(kSpace);
    cur.emplace_back(text.substr(i, n));
    i += n;
  }
  flush();
  return words;
}

}  // namespace

Result<SpmVocab> learn_spm_vocab(std::string_view text, int32_t n_vocab) {
  LES_ASSIGN_OR_RETURN(auto words, split_words(text));
  if (words.empty()) return invalid_argument_error("synth vocab: empty training text");

  std::set<std::string> chars;
  for (const auto& [w, c] : words)
    for (const auto& s : w) chars.insert(s);
  const int32_t n_base = 3 + 256 + static_cast<int32_t>(chars.size());
  if (n_vocab < n_base)
    return invalid_argument_error("synth vocab: n_vocab " + std::to_string(n_vocab) + " is below the " +
                                  std::to_string(n_base) + " special, byte and character pieces");

  SpmVocab v;
  auto add = [&v](std::string piece, float score, int32_t type) {
    v.tokens.push_back(std::move(piece));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0.0f, synth_token_type::unknown);
  add("<s>", 0.0f, synth_token_type::control);
  add("</s>", 0.0f, synth_token_type::control);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 0.0f, synth_token_type::byte);
  }

  // Merges first (their ranks define the scores), characters appended after.
  std::vector<std::string> merged;
  std::set<std::string> known(chars.begin(), chars.end());
  std::vector<std::pair<std::vector<std::string>, int64_t>> work(words.begin(), words.end());
  const int32_t max_merges = n_vocab - n_base;
  while (static_cast<int32_t>(merged.size()) < max_merges) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;
    for (const auto& [w, c] : work)
      for (size_t i = 0; i + 1 < w.size(); ++i) pairs[{w[i], w[i + 1]}] += c;
    const std::pair<std::string, std::string>* best = nullptr;
    int64_t best_n = 1;  // a pair must occur at least twice
    for (const auto& [p, n] : pairs) {
      if (n > best_n && !known.count(p.first + p.second)) {  // map order: ties -> smallest pair
        best = &p;
        best_n = n;
      }
    }
    if (best == nullptr) break;
    const std::string a = best->first, b = best->second, ab = a + b;
    merged.push_back(ab);
    known.insert(ab);
    for (auto& [w, c] : work) {
      std::vector<std::string> out;
      out.reserve(w.size());
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == a && w[i + 1] == b) {
          out.push_back(ab);
          ++i;
        } else {
          out.push_back(w[i]);
        }
      }
      w = std::move(out);
    }
  }
  for (size_t r = 0; r < merged.size(); ++r) add(merged[r], -static_cast<float>(r), synth_token_type::normal);
  float s = -static_cast<float>(merged.size());
  for (const auto& ch : chars) add(ch, s--, synth_token_type::normal);
  return v;
}

std::string_view default_vocab_text() {
  // Written for LES; plain prose so that common English fragments become pieces.
  return "The small model in this file was made by a program and not by training. Its weights are "
         "random numbers drawn from a fixed seed, so the text it writes has no meaning at all. It is "
         "here so that the engine can be tried on a fresh machine without downloading anything. "
         "When you want real text, give the path of a trained model with the option for the model "
         "file, and the engine will load that one instead.\n"
         "A mixture of experts is a network in which each layer holds many small feed forward "
         "blocks, the experts, and a router that chooses a few of them for every token. Only the "
         "chosen experts are read and computed, which is why a large model can run on a machine "
         "whose memory cannot hold all of its weights at once. The other parts of the model, the "
         "attention, the norms, the router and the output head, stay in memory the whole time.\n"
         "The engine reads the experts from the disk as they are needed, and it tries to guess "
         "which experts the next layer will want while the current layer is still being computed. "
         "A wrong guess never changes the answer; it only costs one more read from the disk. The "
         "router of the real model always makes the final choice, with the real weights.\n"
         "On a quiet morning the river was grey and still, and the boats waited by the old stone "
         "wall. A woman walked along the bank with her dog, and the dog ran ahead to the bridge and "
         "back again. She stopped to watch the birds over the water, then turned toward the town, "
         "where the shops were opening and the bells of the church were ringing for the hour.\n"
         "Numbers such as 1, 2, 3, 10, 42, 100 and 2026 appear in text as well, and so do marks "
         "like commas, full stops, questions? and exclamations! A tokenizer must handle all of "
         "them, and every byte that it has never seen falls back to a byte piece of its own.\n";
}

}  // namespace les
