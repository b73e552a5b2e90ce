// validate_url: a tree URL is handed to libgit2 or, for a network remote, to a `git` child as one argv element (and for
// ssh to an ssh client), never to a shell, but it is also shown in reports and logs; we accept only the plain forms git
// documents and reject anything that looks like an injection attempt (option-like, remote-helper syntax, shell
// metacharacters).
#include "vcs/repository.hpp"
#include "vcs/transfer.hpp"

#include <algorithm>
#include <array>

namespace bisectd::vcs {

namespace {

std::unexpected<Error> reject(std::string_view url, std::string_view why) {
  return make_error(ErrorCode::invalid_input, "url '" + escape_control(url) + "': " + std::string(why));
}

// The first character that a shell or a URL parser would treat specially, or '\0'.
char first_unsafe(std::string_view url) {
  static constexpr std::string_view k_meta = ";&|`$<>(){}[]*?!\\\"'#^";
  for (char c : url) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == ' ' || k_meta.find(c) != std::string_view::npos) {
      return c;
    }
  }
  return '\0';
}

bool is_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

// scp-like "[user@]host:path": host made of [A-Za-z0-9._-], not starting with '-', path not empty.
Status check_scp_like(std::string_view url, std::size_t colon) {
  std::string_view user_host = url.substr(0, colon);
  std::string_view host = user_host.substr(user_host.find('@') == std::string_view::npos ? 0 : user_host.find('@') + 1);
  if (host.empty() || host.front() == '-' || !std::all_of(host.begin(), host.end(), is_host_char)) {
    return reject(url, "bad host in scp-like URL");
  }
  if (colon + 1 >= url.size()) {
    return reject(url, "missing path after ':'");
  }
  return {};
}

Status check_scheme_url(std::string_view url, std::size_t scheme_end) {
  std::string_view scheme = url.substr(0, scheme_end);
  static constexpr std::array<std::string_view, 6> k_schemes = {"file", "http", "https", "ssh", "git", "ssh+git"};
  if (std::find(k_schemes.begin(), k_schemes.end(), scheme) == k_schemes.end()) {
    return reject(url, "unsupported scheme '" + std::string(scheme) + "'");
  }
  std::string_view rest = url.substr(scheme_end + 3);
  if (scheme != "file" && (rest.empty() || !is_host_char(rest.front()) || rest.front() == '-')) {
    return reject(url, "missing or bad host");
  }
  if (scheme == "file" && rest.empty()) {
    return reject(url, "missing path");
  }
  return {};
}

} // namespace

Status validate_url(std::string_view url) {
  if (url.empty()) {
    return reject(url, "empty");
  }
  if (url.size() > 4096) {
    return reject(url.substr(0, 64), "longer than 4096 characters");
  }
  if (char bad = first_unsafe(url); bad != '\0') {
    return reject(url, bad == ' '
                         ? std::string("contains a space")
                         : "contains the forbidden character '" + escape_control(std::string_view(&bad, 1)) + "'");
  }
  if (url.front() == '-') {
    return reject(url, "starts with '-'");
  }
  if (url.find("::") != std::string_view::npos) {
    return reject(url, "remote-helper syntax 'transport::address' is not allowed");
  }
  if (auto scheme_end = url.find("://"); scheme_end != std::string_view::npos) {
    return check_scheme_url(url, scheme_end);
  }
  // git's rule: a ':' before the first '/' makes it scp-like; anything else is a local path.
  auto colon = url.find(':');
  if (colon != std::string_view::npos && colon < url.find('/')) {
    return check_scp_like(url, colon);
  }
  return {};
}

bool is_network_url(std::string_view url) {
  if (auto scheme_end = url.find("://"); scheme_end != std::string_view::npos) {
    return url.substr(0, scheme_end) != "file";
  }
  auto colon = url.find(':'); // scp-like [user@]host:path, as validate_url reads it
  return colon != std::string_view::npos && colon < url.find('/');
}

} // namespace bisectd::vcs
