// See cli_values.h.
#include "common/cli_values.h"

#include <string>

namespace les::tool {

void refuse_empty_values_take_last(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& v) { return v.empty() ? std::string("empty value (give one, or leave the option out)") : ""; },
      "", "non-empty");
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    for (CLI::Option* opt : sub->get_options()) {
      const bool free_text = opt->check_lname("prompt") || opt->check_lname("system") || opt->check_lname("stop") ||
                             opt->check_name("text");
      if (opt->get_type_size() > 0 && !free_text) opt->check(non_empty);
      if (opt->get_type_size() > 0 && opt->get_items_expected_max() == 1) opt->take_last();
    }
}

}  // namespace les::tool
