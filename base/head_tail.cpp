#include "base/head_tail.hpp"

#include <algorithm>

namespace bisectd::base {

std::string_view HeadTail::add(std::string_view data) {
  auto now = std::min(data.size(), m_head_left);
  m_head_left -= now;
  m_tail.append(data.substr(now));
  if (m_tail.size() > 2 * m_tail_size) {
    trim(m_tail_size);
  }
  return data.substr(0, now);
}

void HeadTail::trim(std::size_t keep) {
  if (m_tail.size() > keep) {
    m_dropped += m_tail.size() - keep;
    m_tail.erase(0, m_tail.size() - keep);
  }
}

std::string HeadTail::finish() {
  trim(m_tail_size);
  std::string out;
  if (m_dropped > 0) {
    out = "\n[bisectd: " + std::to_string(m_dropped) + " bytes of output left out here]\n";
  }
  out += m_tail;
  m_tail.clear();
  return out;
}

} // namespace bisectd::base
