#include "cli/http_client.hpp"

#include "cli/interrupt.hpp"

#include <curl/curl.h>

#include <cctype>
#include <memory>
#include <mutex>

namespace bisectd::cli {
namespace {

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlHandle = std::unique_ptr<CURL, CurlDeleter>;
using HeaderList = std::unique_ptr<curl_slist, SlistDeleter>;

void global_init_once() {
  static std::once_flag flag;
  std::call_once(flag, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t append_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

// Aborts the transfer when SIGINT arrived (curl then returns CURLE_ABORTED_BY_CALLBACK).
int check_interrupt(void* /*user*/, curl_off_t, curl_off_t, curl_off_t, curl_off_t) { return interrupted() ? 1 : 0; }

const char* method_name(HttpMethod method) {
  switch (method) {
  case HttpMethod::post: return "POST";
  case HttpMethod::del: return "DELETE";
  default: return "GET";
  }
}

Error transfer_error(CURLcode code, const char* detail, const std::string& base_url) {
  std::string message = detail[0] != '\0' ? detail : curl_easy_strerror(code);
  if (code == CURLE_ABORTED_BY_CALLBACK) {
    return Error{ErrorCode::cancelled, "interrupted"};
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return Error{ErrorCode::timeout, "bisectd at " + base_url + " did not answer in time: " + message};
  }
  return Error{ErrorCode::unreachable, "cannot reach bisectd at " + base_url + ": " + message};
}

HeaderList make_headers(bool has_body, const std::optional<std::string>& token) {
  HeaderList headers(curl_slist_append(nullptr, "Accept: application/json"));
  if (has_body) {
    headers.reset(curl_slist_append(headers.release(), "Content-Type: application/json"));
  }
  if (token) {
    headers.reset(curl_slist_append(headers.release(), ("Authorization: Bearer " + *token).c_str()));
  }
  return headers;
}

// Timeouts, interrupt polling, and no proxy: the daemon listens on loopback, an http_proxy in the
// environment must not intercept (or see the token).
void set_transfer_options(CURL* h, const HttpOptions& options) {
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, check_interrupt);
}

} // namespace

HttpClient::HttpClient(std::string base_url, std::optional<std::string> token, HttpOptions options)
    : m_base_url(std::move(base_url)), m_token(std::move(token)), m_options(options) {
  while (!m_base_url.empty() && m_base_url.back() == '/') {
    m_base_url.pop_back();
  }
}

Result<HttpResponse> HttpClient::request(HttpMethod method, std::string_view path,
                                         const std::optional<nlohmann::json>& body) const {
  global_init_once();
  CurlHandle curl(curl_easy_init());
  if (!curl) {
    return make_error(ErrorCode::infra, "curl_easy_init failed");
  }
  std::string url = m_base_url + std::string(path);
  std::string payload = body ? body->dump() : std::string();
  HttpResponse response;
  char detail[CURL_ERROR_SIZE] = {};
  // Reads carry the token too: logs need it, and the daemon keeps connection slots for its holder.
  HeaderList headers = make_headers(body.has_value(), m_token);
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method_name(method));
  if (body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
  set_transfer_options(h, m_options);
  CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK) {
    return std::unexpected(transfer_error(code, detail, m_base_url));
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

Result<nlohmann::json> HttpClient::call_json(HttpMethod method, std::string_view path,
                                             const std::optional<nlohmann::json>& body) const {
  BISECTD_TRY_ASSIGN(HttpResponse response, request(method, path, body));
  std::string what = std::string(method_name(method)) + " " + std::string(path);
  if (response.status < 200 || response.status >= 300) {
    Error error = http_error(response, what);
    if (response.status == 401 && !m_token) {
      error.message += " (no token given: use --token-file or BISECTD_TOKEN_FILE)";
    }
    return std::unexpected(error);
  }
  auto parsed = nlohmann::json::parse(response.body, nullptr, false);
  if (parsed.is_discarded()) {
    return make_error(ErrorCode::generic, what + ": the daemon's reply is not JSON");
  }
  return parsed;
}

Result<nlohmann::json> HttpClient::get_json(std::string_view path) const {
  return call_json(HttpMethod::get, path, std::nullopt);
}

Result<nlohmann::json> HttpClient::get_all_pages(std::string_view path, const std::string& array_key,
                                                 int max_pages) const {
  BISECTD_TRY_ASSIGN(nlohmann::json reply, get_json(path));
  char separator = path.find('?') == std::string_view::npos ? '?' : '&';
  for (int page = 1; page < max_pages && reply.contains("next") && reply["next"].is_string(); ++page) {
    auto next_path = std::string(path) + separator + "after=" + url_encode(reply["next"].get<std::string>());
    BISECTD_TRY_ASSIGN(nlohmann::json more, get_json(next_path));
    if (!more.contains(array_key) || !more[array_key].is_array() || !reply[array_key].is_array()) {
      return make_error(ErrorCode::generic, "GET " + next_path + ": the reply has no '" + array_key + "' list");
    }
    for (auto& item : more[array_key]) {
      reply[array_key].push_back(std::move(item));
    }
    reply["next"] = more.contains("next") ? more["next"] : nlohmann::json(nullptr);
  }
  return reply;
}

Result<nlohmann::json> HttpClient::post_json(std::string_view path, const nlohmann::json& body) const {
  return call_json(HttpMethod::post, path, body);
}

Result<nlohmann::json> HttpClient::delete_json(std::string_view path) const {
  return call_json(HttpMethod::del, path, std::nullopt);
}

std::string url_encode(std::string_view text) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    bool unreserved = std::isalnum(u) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += k_hex[u >> 4];
      out += k_hex[u & 0xf];
    }
  }
  return out;
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [key, value] : params) {
    if (value.empty()) {
      continue;
    }
    out += out.empty() ? '?' : '&';
    out += url_encode(key) + "=" + url_encode(value);
  }
  return out;
}

Error http_error(const HttpResponse& response, std::string_view what) {
  ErrorCode code = response.status == 404   ? ErrorCode::not_found
                   : response.status == 409 ? ErrorCode::conflict
                   : response.status == 408 ? ErrorCode::timeout
                                            : ErrorCode::generic;
  auto parsed = nlohmann::json::parse(response.body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_string()) {
    return Error{code, parsed["error"].get<std::string>()};
  }
  std::string start = response.body.substr(0, 120);
  return Error{code, "HTTP " + std::to_string(response.status) + " from " + std::string(what) +
                       (start.empty() ? "" : ": " + start)};
}

} // namespace bisectd::cli
