// See json_limits.h.
#include "serve/json_limits.h"

#include <algorithm>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace les::tool {

JsonShapeLimits request_json_limits(int32_t n_ctx) {
  JsonShapeLimits l;
  l.max_nodes = std::max<uint64_t>(l.max_nodes, 4 * static_cast<uint64_t>(std::max(n_ctx, 0)));
  return l;
}

std::string check_json_shape(std::string_view text, const JsonShapeLimits& limits) {
  int depth = 0;
  // Every value but the first is preceded by ',' or ':' or opens a container:
  // counting those and the containers bounds the parser's nodes.
  uint64_t nodes = 1;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character (\" included) is skipped
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > limits.max_depth)
          return "the request body nests JSON arrays and objects more than " + std::to_string(limits.max_depth) +
                 " levels deep (at byte " + std::to_string(i) + "); at most " + std::to_string(limits.max_depth) +
                 " are accepted";
        ++nodes;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      case ',':
      case ':': ++nodes; break;
      default: break;
    }
    if (nodes > limits.max_nodes)
      return "the request body holds more than " + std::to_string(limits.max_nodes) +
             " JSON values (at byte " + std::to_string(i) + "); at most " + std::to_string(limits.max_nodes) +
             " are accepted for this context";
  }
  return "";
}

void return_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace les::tool
