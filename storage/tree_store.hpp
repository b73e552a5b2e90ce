#pragma once
// Trees, their jobs and their branch heads.

#include "base/error.hpp"
#include "storage/rows.hpp"

#include <optional>
#include <string>
#include <vector>

namespace bisectd::storage {

class TreeStore {
public:
  virtual ~TreeStore() = default;
  // Stores the tree and its job together or not at all. Error: conflict when the tree exists. A removed tree of
  // the same name leaves nothing behind: its branch heads and detections go (the new tree starts clean).
  virtual Status add_tree(const TreeRow& tree, const JobRow& job) = 0;
  virtual Result<std::vector<TreeRow>> trees() = 0;
  virtual Result<std::optional<TreeRow>> tree(const std::string& name) = 0;
  // Marks the tree removed; its queued requests, confirmations and running bisections fail. Error: not_found.
  virtual Status remove_tree(const std::string& name) = 0;
  // Replaces a tree's settings (notify, mail_cc, private, poll interval, job name) and, when given, stores its job
  // in the same transaction. Error: not_found.
  virtual Status update_tree(const TreeRow& tree, const std::optional<JobRow>& job) = 0;
  // Records why the tree's last fetch failed, keeping the time of the first failure in a row; "" clears it.
  // Error: not_found.
  virtual Status set_watch_error(const std::string& name, const std::string& error) = 0;
  // Records when the watcher last fetched the tree (unix seconds).
  virtual Status set_polled(const std::string& name, std::int64_t at) = 0;
  virtual Status put_job(const JobRow& job) = 0;
  virtual Result<std::optional<JobRow>> job(const std::string& name) = 0;
  virtual Result<std::vector<JobRow>> jobs() = 0;

  // Branch heads: `seen` is the newest head fetched, `tested` the newest head measured (the baseline).
  virtual Result<std::optional<HeadRow>> head(const std::string& tree, const std::string& branch) = 0;
  virtual Status set_head_seen(const std::string& tree, const std::string& branch, const std::string& sha) = 0;
  virtual Status set_head_tested(const std::string& tree, const std::string& branch, const std::string& sha) = 0;
  // Why the branch is not watched now ("" clears it), keeping the time of the first error in a row.
  virtual Status set_head_error(const std::string& tree, const std::string& branch, const std::string& error) = 0;
};

} // namespace bisectd::storage
