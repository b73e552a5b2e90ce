// Trailers and recipients: a raw commit message split as git does (vcs/commit_message), its trailers and the
// tree's lists turned into To/Cc (report/recipients), then capped as the reporter does (daemon/reporting).
#include "daemon/reporting/reporter.hpp"
#include "fuzz_support.hpp"
#include "report/mime.hpp"
#include "report/recipients.hpp"
#include "vcs/commit_message.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace {

using bisectd::fuzz::check;

std::vector<std::string> strings(FuzzedDataProvider& in) {
  std::vector<std::string> out(in.ConsumeIntegralInRange<std::size_t>(0, 4));
  for (auto& s : out) {
    s = in.ConsumeRandomLengthString(200);
  }
  return out;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Every recipient is one line with a valid address, and no address is there twice.
void check_recipients(const bisectd::report::Recipients& who) {
  std::set<std::string> seen;
  for (const auto* list : {&who.to, &who.cc}) {
    for (const auto& entry : *list) {
      check(entry.find_first_of("\r\n") == std::string::npos, "a recipient with a line break");
      auto address = bisectd::report::parse_address(entry);
      check(address.has_value(), "a recipient that does not parse back");
      check(bisectd::report::is_valid_addr_spec(address->addr), "a recipient with an invalid address");
      check(seen.insert(lower(address->addr)).second, "a recipient twice");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  bisectd::report::Commit commit;
  commit.author = {in.ConsumeRandomLengthString(100), in.ConsumeRandomLengthString(100)};
  commit.committer = {in.ConsumeRandomLengthString(100), in.ConsumeRandomLengthString(100)};
  auto notify = strings(in);
  auto mail_cc = strings(in);
  auto maintainers = strings(in);
  bool private_tree = in.ConsumeBool();
  auto max = in.ConsumeIntegralInRange<std::size_t>(1, 50);
  auto message = bisectd::vcs::parse_message(in.ConsumeRemainingBytesAsString());
  commit.subject = message.subject;
  commit.body = message.body;
  for (const auto& trailer : message.trailers) {
    check(trailer.key.find('\n') == std::string::npos, "a trailer key with a line break");
    commit.trailers.emplace_back(trailer.key, trailer.value);
  }
  auto who = bisectd::report::compute_recipients(commit, notify, mail_cc, maintainers, private_tree);
  check_recipients(who);
  auto [capped, note] = bisectd::daemon::reporting::cap_recipients(who, notify, max);
  check_recipients(capped);
  check(note.empty() == (who.to.size() + who.cc.size() <= max), "a cap note without a cap, or a cap without one");
  check(!note.empty() || capped.to == who.to, "recipients changed under the cap");
  return 0;
}
