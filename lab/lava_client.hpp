#pragma once
// Backend `lava`, the HTTP half: LAVA's REST API v0.2 behind a small transport interface (`LavaHttp`), so the
// machine's decisions are unit-tested with a fake transport. Every call sends `Authorization: Token <token>`.
// Transport failures are `unreachable`; a rejected token or definition is `invalid_config` with LAVA's message.

#include "base/error.hpp"
#include "lab/lava_job.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace bisectd::lab {

struct HttpResponse {
  long status = 0;
  std::string body;
};

class LavaHttp {
public:
  virtual ~LavaHttp() = default;
  // `path` below /api/v0.2/ ("jobs/12/"). Error (unreachable): no answer.
  virtual Result<HttpResponse> get(const std::string& path) = 0;
  // POST of a JSON body.
  virtual Result<HttpResponse> post(const std::string& path, const std::string& json_body) = 0;
};

// libcurl, one handle per call; `timeout` per request.
std::unique_ptr<LavaHttp> make_curl_lava_http(std::string url, std::string token,
                                              std::chrono::seconds timeout = std::chrono::seconds(30));

class LavaClient {
public:
  explicit LavaClient(LavaHttp& http) : m_http(http) {}

  // GET system/version/ with the token checked (GET jobs/?limit=1 must not be 401/403).
  Result<std::string> check();
  // POST jobs/ → the job id. Errors: invalid_config with LAVA's validation message (HTTP 400) or for a rejected
  // token; infra for other answers.
  Result<std::int64_t> submit(const std::string& definition);
  Result<LavaJobStatus> job(std::int64_t id);
  // GET jobs/<id>/logs/: the job log as LAVA keeps it (YAML lines). Empty before the job has a log.
  Result<std::string> logs(std::int64_t id);
  // GET jobs/<id>/tests/?limit=500 (JSON).
  Result<std::string> tests(std::int64_t id);
  Status cancel(std::int64_t id);
  // Idle devices of `device_type` with health Good or Unknown (GET devices/?device_type=..).
  Result<int> idle_devices(const std::string& device_type);

private:
  Result<HttpResponse> checked_get(const std::string& path, const std::string& what);

  LavaHttp& m_http;
};

} // namespace bisectd::lab
