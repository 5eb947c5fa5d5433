// The speculative-decoding options and report of `les run` and `les chat`:
//   --lookup [N]      prompt lookup drafting, n-grams of up to N tokens (default 3; 1..16)
//   --draft MODEL     a draft model (same vocabulary as -m), run resident
//   --mtp             the draft head (MTP / nextn block) stored in -m itself
//   --draft-max D     most drafts per verify pass (1..64; default 8)
//   --draft-min D     fewest drafts a pass verifies when offered (0..draft-max;
//                     default 0: the byte-aware length decides; > 0 forces
//                     speculation, for measurements)
// The settings go into les_generate_params (lookup_ngram, draft_model, mtp,
// draft_max); how many drafts each pass checks is chosen from the bytes the
// pass would read (les_generate.h), so speculation switches itself off when it
// does not pay. --stats prints the totals of les_generate_stats' speculative
// fields; --json carries them as "speculative".
//
// Exit codes: 2 for bad values (naming the flag, before any file is opened)
// and for a draft model whose vocabulary differs from the target's (naming
// the first difference); 1 when the draft file cannot be loaded.
//
// Thread-safety: single-threaded (the tool's main thread).
#pragma once

#include <les/les.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/handles.h"

namespace les::tool {

struct SpeculativeOptions {
  std::string lookup;      // --lookup's value as given ("" = the flag alone)
  const CLI::Option* lookup_opt = nullptr;  // set by add_speculative_options: was --lookup given
  int32_t lookup_ngram = 0;  // parsed by validate_speculative_options (0 = off)
  std::string draft;       // --draft MODEL ("" = none)
  int32_t draft_max = 8;   // --draft-max
  int32_t draft_min = 0;   // --draft-min
  bool mtp = false;        // --mtp

  bool enabled() const { return lookup_ngram > 0 || !draft.empty() || mtp; }
};

// Adds --lookup [N], --draft MODEL, --mtp, --draft-max D, --draft-min D.
void add_speculative_options(CLI::App* cmd, SpeculativeOptions& o);

// Usage errors (exit 2, "les TOOL: --flag ..."): --lookup not in 1..16,
// two of --lookup, --draft and --mtp, --draft-max not in 1..64, --draft-min
// not in 0..draft-max (a note when given without
// a drafter). Sets o.lookup_ngram. 0 when valid.
int validate_speculative_options(const char* tool, SpeculativeOptions& o);

// Loads --draft (threads as the target's) and checks its vocabulary against
// `target` (les_model_check_draft). Returns 0 (nothing to do without --draft),
// 1 (the file cannot be loaded) or 2 (another vocabulary).
int open_draft_model(const char* tool, const SpeculativeOptions& o, const les_model* target, int n_threads,
                     ModelHandle& draft);

// Sets the speculative fields of `gp` (draft: the loaded --draft model or null).
void apply_speculative_options(const SpeculativeOptions& o, const les_model* draft, les_generate_params& gp);

// The settings line on stderr, when speculation is on:
//   les TOOL: speculative decoding: prompt lookup (n-grams up to N), draft-max D
//   les TOOL: speculative decoding: draft model PATH (DESC), draft-max D
//   les TOOL: speculative decoding: the model's MTP head, draft-max D
void print_speculative_banner(const char* tool, const SpeculativeOptions& o, const les_model* draft);

// The --stats lines:
//   les TOOL: speculative: target passes N (verify passes N), drafted N, verified N, accepted N (acceptance X%),
//             X tokens per target pass
//   les TOOL: speculative: union N experts, X MiB (X MiB per target pass); bytes per token: union X KiB,
//             read X KiB; drafting X ms
void print_speculative_stats(const char* tool, const les_generate_stats& s);

// The same figures as a JSON object.
nlohmann::json speculative_stats_json(const les_generate_stats& s);

}  // namespace les::tool
