// cli::TerminalStream: bisectctl's stdout and stderr for human-readable text.
#include "cli/terminal_stream.hpp"

#include <catch2/catch.hpp>

#include <sstream>

TEST_CASE("cli::TerminalStream escapes across writes without breaking UTF-8 or CR LF", "[cli][hostile]") {
  std::ostringstream target;
  {
    bisectd::cli::TerminalStream out(target);
    for (const char* piece : {"M\xc3", "\xbc", "ller\r", "\n", "\x1b", "[2J", "lone\r", "x", "cut \xe2\x82"}) {
      out << piece; // a UTF-8 sequence and a CR LF cut between writes
    }
  } // the destructor writes what was held back
  CHECK(target.str() == std::string("M\xc3\xbcller\r\n\\x1b[2Jlone\\x0dx") + "cut \\xe2\\x82");
}
