// Job files (daemon/config/job_file): any text is a Job or a "file:line: key: what" error, never an exception.
#include "daemon/config/job_file.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A directory that does not exist: a job naming relative files gets its "no such file" error, reads nothing.
  auto job = bisectd::daemon::config::parse_job(bisectd::fuzz::text(data, size), "/nonexistent/fuzz/job.yaml",
                                                "/nonexistent/fuzz/configs");
  if (!job) {
    bisectd::fuzz::check(!job.error().message.empty(), "job error without a message");
  }
  return 0;
}
