// `les serve`'s API key check without a server (serve/routes.h):
// bearer_matches accepts exactly the key, the scheme in any case, whatever
// the length of what was sent (its time depends on the key's length only,
// which a test cannot observe reliably; this checks the answers).
#include <catch2/catch.hpp>

#include <string>

#include "serve/routes.h"

using les::tool::bearer_matches;

TEST_CASE("bearer_matches: exactly the key, the scheme in any case", "[serve][hostile]") {
  const std::string key = "s3cret-key";
  CHECK(bearer_matches("Bearer s3cret-key", key));
  CHECK(bearer_matches("bEaReR   s3cret-key", key));
  CHECK_FALSE(bearer_matches("Bearer s3cret-ke", key));    // a prefix
  CHECK_FALSE(bearer_matches("Bearer s3cret-keyy", key));  // longer
  CHECK_FALSE(bearer_matches("Bearer s3cret-kez", key));   // the last byte differs
  CHECK_FALSE(bearer_matches("Bearer ", key));
  CHECK_FALSE(bearer_matches(std::string("Bearer s3cret-key\0", 18), key));  // a NUL after it
  CHECK_FALSE(bearer_matches("Basic s3cret-key", key));
  CHECK_FALSE(bearer_matches("Bearers3cret-key", key));
}
