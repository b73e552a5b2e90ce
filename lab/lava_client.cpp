// LAVA REST v0.2 client over libcurl (see lava_client.hpp).

#include "lab/lava_client.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <mutex>

namespace bisectd::lab {

namespace {

using json = nlohmann::json;

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

struct CurlHandle {
  CURL* h = curl_easy_init();
  curl_slist* headers = nullptr;
  ~CurlHandle() {
    curl_slist_free_all(headers);
    if (h != nullptr) {
      curl_easy_cleanup(h);
    }
  }
};

class CurlLavaHttp final : public LavaHttp {
public:
  CurlLavaHttp(std::string url, std::string token, std::chrono::seconds timeout)
      : m_url(std::move(url)), m_token(std::move(token)), m_timeout(timeout) {
    static std::once_flag k_init;
    std::call_once(k_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  Result<HttpResponse> get(const std::string& path) override { return request(path, nullptr); }
  Result<HttpResponse> post(const std::string& path, const std::string& body) override { return request(path, &body); }

private:
  Result<HttpResponse> request(const std::string& path, const std::string* body) {
    CurlHandle c;
    if (c.h == nullptr) {
      return make_error(ErrorCode::infra, "curl_easy_init failed");
    }
    auto url = m_url + "/api/v0.2/" + path;
    std::string auth = "Authorization: Token " + m_token;
    c.headers = curl_slist_append(c.headers, auth.c_str());
    c.headers = curl_slist_append(c.headers, "Accept: application/json");
    if (body != nullptr) {
      c.headers = curl_slist_append(c.headers, "Content-Type: application/json");
      curl_easy_setopt(c.h, CURLOPT_POST, 1L);
      curl_easy_setopt(c.h, CURLOPT_POSTFIELDS, body->c_str());
      curl_easy_setopt(c.h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
    }
    HttpResponse response;
    char detail[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(c.h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c.h, CURLOPT_HTTPHEADER, c.headers);
    curl_easy_setopt(c.h, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(c.h, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(c.h, CURLOPT_ERRORBUFFER, detail);
    curl_easy_setopt(c.h, CURLOPT_TIMEOUT, static_cast<long>(m_timeout.count()));
    curl_easy_setopt(c.h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c.h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c.h, CURLOPT_NOPROXY, "*");
    auto code = curl_easy_perform(c.h);
    if (code != CURLE_OK) {
      return make_error(ErrorCode::unreachable,
                        m_url + ": " + (detail[0] != '\0' ? std::string(detail) : curl_easy_strerror(code)));
    }
    curl_easy_getinfo(c.h, CURLINFO_RESPONSE_CODE, &response.status);
    return response;
  }

  std::string m_url;
  std::string m_token;
  std::chrono::seconds m_timeout;
};

// LAVA's error answer as one line: {"detail": ...} or {"message": ...} or the body's start.
std::string answer_text(const HttpResponse& response) {
  auto doc = json::parse(response.body, nullptr, false);
  std::string text;
  if (doc.is_object()) {
    for (const char* key : {"detail", "message", "error"}) {
      if (doc.contains(key)) {
        text = doc[key].is_string() ? doc[key].get<std::string>() : doc[key].dump();
        break;
      }
    }
  }
  if (text.empty()) {
    text = response.body.substr(0, 300);
  }
  for (char& c : text) {
    c = c == '\n' || c == '\r' ? ' ' : c;
  }
  return "HTTP " + std::to_string(response.status) + ": " + text;
}

bool token_rejected(const HttpResponse& response) { return response.status == 401 || response.status == 403; }

} // namespace

std::unique_ptr<LavaHttp> make_curl_lava_http(std::string url, std::string token, std::chrono::seconds timeout) {
  return std::make_unique<CurlLavaHttp>(std::move(url), std::move(token), timeout);
}

Result<HttpResponse> LavaClient::checked_get(const std::string& path, const std::string& what) {
  BISECTD_TRY_ASSIGN(auto response, m_http.get(path));
  if (token_rejected(response)) {
    return make_error(ErrorCode::invalid_config, what + ": the token was rejected (" + answer_text(response) + ")");
  }
  if (response.status == 404) {
    return make_error(ErrorCode::not_found, what + ": " + answer_text(response));
  }
  if (response.status != 200) {
    return make_error(ErrorCode::infra, what + ": " + answer_text(response));
  }
  return response;
}

Result<std::string> LavaClient::check() {
  BISECTD_TRY_ASSIGN(auto version, checked_get("system/version/", "version"));
  // The version is public; a job listing needs a valid token when one is sent.
  BISECTD_TRY(checked_get("jobs/?limit=1", "token check"));
  auto doc = json::parse(version.body, nullptr, false);
  if (!doc.is_object() || !doc.contains("version")) {
    return make_error(ErrorCode::invalid_config, "not a LAVA server (system/version/: " + answer_text(version) + ")");
  }
  return doc["version"].is_string() ? doc["version"].get<std::string>() : doc["version"].dump();
}

Result<std::int64_t> LavaClient::submit(const std::string& definition) {
  BISECTD_TRY_ASSIGN(auto response, m_http.post("jobs/", json{{"definition", definition}}.dump()));
  if (token_rejected(response)) {
    return make_error(ErrorCode::invalid_config, "submit: the token was rejected (" + answer_text(response) + ")");
  }
  if (response.status == 400) {
    return make_error(ErrorCode::invalid_config, "LAVA rejected the job definition: " + answer_text(response));
  }
  auto doc = json::parse(response.body, nullptr, false);
  if (response.status != 201 || !doc.is_object() || !doc.contains("job_ids") || !doc["job_ids"].is_array() ||
      doc["job_ids"].empty() || !doc["job_ids"][0].is_number_integer()) {
    return make_error(ErrorCode::infra, "submit: " + answer_text(response));
  }
  return doc["job_ids"][0].get<std::int64_t>();
}

Result<LavaJobStatus> LavaClient::job(std::int64_t id) {
  BISECTD_TRY_ASSIGN(auto response, checked_get("jobs/" + std::to_string(id) + "/", "job " + std::to_string(id)));
  return parse_lava_job(response.body);
}

Result<std::string> LavaClient::logs(std::int64_t id) {
  auto response = checked_get("jobs/" + std::to_string(id) + "/logs/", "job " + std::to_string(id) + " logs");
  if (!response && response.error().code == ErrorCode::not_found) {
    return std::string();
  }
  BISECTD_TRY(response);
  return response->body;
}

Result<std::string> LavaClient::tests(std::int64_t id) {
  BISECTD_TRY_ASSIGN(auto response, checked_get("jobs/" + std::to_string(id) + "/tests/?limit=500",
                                                "job " + std::to_string(id) + " tests"));
  return response.body;
}

Status LavaClient::cancel(std::int64_t id) {
  auto response = checked_get("jobs/" + std::to_string(id) + "/cancel/", "cancel job " + std::to_string(id));
  if (!response) {
    return std::unexpected(response.error());
  }
  return {};
}

Result<int> LavaClient::idle_devices(const std::string& device_type) {
  // device type names are [\w.-]+ in LAVA: nothing to escape
  BISECTD_TRY_ASSIGN(auto response,
                     checked_get("devices/?limit=500&device_type=" + device_type, "devices of " + device_type));
  return count_idle_devices(response.body, device_type);
}

} // namespace bisectd::lab
