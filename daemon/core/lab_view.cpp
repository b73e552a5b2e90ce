#include "daemon/core/lab_view.hpp"

namespace bisectd::daemon {

int LabView::machines_in(const std::string& group) const {
  int n = 0;
  for (const auto& m : machines()) {
    n += m.group == group ? m.slots : 0;
  }
  return n;
}

std::string LabView::first_in(const std::string& group) const {
  for (const auto& m : machines()) {
    if (m.group == group && !m.quarantined) {
      return m.name;
    }
  }
  return {};
}

std::string LabView::describe_group(const std::string& group) const {
  for (const auto& m : machines()) {
    if (m.group == group) {
      return m.description.empty() ? m.name : m.description;
    }
  }
  return group;
}

} // namespace bisectd::daemon
