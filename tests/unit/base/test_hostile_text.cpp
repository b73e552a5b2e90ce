// Text others wrote on its way to a terminal, a mail header or a report: base::escape_control,
// base::is_mail_address and base::strip_url_userinfo.
#include "base/strings.hpp"

#include <catch2/catch.hpp>

using bisectd::base::escape_control;
using bisectd::base::LineBreaks;

TEST_CASE("base::escape_control shows every control character", "[base][hostile]") {
  // The title-setting OSC and the clear-screen CSI a commit subject carried in issue 29.
  std::string pwned = "\x1b]0;pwned\x07\x1b[2J";
  CHECK(escape_control(pwned, LineBreaks::keep) == "\\x1b]0;pwned\\x07\\x1b[2J");
  CHECK(escape_control("a\rb\x7f\x08z", LineBreaks::keep) == "a\\x0db\\x7f\\x08z");
  CHECK(escape_control(std::string("nul\0x", 5), LineBreaks::keep) == "nul\\x00x");
}

TEST_CASE("base::escape_control keeps LF and TAB only in multi-line text", "[base][hostile]") {
  CHECK(escape_control("line 1\n\tline 2\n", LineBreaks::keep) == "line 1\n\tline 2\n");
  CHECK(escape_control("line 1\n\tline 2", LineBreaks::escape) == "line 1\\x0a\\x09line 2");
  // CR LF ends a mail's header lines (bisectctl report prints the mail byte for byte); a lone CR is shown.
  CHECK(escape_control("Subject: x\r\n\r\nbody\rfake", LineBreaks::keep) == "Subject: x\r\n\r\nbody\\x0dfake");
  CHECK(escape_control("a\r\n", LineBreaks::escape) == "a\\x0d\\x0a");
}

TEST_CASE("base::escape_control shows C1 controls and invalid UTF-8, keeps other UTF-8", "[base][hostile]") {
  const std::string csi_code_point = "\xc2\x9b", csi_byte = "\x9b";
  CHECK(escape_control(csi_code_point + "31m", LineBreaks::keep) == "\\u009b31m");
  CHECK(escape_control("\xc2\x85", LineBreaks::keep) == "\\u0085");        // NEL
  CHECK(escape_control(csi_byte + "31m", LineBreaks::keep) == "\\x9b31m"); // as a raw byte (Latin-1 terminals)
  CHECK(escape_control("M\xc3\xbcller \xe2\x82\xac \xf0\x9f\x90\xa7", LineBreaks::escape) ==
        "M\xc3\xbcller \xe2\x82\xac \xf0\x9f\x90\xa7");
  CHECK(escape_control("\xc2\xa0nbsp", LineBreaks::keep) == "\xc2\xa0nbsp"); // U+00A0 is printable
  CHECK(escape_control("cut \xe2\x82", LineBreaks::keep) == "cut \\xe2\\x82");
  CHECK(escape_control("overlong \xc0\xaf", LineBreaks::keep) == "overlong \\xc0\\xaf");
  CHECK(escape_control("plain text, a \\ backslash", LineBreaks::escape) == "plain text, a \\ backslash");
}

TEST_CASE("base::utf8_sequence_length", "[base][hostile]") {
  CHECK(bisectd::base::utf8_sequence_length("a", 0) == 1);
  CHECK(bisectd::base::utf8_sequence_length("\xc3\xbc", 0) == 2);
  CHECK(bisectd::base::utf8_sequence_length("\xe2\x82\xac", 0) == 3);
  CHECK(bisectd::base::utf8_sequence_length("\xf0\x9f\x90\xa7", 0) == 4);
  CHECK(bisectd::base::utf8_sequence_length("\xe2\x82", 0) == 0);     // cut
  CHECK(bisectd::base::utf8_sequence_length("\xed\xa0\x80", 0) == 0); // a surrogate
  CHECK(bisectd::base::utf8_sequence_length("\x80", 0) == 0);
}

TEST_CASE("base::is_mail_address refuses what would break a mail header", "[base][hostile]") {
  using bisectd::base::is_mail_address;
  CHECK(is_mail_address("dev@example.org"));
  CHECK(is_mail_address("Ann Dev <dev@example.org>"));
  CHECK_FALSE(is_mail_address(""));
  CHECK_FALSE(is_mail_address("no-at-sign"));
  CHECK_FALSE(is_mail_address("a@example.org\r\nBcc: victim@evil.org"));
  CHECK_FALSE(is_mail_address("a@example.org\nX: y"));
  CHECK_FALSE(is_mail_address(std::string("a@b\0c", 5)));
  CHECK_FALSE(is_mail_address("a@b\x7f"));
  CHECK_FALSE(is_mail_address(std::string(400, 'a') + "@example.org"));
}

TEST_CASE("base::strip_url_userinfo removes credentials from every URL in a text", "[base][hostile]") {
  using bisectd::base::strip_url_userinfo;
  CHECK(strip_url_userinfo("https://robot:s3cret@git.example.org/linux.git") == "https://git.example.org/linux.git");
  CHECK(strip_url_userinfo("https://ghp_token@github.com/x/y") == "https://github.com/x/y");
  CHECK(strip_url_userinfo("https://u:p@host") == "https://host");
  CHECK(strip_url_userinfo("https://u:p@ss@host:8443/r?x=a@b") == "https://host:8443/r?x=a@b");
  CHECK(strip_url_userinfo("smtps://mailer:pw@smtp.example.org:465") == "smtps://smtp.example.org:465");
  CHECK(strip_url_userinfo("bisectctl tree add demo 'https://u:p@h/r.git' --branch master") ==
        "bisectctl tree add demo 'https://h/r.git' --branch master");
  CHECK(strip_url_userinfo("a https://u:p@h/x and http://v:q@i/y") == "a https://h/x and http://i/y");
  // Nothing to strip: no userinfo, an '@' only after the authority, scp-like ssh, a path.
  CHECK(strip_url_userinfo("https://git.example.org/a@b") == "https://git.example.org/a@b");
  CHECK(strip_url_userinfo("git@example.org:linux.git") == "git@example.org:linux.git");
  CHECK(strip_url_userinfo("/srv/git/linux") == "/srv/git/linux");
  CHECK(strip_url_userinfo("") == "");
}
