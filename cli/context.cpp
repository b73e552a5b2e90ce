#include "cli/context.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace bisectd::cli {

std::string resolve_server(const std::string& option, const char* env_value) {
  if (!option.empty()) {
    return option;
  }
  if (env_value != nullptr && env_value[0] != '\0') {
    return env_value;
  }
  return k_default_server;
}

std::string resolve_token_file(const std::string& option, const char* env_value) {
  if (!option.empty()) {
    return option;
  }
  return env_value != nullptr ? std::string(env_value) : std::string();
}

Result<std::string> read_token(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(ErrorCode::io, "token file " + path + ": is a directory");
  }
  auto content = base::read_file(path);
  if (!content) {
    return make_error(content.error().code, "token file " + content.error().message); // names the path
  }
  std::string token(base::trim(*content));
  if (token.empty()) {
    return make_error(ErrorCode::io, "token file " + path + ": is empty");
  }
  return token;
}

std::string Context::server() const { return resolve_server(m_options.server, std::getenv("BISECTD_URL")); }

HttpClient Context::reader(std::chrono::milliseconds timeout) const {
  std::string path = resolve_token_file(m_options.token_file, std::getenv("BISECTD_TOKEN_FILE"));
  std::optional<std::string> token;
  if (!path.empty()) {
    token = read_token(path).value_or(""); // unreadable: most reads need no token; logs then answer 401
    if (token->empty()) {
      token.reset();
    }
  }
  return HttpClient(server(), std::move(token), HttpOptions{timeout});
}

Result<HttpClient> Context::writer(std::chrono::milliseconds timeout) const {
  std::string path = resolve_token_file(m_options.token_file, std::getenv("BISECTD_TOKEN_FILE"));
  std::optional<std::string> token;
  if (!path.empty()) {
    BISECTD_TRY_ASSIGN(token, read_token(path));
  }
  return HttpClient(server(), std::move(token), HttpOptions{timeout});
}

namespace {

// nlohmann escapes C0 controls but writes DEL and the C1 controls (U+0080..U+009F; U+009B is CSI to some terminals)
// as they are: written as \u escapes here, the same JSON value with nothing a terminal acts on. They occur only
// inside strings (the rest of the JSON is ASCII), and the dump is valid UTF-8, so C1 is always the pair C2 80..9F.
std::string terminal_safe_json(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    auto c = static_cast<unsigned char>(json[i]);
    auto next = i + 1 < json.size() ? static_cast<unsigned char>(json[i + 1]) : 0U;
    if (c == 0x7f || (c == 0xc2 && next >= 0x80 && next < 0xa0)) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c == 0x7f ? c : next);
      out += escape;
      i += c == 0x7f ? 0 : 1;
      continue;
    }
    out += static_cast<char>(c);
  }
  return out;
}

} // namespace

void Context::print_json(const nlohmann::json& value) {
  // `replace`: a commit subject with invalid UTF-8 must not abort the output.
  m_io.out << terminal_safe_json(value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)) << '\n';
}

} // namespace bisectd::cli
