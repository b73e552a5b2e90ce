// LAVA's side of the API: the notify callback that wakes the visit following a job, and the builds published for
// LAVA's dispatchers (settings.artifact_url http) under an unguessable per-visit directory, read-only.

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "daemon/api/api.hpp"

#include <algorithm>
#include <cctype>

namespace bisectd::daemon::api {

namespace {

constexpr std::string_view k_notify_prefix = "/lava/notify/";

bool is_secret(const std::string& text) {
  return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

} // namespace

bool Api::lava_callback_authorized(const std::string& target, const std::string& authorization) const {
  // LAVA sends the token's value as the whole header (no scheme).
  return target.rfind(k_notify_prefix, 0) == 0 && base::same_secret(m_context.lava.callback_secret, authorization);
}

HttpResponse post_lava_notify(ApiContext& c, const Call& call) {
  if (c.lava.callback_secret.empty() || !c.lava.notify) {
    return error_response(404, "no LAVA callback is configured");
  }
  c.lava.notify(std::stoll(call.params.at("id")));
  return json_response(200, {{"ok", true}});
}

HttpResponse get_lava_artifact(ApiContext& c, const Call& call) {
  const auto& secret = call.params.at("secret");
  const auto& file = call.params.at("file");
  if (c.lava.publish_dir.empty() || !is_secret(secret) || (file != "bzImage" && file != "initramfs.cpio.gz")) {
    return error_response(404, "no such artifact");
  }
  auto content = base::read_file(c.lava.publish_dir / secret / file);
  if (!content) {
    return error_response(404, "no such artifact");
  }
  return HttpResponse{200, std::move(*content)};
}

} // namespace bisectd::daemon::api
