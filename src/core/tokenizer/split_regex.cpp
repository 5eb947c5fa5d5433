// SplitRegex matching: symbol sets, the backtracking machine and the
// regex_iterator-style split. The pattern compiler is split_regex_compile.cpp.
#include "core/tokenizer/split_regex.h"

#include <algorithm>

#include "core/tokenizer/unicode_class.h"

namespace les {

namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
// Frame::pc flag: the frame retries a kRun with one symbol fewer (else it is an alternative).
constexpr uint32_t kRunFrame = 1u << 31;

bool is_word_symbol(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

uint32_t regex_symbol(char32_t cp, uint32_t flags, SymbolMode mode) noexcept {
  if (cp < 0x80) return cp;
  if ((flags & kCpWhitespace) != 0) return 0x0B;
  if (mode == SymbolMode::code_points) return cp;
  if ((flags & kCpNumber) != 0) return 0xD1;
  if ((flags & kCpLetter) != 0) return 0xD2;
  if ((flags & kCpPunct) != 0) return 0xD3;
  if ((flags & kCpMark) != 0) return 0xD4;
  if ((flags & kCpSymbol) != 0) return 0xD5;
  return 0xD0;
}

// ---------------------------------------------------------------------------
// SymbolSet

bool SymbolSet::has_high(uint32_t s) const noexcept {
  auto it = std::upper_bound(high_.begin(), high_.end(), s,
                             [](uint32_t v, const std::pair<uint32_t, uint32_t>& r) { return v < r.first; });
  return it != high_.begin() && s <= std::prev(it)->second;
}

void SymbolSet::add(uint32_t lo, uint32_t hi) {
  hi = std::min(hi, kMaxCodePoint);
  for (uint32_t c = lo; c <= hi && c < 256; ++c) low_[c >> 6] |= uint64_t{1} << (c & 63);
  if (hi < 256) return;
  lo = std::max(lo, 256u);
  // Insert [lo, hi] and merge overlapping or adjacent ranges.
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  merged.reserve(high_.size() + 1);
  bool placed = false;
  for (const auto& r : high_) {
    if (r.second + 1 < lo) {
      merged.push_back(r);
    } else if (hi + 1 < r.first) {
      if (!placed) merged.emplace_back(lo, hi), placed = true;
      merged.push_back(r);
    } else {
      lo = std::min(lo, r.first);
      hi = std::max(hi, r.second);
    }
  }
  if (!placed) merged.emplace_back(lo, hi);
  std::sort(merged.begin(), merged.end());
  high_.swap(merged);
}

void SymbolSet::add(const SymbolSet& other) {
  for (size_t i = 0; i < low_.size(); ++i) low_[i] |= other.low_[i];
  for (const auto& r : other.high_) add(r.first, r.second);
}

void SymbolSet::complement() {
  for (uint64_t& w : low_) w = ~w;
  std::vector<std::pair<uint32_t, uint32_t>> out;
  uint32_t next = 256;
  for (const auto& r : high_) {
    if (r.first > next) out.emplace_back(next, r.first - 1);
    next = r.second + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  high_.swap(out);
}

void SymbolSet::intersect(const SymbolSet& other) {
  for (size_t i = 0; i < low_.size(); ++i) low_[i] &= other.low_[i];
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& a : high_) {
    for (const auto& b : other.high_) {
      const uint32_t lo = std::max(a.first, b.first), hi = std::min(a.second, b.second);
      if (lo <= hi) out.emplace_back(lo, hi);
    }
  }
  std::sort(out.begin(), out.end());
  high_.swap(out);
}

// ---------------------------------------------------------------------------
// Matching

bool SplitRegex::word_at(const uint32_t* s, uint32_t n, uint32_t pos) const noexcept {
  return pos < n && is_word_symbol(s[pos]);
}

uint32_t SplitRegex::run(uint32_t pc, const uint32_t* s, uint32_t n, uint32_t pos, uint32_t reject_at,
                         Scratch& stack) const {
  const size_t base = stack.size();
  for (;;) {
    const Inst& in = prog_[pc];
    bool ok = true;
    switch (in.op) {
      case Op::kSet:
        if (pos < n && sets_[in.a].has(s[pos])) {
          ++pos;
          ++pc;
        } else {
          ok = false;
        }
        break;
      case Op::kRun: {
        const SymbolSet& set = sets_[in.a];
        const uint32_t limit = std::min(n - pos, in.max);
        uint32_t k = 0;
        while (k < limit && set.has(s[pos + k])) ++k;
        if (k < in.min) {
          ok = false;
          break;
        }
        if (k > in.min) stack.push_back({pc | kRunFrame, pos, k});
        pos += k;
        ++pc;
        break;
      }
      case Op::kSplit:
        stack.push_back({in.b, pos, 0});
        pc = in.a;
        break;
      case Op::kJmp:
        pc = in.a;
        break;
      case Op::kLook:
      case Op::kNotLook: {
        const bool matched = run(pc + 1, s, n, pos, kNoMatch, stack) != kNoMatch;
        if (matched == (in.op == Op::kLook)) {
          pc = in.b;
        } else {
          ok = false;
        }
        break;
      }
      case Op::kBegin:
        ok = pos == 0;
        ++pc;
        break;
      case Op::kEnd:
        ok = pos == n;
        ++pc;
        break;
      case Op::kWordB:
      case Op::kNotWordB: {
        const bool boundary = (pos > 0 && word_at(s, n, pos - 1)) != word_at(s, n, pos);
        ok = boundary == (in.op == Op::kWordB);
        ++pc;
        break;
      }
      case Op::kMatch:
        if (pos != reject_at) {
          stack.resize(base);
          return pos;
        }
        ok = false;
        break;
    }
    if (ok) continue;
    // Backtrack to the most recent choice point of this (sub-)match.
    if (stack.size() == base) return kNoMatch;
    Frame& f = stack.back();
    if ((f.pc & kRunFrame) != 0) {
      const uint32_t run_pc = f.pc & ~kRunFrame;
      const uint32_t k = --f.count;
      pos = f.pos + k;
      pc = run_pc + 1;
      if (k == prog_[run_pc].min) stack.pop_back();
    } else {
      pc = f.pc;
      pos = f.pos;
      stack.pop_back();
    }
  }
}

uint32_t SplitRegex::match_at(const uint32_t* s, uint32_t n, uint32_t start, bool nonempty, Scratch& scratch) const {
  return run(0, s, n, start, nonempty ? start : kNoMatch, scratch);
}

void SplitRegex::split(const uint32_t* s, uint32_t n, uint32_t base, std::vector<Span>& out, Scratch& scratch) const {
  uint32_t gap = 0;                  // first symbol not yet emitted
  uint32_t from = 0;                 // where the next search starts
  uint32_t after_empty = kNoMatch;   // position of the previous match if it was empty
  for (;;) {
    uint32_t mb = kNoMatch, me = kNoMatch;
    if (after_empty != kNoMatch) {
      // regex_iterator after an empty match: a non-empty match right there, else search one further.
      if (after_empty == n) break;
      const uint32_t e = match_at(s, n, after_empty, true, scratch);
      if (e != kNoMatch) {
        mb = after_empty;
        me = e;
      } else {
        from = after_empty + 1;
      }
    }
    if (mb == kNoMatch) {
      for (uint32_t st = from; st <= n; ++st) {
        if (!any_start_ && (st == n || !first_.has(s[st]))) continue;
        const uint32_t e = match_at(s, n, st, false, scratch);
        if (e != kNoMatch) {
          mb = st;
          me = e;
          break;
        }
      }
      if (mb == kNoMatch) break;
    }
    if (mb > gap) out.emplace_back(base + gap, base + mb);
    if (me > mb) out.emplace_back(base + mb, base + me);
    gap = me;
    if (me == mb) {
      after_empty = me;
    } else {
      after_empty = kNoMatch;
      from = me;
    }
  }
  if (gap < n) out.emplace_back(base + gap, base + n);
}

}  // namespace les
