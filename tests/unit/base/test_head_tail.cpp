#include "base/head_tail.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

namespace {

// Feeds `input` in chunks of `chunk` bytes and returns what would be written: the head as it comes, then finish().
std::string through(base::HeadTail& cap, const std::string& input, std::size_t chunk) {
  std::string out;
  for (std::size_t i = 0; i < input.size(); i += chunk) {
    out += cap.add(std::string_view(input).substr(i, chunk));
  }
  return out + cap.finish();
}

} // namespace

TEST_CASE("HeadTail passes a stream within its limit unchanged", "[base]") {
  base::HeadTail cap(100);
  std::string input(100, 'a');
  CHECK(through(cap, input, 7) == input);
  CHECK(cap.dropped() == 0);
}

TEST_CASE("HeadTail keeps the head and the tail of a long stream and says what it left out", "[base]") {
  std::string input;
  for (int i = 0; i < 10000; ++i) {
    input += std::to_string(i) + "\n";
  }
  for (std::size_t chunk : {1UL, 13UL, 4096UL, input.size()}) {
    base::HeadTail cap(1000);
    auto out = through(cap, input, chunk);
    CHECK(out.substr(0, 500) == input.substr(0, 500));
    CHECK(out.ends_with(input.substr(input.size() - 500)));
    CHECK(cap.dropped() == input.size() - 1000);
    CHECK(out.find("[bisectd: " + std::to_string(input.size() - 1000) + " bytes of output left out here]") !=
          std::string::npos);
    CHECK(out.size() < 1100);
  }
}
