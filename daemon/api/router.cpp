#include "daemon/api/router.hpp"

#include "base/strings.hpp"

#include <cctype>

namespace bisectd::daemon::api {

std::string Call::query_or(const std::string& key, const std::string& fallback) const {
  auto found = query.find(key);
  return found == query.end() ? fallback : found->second;
}

std::string url_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::map<std::string, std::string> parse_query(std::string_view query) {
  std::map<std::string, std::string> out;
  for (const auto& part : base::split(query, '&')) {
    auto eq = part.find('=');
    if (!part.empty()) {
      out[part.substr(0, eq)] = eq == std::string::npos ? "" : url_decode(part.substr(eq + 1));
    }
  }
  return out;
}

bool match_path(std::string_view pattern, std::string_view path, std::map<std::string, std::string>& params) {
  auto want = base::split(pattern, '/');
  auto got = base::split(path, '/');
  if (want.size() != got.size()) {
    return false;
  }
  std::map<std::string, std::string> found;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& w = want[i];
    if (w.size() > 2 && w.front() == '{' && w.back() == '}') {
      if (got[i].empty()) {
        return false;
      }
      found[w.substr(1, w.size() - 2)] = url_decode(got[i]); // a ref may hold an encoded "/"
    } else if (w != got[i]) {
      return false;
    }
  }
  params = std::move(found);
  return true;
}

} // namespace bisectd::daemon::api
