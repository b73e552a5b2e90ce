#include "report/report.hpp"

#include "base/hash.hpp"
#include "base/strings.hpp"
#include "report/mime.hpp"
#include "report/report_body.hpp"
#include "report/text.hpp"

#include <chrono>

namespace bisectd::report {

namespace {

std::string domain_of(std::string_view from) {
  auto address = parse_address(from);
  if (!address) {
    return "localhost";
  }
  return address->addr.substr(address->addr.rfind('@') + 1);
}

std::string subject_suffix(const ReportInput& input) {
  std::string suffix;
  if (input.confident && !input.credible_set.empty()) {
    suffix += strprintf(" (one of %zu commits)", input.credible_set.size());
  }
  if (input.layout_artefact) {
    suffix += " (likely code-layout artefact)";
  }
  return suffix;
}

} // namespace

std::string report_subject(const ReportInput& input) {
  std::string change = detail::primary_change_text(input);
  std::string what =
    metric_label(input.metric) + (change.empty() ? "" : " " + change) + " " + detail::change_kind(input);
  std::string prefix = "[" + single_line(input.tree) + ":" + single_line(input.branch) + "] ";
  if (!input.confident) {
    std::size_t candidates = input.credible_set.size();
    return prefix + "no culprit with high confidence: " + what +
           (candidates > 0 ? strprintf(" (%zu candidates)", candidates) : "");
  }
  if (input.earlier && input.confident) {
    std::string subject = single_line(input.earlier->subject);
    bool has_re = subject.size() >= 3 && base::to_lower(subject.substr(0, 3)) == "re:";
    return has_re ? subject : "Re: " + subject;
  }
  if (!normalize_message_id(input.in_reply_to).empty()) {
    std::string subject = single_line(input.culprit.subject);
    bool has_re = subject.size() >= 3 && base::to_lower(subject.substr(0, 3)) == "re:";
    return (has_re ? subject : "Re: " + subject) + subject_suffix(input);
  }
  return prefix + base::short_sha(single_line(input.culprit.sha)) + ": " + what + subject_suffix(input);
}

std::string job_file_name(const ReportInput& input) {
  std::string name = base::file_name_safe(single_line(input.job_name));
  return (name.empty() || name.front() == '.' ? "job" : name) + ".yaml";
}

std::string message_id_for(std::int64_t bisection_id, std::int64_t created_at, std::string_view domain) {
  using namespace std::chrono;
  sys_seconds time{seconds{created_at}};
  auto day = floor<days>(time);
  year_month_day ymd{day};
  hh_mm_ss hms{time - day};
  std::string key =
    strprintf("bisection:%lld:%lld", static_cast<long long>(bisection_id), static_cast<long long>(created_at));
  std::string host(domain);
  if (!is_valid_addr_spec("x@" + host)) {
    host = "localhost";
  }
  return strprintf("<%04d%02u%02u%02lld%02lld.%lld.%s-bisectd@%s>", static_cast<int>(ymd.year()),
                   static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                   static_cast<long long>(hms.hours().count()), static_cast<long long>(hms.minutes().count()),
                   static_cast<long long>(bisection_id), base::hash_hex(key).substr(0, 8).c_str(), host.c_str());
}

Mail render_report(const ReportInput& input, const Recipients& recipients) {
  Mail mail;
  mail.from = input.from;
  mail.to = recipients.to;
  mail.cc = recipients.cc;
  mail.subject = report_subject(input);
  mail.message_id = message_id_for(input.bisection_id, input.created_at, domain_of(input.from));
  if (input.confident) {
    // A repeat answers the first report of its culprit; else a patch's own mail (its Link: trailer).
    mail.in_reply_to = normalize_message_id(input.earlier ? input.earlier->message_id : input.in_reply_to);
    mail.references = mail.in_reply_to;
  }
  mail.date = rfc5322_date(input.created_at);
  mail.body = detail::report_body(input, mail.message_id);
  if (!input.job_yaml.empty()) { // a fetch URL in it may carry a token
    mail.attachments.push_back({job_file_name(input), base::strip_url_userinfo(input.job_yaml)});
  }
  mail.attachments.insert(mail.attachments.end(), input.files.begin(), input.files.end());
  return mail;
}

} // namespace bisectd::report
