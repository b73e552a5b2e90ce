#pragma once
// Who receives a report: the culprit's author and trailer people (To), committer, lists, maintainers (Cc).

#include "report/report.hpp"

#include <string>
#include <utility>
#include <vector>

namespace bisectd::report {

// To = author + Signed-off-by/Acked-by/Reviewed-by/Tested-by/Reported-by people; Cc = committer + `mail_cc` +
// `maintainers` (get_maintainer.pl output lines) + `notify` (the deployment's own watchers). With
// `private_tree` only `notify` (as To) receives it.
// Entries without a valid address are dropped; duplicates (case-insensitive address) keep the first, To before Cc.
Recipients compute_recipients(const Commit& culprit, const std::vector<std::string>& notify,
                              const std::vector<std::string>& mail_cc, const std::vector<std::string>& maintainers,
                              bool private_tree);

// `who` capped at `max` recipients: when there are more (a commit with hundreds of trailers), the notify list
// alone (as To) and a note for the body; the note is empty when nothing was left out.
std::pair<Recipients, std::string> cap_recipients(Recipients who, const std::vector<std::string>& notify,
                                                  std::size_t max);

// True for the trailer keys whose people go to To (case-insensitive): Signed-off-by, Acked-by, ...
bool is_recipient_trailer(std::string_view key);

} // namespace bisectd::report
