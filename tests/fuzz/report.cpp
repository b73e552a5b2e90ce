// Report rendering (report/report, report/mail, report/mime) with fuzzed strings where the daemon puts data it
// does not control: the commit subject and people, trailers, metric names, tree and job names, params, the job
// text. The rendered message must keep its header block intact whatever they contain.
#include "fuzz_support.hpp"
#include "report/report.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <set>
#include <string_view>

namespace {

using bisectd::fuzz::check;
namespace report = bisectd::report;

constexpr std::int64_t k_year_9999 = 253402300799; // 9999-12-31T23:59:59Z

std::string str(FuzzedDataProvider& in, std::size_t max = 120) { return in.ConsumeRandomLengthString(max); }

report::Commit commit(FuzzedDataProvider& in) {
  report::Commit c;
  c.sha = str(in, 48);
  c.subject = str(in, 200);
  c.body = str(in, 300);
  c.author = {str(in), str(in)};
  c.committer = {str(in), str(in)};
  for (auto n = in.ConsumeIntegralInRange(0, 3); n > 0; --n) {
    c.trailers.emplace_back(str(in, 30), str(in));
  }
  c.commit_time = in.ConsumeIntegral<std::int64_t>();
  return c;
}

std::vector<double> samples(FuzzedDataProvider& in) {
  std::vector<double> out(in.ConsumeIntegralInRange<std::size_t>(0, 5));
  for (auto& v : out) {
    v = in.ConsumeFloatingPoint<double>();
  }
  return out;
}

// The header block: CRLF line ends only, no line longer than RFC 5322 allows, each line a known header or a
// folded continuation, each header at most once. Nothing the input says can add a header line.
void check_headers(std::string_view message) {
  auto end = message.find("\r\n\r\n");
  check(end != std::string_view::npos, "no blank line after the headers");
  auto headers = message.substr(0, end + 2);
  static const std::set<std::string_view> k_known{"From",        "To",           "Cc",          "Subject",
                                                  "Date",        "Message-ID",   "In-Reply-To", "References",
                                                  "MIME-Version", "Content-Type", "Content-Transfer-Encoding"};
  std::set<std::string_view> seen;
  std::size_t pos = 0;
  while (pos < headers.size()) {
    auto eol = headers.find("\r\n", pos);
    check(eol != std::string_view::npos, "a header line without CRLF");
    auto line = headers.substr(pos, eol - pos);
    check(line.find_first_of("\r\n") == std::string_view::npos, "a bare CR or LF in a header line");
    check(line.size() <= 998, "a header line longer than 998 characters");
    check(!line.empty(), "an empty line inside the headers");
    if (line.front() != ' ' && line.front() != '\t') {
      auto colon = line.find(':');
      check(colon != std::string_view::npos, "a header line without a name");
      auto name = line.substr(0, colon);
      check(k_known.contains(name), "a header the renderer does not write");
      check(seen.insert(name).second, "a header twice");
    }
    pos = eol + 2;
  }
  check(seen.contains("Subject") && seen.contains("From") && seen.contains("Message-ID"), "a header missing");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  report::ReportInput input;
  input.bisection_id = in.ConsumeIntegral<std::int64_t>();
  // Creation times come from the daemon's own clock, not from the input: any moment up to the year 9999.
  input.created_at = in.ConsumeIntegralInRange<std::int64_t>(0, k_year_9999);
  input.tree = str(in, 40);
  input.branch = str(in, 40);
  input.url = str(in);
  input.job_name = str(in, 40);
  input.testcase = str(in, 40);
  input.machine_description = str(in);
  for (auto n = in.ConsumeIntegralInRange(0, 3); n > 0; --n) {
    input.params.emplace_back(str(in, 30), str(in, 30));
  }
  input.compiler = str(in, 30);
  input.kconfig = str(in, 30);
  input.direction = in.ConsumeBool() ? 1 : -1;
  input.culprit = commit(in);
  input.parent = commit(in);
  if (in.ConsumeBool()) {
    input.same_binary_as = commit(in);
  }
  for (auto n = in.ConsumeIntegralInRange(0, 2); n > 0; --n) {
    input.credible_set.push_back(commit(in));
  }
  input.confident = in.ConsumeBool();
  for (auto n = in.ConsumeIntegralInRange(0, 4); n > 0; --n) {
    input.metrics.push_back({str(in, 60), samples(in), samples(in)});
  }
  input.metric = in.ConsumeBool() && !input.metrics.empty() ? input.metrics.front().name : str(in, 60);
  for (auto n = in.ConsumeIntegralInRange(0, 2); n > 0; --n) {
    input.watch.push_back(str(in, 60));
  }
  input.p_culprit = in.ConsumeFloatingPoint<double>();
  input.runs = in.ConsumeIntegral<int>();
  input.builds = in.ConsumeIntegral<int>();
  input.runs_reused = in.ConsumeIntegral<int>();
  if (in.ConsumeBool()) {
    input.boots = in.ConsumeIntegral<int>();
  }
  for (auto n = in.ConsumeIntegralInRange(0, 6); n > 0; --n) {
    input.chart.push_back({in.ConsumeIntegralInRange<std::size_t>(0, 1000), str(in, 40),
                           in.ConsumeFloatingPoint<double>(), in.ConsumeBool()});
  }
  for (auto n = in.ConsumeIntegralInRange(0, 2); n > 0; --n) {
    input.verification.push_back(str(in));
  }
  input.layout_artefact = in.ConsumeBool();
  input.reproduce = {str(in)};
  input.from = str(in, 80);
  input.reported_by = str(in, 80);
  input.archive_url = str(in, 80);
  if (in.ConsumeBool()) {
    input.earlier = report::EarlierReport{in.ConsumeIntegral<std::int64_t>(), str(in, 80), str(in),
                                          in.ConsumeIntegralInRange<std::int64_t>(0, k_year_9999)};
  }
  input.in_reply_to = str(in, 80);
  input.recipients_note = str(in);
  report::Recipients who{{str(in, 80), str(in, 80)}, {str(in, 80)}};
  input.job_yaml = in.ConsumeRemainingBytesAsString();

  auto mail = report::render_report(input, who);
  check(mail.subject.find_first_of("\r\n") == std::string::npos, "a subject with a line break");
  check_headers(mail.render());
  return 0;
}
