#include "report/recipients.hpp"

#include "base/strings.hpp"
#include "report/mime.hpp"

#include <set>

namespace bisectd::report {

namespace {

// Adds `text` to `list` unless its address is already in `seen`.
void add_unique(std::vector<std::string>& list, std::set<std::string>& seen, std::string_view text) {
  auto address = parse_address(text);
  if (!address) {
    return;
  }
  if (seen.insert(base::to_lower(address->addr)).second) {
    list.push_back(format_address(*address));
  }
}

// "Name <email>"; angle brackets in the name would confuse parse_address, so they go.
std::string person_text(const Person& person) {
  std::string name = person.name;
  for (char& c : name) {
    c = (c == '<' || c == '>') ? ' ' : c;
  }
  return name + " <" + person.email + ">";
}

} // namespace

bool is_recipient_trailer(std::string_view key) {
  static const std::set<std::string> k_keys = {"signed-off-by", "acked-by", "reviewed-by", "tested-by", "reported-by"};
  return k_keys.contains(base::to_lower(base::trim(key)));
}

Recipients compute_recipients(const Commit& culprit, const std::vector<std::string>& notify,
                              const std::vector<std::string>& mail_cc, const std::vector<std::string>& maintainers,
                              bool private_tree) {
  Recipients out;
  std::set<std::string> seen;
  if (private_tree) {
    for (const auto& entry : notify) {
      add_unique(out.to, seen, entry);
    }
    return out;
  }
  add_unique(out.to, seen, person_text(culprit.author));
  for (const auto& [key, value] : culprit.trailers) {
    if (is_recipient_trailer(key)) {
      add_unique(out.to, seen, value);
    }
  }
  add_unique(out.cc, seen, person_text(culprit.committer));
  for (const auto* list : {&mail_cc, &maintainers, &notify}) {
    for (const auto& entry : *list) {
      add_unique(out.cc, seen, entry);
    }
  }
  return out;
}

std::pair<Recipients, std::string> cap_recipients(Recipients who, const std::vector<std::string>& notify,
                                                  std::size_t max) {
  auto total = who.to.size() + who.cc.size();
  if (total <= max) {
    return {std::move(who), ""};
  }
  Recipients notify_only;
  notify_only.to = compute_recipients({}, notify, {}, {}, true).to;
  auto note = "This report names " + std::to_string(total) + " recipients, more than this robot mails (" +
              std::to_string(max) + "): it went to the tree's notify list only.";
  return {std::move(notify_only), note};
}

} // namespace bisectd::report
