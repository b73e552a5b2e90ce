#include "daemon/log_format.hpp"

#include "base/strings.hpp"

#include <spdlog/pattern_formatter.h>

namespace bisectd::daemon {

namespace {

// %* : the message with every control character escaped, line breaks included.
class EscapedMessage final : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto text = base::escape_control(std::string_view(msg.payload.data(), msg.payload.size()), base::LineBreaks::escape);
    dest.append(text.data(), text.data() + text.size());
  }
  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<EscapedMessage>();
  }
};

} // namespace

std::unique_ptr<spdlog::formatter> log_formatter(bool verbose) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<EscapedMessage>('*').set_pattern(verbose ? "%Y-%m-%d %H:%M:%S.%e [%l] [%t] %*"
                                                               : "%Y-%m-%d %H:%M:%S [%l] %*");
  return formatter;
}

} // namespace bisectd::daemon
