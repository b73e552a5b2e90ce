#pragma once
// A recording under tests/unit/monitors/data/ (a /proc file or perf output taken on this host or in a guest).

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

inline std::string data_file(const std::string& name) {
  std::ifstream in(std::string(BISECTD_SOURCE_DIR) + "/tests/unit/monitors/data/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
