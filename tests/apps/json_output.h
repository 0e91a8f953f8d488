// Reading the JSON our apps print: one object per line on stdout, the
// summary last.
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "run_command.h"

namespace dgcn::testing {

inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

// The last JSON line of stdout (a null json when there is none).
inline nlohmann::json summary_of(const CommandResult& r) {
  auto lines = json_lines(r.out);
  return lines.empty() ? nlohmann::json() : lines.back();
}

}  // namespace dgcn::testing
