// `les run`'s speculative-decoding options; see speculative_options.h.
#include "common/speculative_options.h"

#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <string>

#include "common/model_options.h"
#include "core/speculative/prompt_lookup.h"
#include "core/speculative/speculative_decoder.h"

namespace les::tool {
namespace {

constexpr int32_t kDefaultLookup = 3;
constexpr int32_t kMaxLookup = kPromptLookupMaxNgram;  // les_generate_params.lookup_ngram's bound
constexpr int32_t kMaxDraftMax = kMaxDraftTokens;      // les_generate_params.draft_max's bound

// A whole number in [lo, hi] from `s`, or false.
bool parse_int(const std::string& s, int32_t lo, int32_t hi, int32_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

void add_speculative_options(CLI::App* cmd, SpeculativeOptions& o) {
  o.lookup_opt = cmd->add_option("--lookup", o.lookup,
                  "Speculative decoding with prompt lookup: draft what followed the last N tokens earlier in the "
                  "text (N = 1.." + std::to_string(kMaxLookup) + "; default 3 when given without a value)")
      ->expected(0, 1);
  cmd->add_option("--draft", o.draft,
                  "Speculative decoding with a draft model: a GGUF with the same vocabulary as -m, run resident");
  cmd->add_flag("--mtp", o.mtp,
                "Speculative decoding with the draft head stored in -m (an MTP / nextn block; a model without "
                "one is refused)");
  cmd->add_option("--draft-max", o.draft_max, "Most drafted tokens per verify pass (1.." + std::to_string(kMaxDraftMax) + ")")
      ->capture_default_str();
  cmd->add_option("--draft-min", o.draft_min,
                  "Fewest drafts a verify pass checks when the drafter offers them (0..draft-max; 0 = the byte-aware "
                  "length decides, > 0 forces speculation: for measurements)")
      ->capture_default_str();
}

int validate_speculative_options(const char* tool, SpeculativeOptions& o) {
  o.lookup_ngram = 0;
  if (o.lookup_opt != nullptr && o.lookup_opt->count() > 0) {
    if (o.lookup.empty()) {
      o.lookup_ngram = kDefaultLookup;
    } else if (!parse_int(o.lookup, 1, kMaxLookup, &o.lookup_ngram)) {
      std::fprintf(stderr, "les %s: --lookup N must be a whole number in 1..%d (n-gram length), got '%s'\n", tool,
                   kMaxLookup, o.lookup.c_str());
      return 2;
    }
  }
  if ((o.lookup_ngram > 0) + !o.draft.empty() + o.mtp > 1) {
    std::string given = o.lookup_ngram > 0 ? "--lookup" : "";
    if (!o.draft.empty()) given += std::string(given.empty() ? "" : " and ") + "--draft";
    if (o.mtp) given += " and --mtp";
    std::fprintf(stderr, "les %s: %s are two drafters; give one\n", tool, given.c_str());
    return 2;
  }
  if (o.draft_max < 1 || o.draft_max > kMaxDraftMax) {
    std::fprintf(stderr, "les %s: --draft-max must be in 1..%d (drafted tokens per verify pass), got %d\n", tool,
                 kMaxDraftMax, o.draft_max);
    return 2;
  }
  if (o.draft_min < 0 || o.draft_min > o.draft_max) {
    std::fprintf(stderr, "les %s: --draft-min must be in 0..--draft-max (%d), got %d\n", tool, o.draft_max,
                 o.draft_min);
    return 2;
  }
  if (!o.enabled() && o.draft_max != SpeculativeOptions{}.draft_max)
    std::fprintf(stderr, "les %s: note: --draft-max applies only with --lookup, --draft or --mtp\n", tool);
  return 0;
}

int open_draft_model(const char* tool, const SpeculativeOptions& o, const les_model* target, int n_threads,
                     ModelHandle& draft) {
  if (o.draft.empty()) return 0;
  les_model_params mp = les_model_default_params();
  mp.n_threads = n_threads;
  use_tool_log(tool, mp);
  if (les_status st = les_model_load(o.draft.c_str(), &mp, &draft.p); st != LES_OK)
    return fail_c(tool, "--draft: loading " + o.draft, st, les_last_error());
  if (les_status st = les_model_check_draft(target, draft.p); st != LES_OK)
    return fail_c(tool, "--draft " + o.draft + " cannot draft for -m", st, les_last_error(), 2);
  return 0;
}

void apply_speculative_options(const SpeculativeOptions& o, const les_model* draft, les_generate_params& gp) {
  gp.lookup_ngram = o.lookup_ngram;
  gp.draft_model = draft;
  gp.mtp = o.mtp;
  gp.draft_max = o.draft_max;
  gp.draft_min = o.draft_min;
}

void print_speculative_banner(const char* tool, const SpeculativeOptions& o, const les_model* draft) {
  if (o.lookup_ngram > 0)
    std::fprintf(stderr, "les %s: speculative decoding: prompt lookup (n-grams up to %d), draft-max %d\n", tool,
                 o.lookup_ngram, o.draft_max);
  else if (draft != nullptr)
    std::fprintf(stderr, "les %s: speculative decoding: draft model %s (%s), draft-max %d\n", tool, o.draft.c_str(),
                 model_desc(draft).c_str(), o.draft_max);
  else if (o.mtp)
    std::fprintf(stderr, "les %s: speculative decoding: the model's MTP head, draft-max %d\n", tool, o.draft_max);
}

void print_speculative_stats(const char* tool, const les_generate_stats& s) {
  const double mib = 1024.0 * 1024.0;
  std::fprintf(stderr,
               "les %s: speculative: target passes %d (verify passes %d), drafted %d, verified %d, accepted %d "
               "(acceptance %.1f%%), %.2f tokens per target pass\n"
               "les %s: speculative: union %lld experts, %.2f MiB (%.2f MiB per target pass); bytes per token: "
               "union %.1f KiB, read %.1f KiB; drafting %.1f ms\n",
               tool, s.n_target_passes, s.n_verify_passes, s.n_drafted, s.n_draft_verified, s.n_draft_accepted,
               100.0 * ratio(s.n_draft_accepted, s.n_draft_verified), ratio(s.n_pass_tokens, s.n_target_passes), tool,
               static_cast<long long>(s.union_experts), static_cast<double>(s.union_bytes) / mib,
               ratio(static_cast<double>(s.union_bytes) / mib, s.n_target_passes),
               ratio(static_cast<double>(s.union_bytes) / 1024.0, s.n_pass_tokens),
               ratio(static_cast<double>(s.expert_bytes_read) / 1024.0, s.n_pass_tokens), s.draft_seconds * 1e3);
}

nlohmann::json speculative_stats_json(const les_generate_stats& s) {
  return {{"target_passes", s.n_target_passes},
          {"verify_passes", s.n_verify_passes},
          {"drafted", s.n_drafted},
          {"verified", s.n_draft_verified},
          {"accepted", s.n_draft_accepted},
          {"acceptance", ratio(s.n_draft_accepted, s.n_draft_verified)},
          {"pass_tokens", s.n_pass_tokens},
          {"tokens_per_target_pass", ratio(s.n_pass_tokens, s.n_target_passes)},
          {"union_experts", s.union_experts},
          {"union_bytes", s.union_bytes},
          {"expert_bytes_read", s.expert_bytes_read},
          {"union_bytes_per_token", ratio(static_cast<double>(s.union_bytes), s.n_pass_tokens)},
          {"read_bytes_per_token", ratio(static_cast<double>(s.expert_bytes_read), s.n_pass_tokens)},
          {"draft_ms", s.draft_seconds * 1e3}};
}

}  // namespace les::tool
