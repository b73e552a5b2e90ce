#pragma once
// The rows of one of docs/reliability.md's bad-input tables, so that a test keeps its cases and the document in
// step: every case documented with the message the test saw, every documented case tested.

#include <fstream>
#include <map>
#include <string>

namespace bisectd::testing {

// Case id (the row's first column, in backquotes) → the whole row, for the table under the heading `heading`.
inline std::map<std::string, std::string> catalogue_rows(const std::string& heading, const std::string& id_prefix) {
  std::ifstream in(std::string(BISECTD_SOURCE_DIR) + "/docs/reliability.md");
  std::map<std::string, std::string> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) {
      inside = line == heading;
    } else if (inside && line.starts_with("| `" + id_prefix)) {
      rows[line.substr(3, line.find('`', 3) - 3)] = line;
    }
  }
  return rows;
}

} // namespace bisectd::testing
