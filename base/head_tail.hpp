#pragma once
// Keeps the head and the tail of a stream that may be far too long to keep whole (a benchmark printing 100 MB):
// the first half of the limit is passed on at once, the last half held back until the end, what lies between is
// counted and dropped. The tail matters as much as the head: benchmarks print their results last. Pure.

#include <cstdint>
#include <string>
#include <string_view>

namespace bisectd::base {

class HeadTail {
public:
  explicit HeadTail(std::size_t limit) : m_head_left(limit / 2), m_tail_size(limit - limit / 2) {}
  // The part of `data` to write now (a prefix of it: the rest of the head); the remainder is held back.
  std::string_view add(std::string_view data);
  // What to write after the head once the stream has ended: a line saying how much was left out, if anything,
  // then the tail.
  std::string finish();
  [[nodiscard]] std::uint64_t dropped() const { return m_dropped; }

private:
  void trim(std::size_t keep);

  std::size_t m_head_left;
  std::size_t m_tail_size;
  std::string m_tail; // up to twice m_tail_size between trims, so trimming costs O(1) per byte
  std::uint64_t m_dropped = 0;
};

} // namespace bisectd::base
