// Stop strings for streamed generation: decides which generated text can be
// shown now and where generation ends.
//
// Thread-safety: thread-compatible value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace les {

// Splits generated text against stop strings (exposed for tests). push()
// returns the text that can be emitted now: everything except a tail that is
// a proper prefix of some stop string. After a stop string appears, push()
// returns the text before it and stopped() is true; later pushes return "".
class StopStringFilter {
 public:
  explicit StopStringFilter(std::vector<std::string> stops);
  std::string push(std::string_view text);
  // Held-back text at the end of generation (no stop string matched).
  std::string flush();
  bool stopped() const noexcept { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace les
