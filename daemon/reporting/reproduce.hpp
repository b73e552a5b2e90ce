#pragma once
// The reproduce section of a report: the shell lines that fetch, build and run a job's measurement of a commit
// without bisectd (LKP's reports give the commands), and the files those lines read, attached to the mail.

#include "daemon/core/job.hpp"
#include "report/mail.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bisectd::daemon::reporting {

struct Reproduction {
  std::vector<std::string> lines;          // shell lines, every argument base::shell_quote'd; "# ..." comments
  std::vector<report::Attachment> files;   // what the lines read besides the job file (a kernel config, a fragment)
};

// The files a kernel recipe's configuration reads are attached up to this size each (a distribution config is
// about 250 KB); a larger one is named in a comment instead.
inline constexpr std::uintmax_t k_max_attached_config = 1024 * 1024;

// How to measure `job` on `culprit` (and again on `parent`) of the tree cloned from `url` into `checkout_dir`:
// clone, checkout, the build recipe's commands and the run command, with the recipe's and the run's environment.
Reproduction reproduction(const Job& job, const std::string& url, const std::string& checkout_dir,
                          const std::string& culprit, const std::string& parent);

} // namespace bisectd::daemon::reporting
