#pragma once
// RFC 5322 / RFC 2047 building blocks: addresses, encoded words, header folding, quoted-printable.
// Everything that reaches a header goes through here, so no input can add a header line.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::report {

struct Address {
  std::string name; // display name, plain UTF-8 (may be empty)
  std::string addr; // addr-spec "local@domain", ASCII only
};

// True for a plain ASCII addr-spec (atext/dot local part, letters/digits/-/. domain), at most 254 chars.
bool is_valid_addr_spec(std::string_view addr);

// Parses "Name <addr>", "\"Doe, Jane\" <addr>", "addr", "addr # comment" (trailer style).
// nullopt when no valid addr-spec is present; the name is cleaned to one line of valid UTF-8.
std::optional<Address> parse_address(std::string_view text);

// "Name <addr>" or "addr" (for human display and Recipients lists; not header-encoded).
std::string format_address(const Address& address);

// The display name as header tokens: atoms, one quoted-string, or RFC 2047 encoded words.
std::vector<std::string> display_name_tokens(std::string_view name);

// RFC 2047 "B" encoded words of UTF-8 `text`, each at most 75 characters, split at character boundaries.
std::vector<std::string> encoded_words(std::string_view text);

// Tokens of an unstructured header value (Subject): plain words when safe ASCII, else encoded words.
std::vector<std::string> unstructured_tokens(std::string_view value);

// Tokens of an address-list header value (To, Cc, From); invalid addresses are dropped.
std::vector<std::string> address_list_tokens(const std::vector<std::string>& addresses);

// "Name: tok tok ...\r\n" folded before a token whenever a line would pass 78 characters.
std::string fold_header(std::string_view name, const std::vector<std::string>& tokens);

// Quoted-printable body (RFC 2045) of CRLF text; lines at most 76 characters.
std::string quoted_printable(std::string_view text);

// "Sun, 29 Nov 2026 22:06:37 +0000" for a Unix time (pure arithmetic, UTC).
std::string rfc5322_date(std::int64_t unix_seconds);

// "<id@host>" from "<id@host>", "id@host" or a lore-style URL ".../r/id@host/"; "" when not a valid msg-id.
std::string normalize_message_id(std::string_view text);

} // namespace bisectd::report
