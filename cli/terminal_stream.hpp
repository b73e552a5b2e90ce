#pragma once
// bisectctl prints text others wrote (commit subjects and author names, build and run logs, the daemon's errors):
// every human-readable byte goes through a TerminalStream, so no escape sequence from a tree reaches the terminal.

#include <ostream>
#include <streambuf>
#include <string>

namespace bisectd::cli {

// A streambuf that passes what is written to `target` through base::escape_control (LF, TAB and CR LF kept: a report
// mail prints byte for byte). Nothing is held back but a UTF-8 sequence or a CR LF cut by the end of a write, so
// writes through it and through `target` directly (JSON, escaped already) come out in order.
class EscapingStreambuf : public std::streambuf {
public:
  explicit EscapingStreambuf(std::streambuf* target) : m_target(target) {}
  EscapingStreambuf(const EscapingStreambuf&) = delete;
  EscapingStreambuf& operator=(const EscapingStreambuf&) = delete;
  ~EscapingStreambuf() override;

protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize n) override;
  int sync() override;

private:
  // Writes the pending bytes, all of them or all but a cut UTF-8 sequence at the end.
  void drain(bool all);

  std::streambuf* m_target;
  std::string m_pending;
};

// An ostream over an EscapingStreambuf to `target`'s buffer.
class TerminalStream : public std::ostream {
public:
  explicit TerminalStream(std::ostream& target) : std::ostream(nullptr), m_buffer(target.rdbuf()) { rdbuf(&m_buffer); }

private:
  EscapingStreambuf m_buffer;
};

} // namespace bisectd::cli
