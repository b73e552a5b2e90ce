#include "cli/terminal_stream.hpp"

#include "base/strings.hpp"

namespace bisectd::cli {

namespace {

// Bytes at the end of `text` whose escaping depends on what follows: a UTF-8 sequence the text does not finish, or a
// CR (kept before an LF, shown otherwise). 0 when none.
std::size_t undecided_tail(const std::string& text) {
  if (!text.empty() && text.back() == '\r') {
    return 1;
  }
  for (std::size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xc0U) != 0x80U) { // the lead byte (or an ASCII one)
      std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      return length > back ? back : 0;
    }
  }
  return 0;
}

} // namespace

EscapingStreambuf::~EscapingStreambuf() {
  drain(true);
  m_target->pubsync();
}

void EscapingStreambuf::drain(bool all) {
  std::size_t keep = all ? 0 : undecided_tail(m_pending);
  std::string_view ready(m_pending.data(), m_pending.size() - keep);
  if (!ready.empty()) {
    std::string safe = base::escape_control(ready, base::LineBreaks::keep);
    m_target->sputn(safe.data(), static_cast<std::streamsize>(safe.size()));
  }
  m_pending.erase(0, m_pending.size() - keep);
}

EscapingStreambuf::int_type EscapingStreambuf::overflow(int_type c) {
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    m_pending += traits_type::to_char_type(c);
    drain(false);
  }
  return traits_type::not_eof(c);
}

std::streamsize EscapingStreambuf::xsputn(const char* text, std::streamsize n) {
  m_pending.append(text, static_cast<std::size_t>(n));
  drain(false);
  return n;
}

int EscapingStreambuf::sync() {
  drain(false);
  return m_target->pubsync();
}

} // namespace bisectd::cli
