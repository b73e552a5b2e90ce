#include "fakes/memory_store.hpp"

#include "base/clock.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace bisectd::test {

using namespace storage;

namespace {

template <class Rows, class Pred> auto find_if(Rows& rows, Pred pred) {
  return std::find_if(rows.begin(), rows.end(), pred);
}

bool in(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

MetricSample metric_sample(const SampleRow& s, double value) {
  return MetricSample{s.id, s.commit, s.machine, s.boot_id, value, s.verification, s.request_id};
}

} // namespace

Status MemoryStore::add_tree(const TreeRow& tree, const JobRow& job) {
  std::lock_guard lock(m_mutex);
  if (find_if(m_trees, [&](const auto& t) { return t.name == tree.name; }) != m_trees.end()) {
    return make_error(ErrorCode::conflict, "tree '" + tree.name + "' exists already");
  }
  (void)put_job(job);
  if (m_removed.erase(tree.name) > 0) { // a tree added again under a removed one's name starts clean
    std::erase_if(m_heads, [&](const auto& h) { return h.tree == tree.name; });
    std::erase_if(m_detections, [&](const auto& d) { return d.tree == tree.name; });
  }
  auto row = tree;
  row.id = static_cast<std::int64_t>(m_trees.size()) + 1;
  row.created_at = ++m_now;
  m_trees.push_back(row);
  return {};
}

Result<std::vector<TreeRow>> MemoryStore::trees() {
  std::lock_guard lock(m_mutex);
  auto out = m_trees;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Result<std::optional<TreeRow>> MemoryStore::tree(const std::string& name) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_trees, [&](const auto& t) { return t.name == name; });
  return found == m_trees.end() ? std::optional<TreeRow>() : std::optional<TreeRow>(*found);
}

Status MemoryStore::remove_tree(const std::string& name) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_trees, [&](const auto& t) { return t.name == name; });
  if (found == m_trees.end()) {
    return make_error(ErrorCode::not_found, "tree '" + name + "' not found");
  }
  m_trees.erase(found);
  m_removed.insert(name);
  for (auto& r : m_requests) {
    if (r.tree == name && r.state == RequestState::queued) {
      r.state = RequestState::failed;
      r.error = "tree removed";
    }
  }
  for (auto& d : m_detections) {
    if (d.tree == name && storage::is_deciding(d.state)) {
      d.state = DetectionState::rejected;
      d.note = "tree removed";
    }
  }
  for (auto& b : m_bisections) {
    if (b.tree == name && b.state == BisectionState::running) {
      b.state = BisectionState::failed;
      b.error = "tree removed";
    }
  }
  return {};
}

Status MemoryStore::update_tree(const TreeRow& tree, const std::optional<JobRow>& job) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_trees, [&](const auto& t) { return t.name == tree.name; });
  if (found == m_trees.end()) {
    return make_error(ErrorCode::not_found, "tree '" + tree.name + "' not found");
  }
  if (job) {
    (void)put_job(*job);
  }
  found->job = tree.job;
  found->notify = tree.notify;
  found->mail_cc = tree.mail_cc;
  found->is_private = tree.is_private;
  found->poll_interval_s = tree.poll_interval_s;
  return {};
}

Status MemoryStore::put_job(const JobRow& job) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_jobs, [&](const auto& j) { return j.name == job.name; });
  if (found != m_jobs.end()) {
    *found = job;
  } else {
    m_jobs.push_back(job);
  }
  return {};
}

Result<std::optional<JobRow>> MemoryStore::job(const std::string& name) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_jobs, [&](const auto& j) { return j.name == name; });
  return found == m_jobs.end() ? std::optional<JobRow>() : std::optional<JobRow>(*found);
}

Result<std::vector<JobRow>> MemoryStore::jobs() {
  std::lock_guard lock(m_mutex);
  return m_jobs;
}

Result<std::optional<HeadRow>> MemoryStore::head(const std::string& tree, const std::string& branch) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_heads, [&](const auto& h) { return h.tree == tree && h.branch == branch; });
  return found == m_heads.end() ? std::optional<HeadRow>() : std::optional<HeadRow>(*found);
}

Status MemoryStore::set_watch_error(const std::string& name, const std::string& error) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_trees, [&](const auto& t) { return t.name == name; });
  if (found == m_trees.end()) {
    return make_error(ErrorCode::not_found, "tree '" + name + "' not found");
  }
  found->watch_error_at = error.empty() ? 0 : found->watch_error_at != 0 ? found->watch_error_at : base::unix_now();
  found->watch_error = error;
  return {};
}

Status MemoryStore::set_polled(const std::string& name, std::int64_t at) {
  std::lock_guard lock(m_mutex);
  for (auto& t : m_trees) {
    if (t.name == name) {
      t.polled_at = at;
    }
  }
  return {};
}

Status MemoryStore::set_head_error(const std::string& tree, const std::string& branch, const std::string& error) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_heads, [&](const auto& h) { return h.tree == tree && h.branch == branch; });
  if (found == m_heads.end()) {
    m_heads.push_back({tree, branch, "", "", "", 0});
    found = std::prev(m_heads.end());
  }
  found->error_at = error.empty() ? 0 : found->error_at != 0 ? found->error_at : ++m_now;
  found->error = error;
  return {};
}

Status MemoryStore::set_head_seen(const std::string& tree, const std::string& branch, const std::string& sha) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_heads, [&](const auto& h) { return h.tree == tree && h.branch == branch; });
  if (found == m_heads.end()) {
    m_heads.push_back({tree, branch, sha, "", "", 0});
  } else {
    found->seen = sha;
  }
  return {};
}

Status MemoryStore::set_head_tested(const std::string& tree, const std::string& branch, const std::string& sha) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_heads, [&](const auto& h) { return h.tree == tree && h.branch == branch; });
  if (found == m_heads.end()) {
    m_heads.push_back({tree, branch, "", sha, "", 0});
  } else {
    found->tested = sha;
  }
  return {};
}

RequestRow* MemoryStore::find_request(std::int64_t id) {
  auto found = find_if(m_requests, [&](const auto& r) { return r.id == id; });
  return found == m_requests.end() ? nullptr : &*found;
}

Result<std::int64_t> MemoryStore::enqueue(const RequestRow& request) {
  std::lock_guard lock(m_mutex);
  auto row = request;
  row.id = static_cast<std::int64_t>(m_requests.size()) + 1;
  row.state = RequestState::queued;
  row.created_at = row.updated_at = ++m_now;
  m_requests.push_back(row);
  return row.id;
}

Result<std::optional<RequestRow>> MemoryStore::claim_request(const std::string& group, const std::string& machine) {
  std::lock_guard lock(m_mutex);
  RequestRow* best = nullptr;
  for (auto& r : m_requests) {
    bool claimable =
      r.state == RequestState::queued && r.machine_group == group &&
      (r.pin_machine.empty() || r.pin_machine == machine) &&
      (r.retry_at <= base::unix_now() || (!m_retry_elsewhere[r.id].empty() && m_retry_elsewhere[r.id] != machine)) &&
      (r.lab_handle.empty() || r.machine == machine) && !m_removed.contains(r.tree);
    auto rank = [](const RequestRow& row) { return std::pair{row.lab_handle.empty(), row.attempts}; };
    if (claimable && (best == nullptr || rank(r) < rank(*best))) {
      best = &r;
    }
  }
  if (best == nullptr) {
    return std::optional<RequestRow>();
  }
  best->state = RequestState::building;
  best->machine = machine;
  best->attempts += 1;
  return std::optional<RequestRow>(*best);
}

Status MemoryStore::set_lab_handle(std::int64_t id, const std::string& handle) {
  std::lock_guard lock(m_mutex);
  if (auto* r = find_request(id)) {
    r->lab_handle = handle;
  }
  return {};
}

Status MemoryStore::add_machine_time(std::int64_t id, double seconds) {
  std::lock_guard lock(m_mutex);
  if (auto* r = find_request(id)) {
    r->machine_seconds += seconds;
  }
  return {};
}

Status MemoryStore::requeue_request(std::int64_t id, const std::string& message) {
  std::lock_guard lock(m_mutex);
  if (auto* r = find_request(id)) {
    r->state = RequestState::queued;
    r->attempts = std::max<std::int64_t>(r->attempts - 1, 0);
    r->lab_handle.clear();
    r->error = message;
    r->error_code = "cancelled";
    r->retry_at = 0;
  }
  return {};
}

Status MemoryStore::set_request_state(std::int64_t id, RequestState state) {
  std::lock_guard lock(m_mutex);
  if (auto* r = find_request(id)) {
    r->state = state;
  }
  return {};
}

Status MemoryStore::finish_request(std::int64_t id, const std::vector<SampleRow>& samples) {
  std::lock_guard lock(m_mutex);
  std::set<std::pair<std::string, std::int64_t>> seen;
  for (const auto& s : samples) {
    if (!seen.insert({s.boot_id, s.run}).second) {
      return make_error(ErrorCode::conflict, "duplicate (request, boot, run)");
    }
  }
  for (const auto& s : samples) {
    auto row = s;
    row.id = static_cast<std::int64_t>(m_samples.size()) + 1;
    row.request_id = id;
    row.created_at = ++m_now;
    m_samples.push_back(row);
  }
  if (auto* r = find_request(id)) {
    r->state = RequestState::done;
    r->error.clear();
  }
  return {};
}

Status MemoryStore::fail_request(std::int64_t id, const std::string& code, const std::string& message,
                                 std::optional<std::int64_t> retry_at, const std::string& elsewhere_than) {
  std::lock_guard lock(m_mutex);
  m_retry_elsewhere[id] = elsewhere_than;
  if (auto* r = find_request(id)) {
    r->state = retry_at ? RequestState::queued : RequestState::failed;
    r->retry_at = retry_at.value_or(0);
    r->error = message;
    r->error_code = code;
  }
  return {};
}

Result<std::pair<int, int>> MemoryStore::requeue_interrupted(int max_attempts) {
  std::lock_guard lock(m_mutex);
  std::pair<int, int> counts{0, 0};
  for (auto& r : m_requests) {
    if (r.state == RequestState::building || r.state == RequestState::running) {
      bool spent = r.attempts >= max_attempts;
      r.state = spent ? RequestState::failed : RequestState::queued;
      ++(spent ? counts.second : counts.first);
    }
  }
  return counts;
}

Result<std::int64_t> MemoryStore::failed_requests_for(const std::string& job, const std::string& commit,
                                                      Purpose purpose) {
  std::lock_guard lock(m_mutex);
  return std::count_if(m_requests.begin(), m_requests.end(), [&](const auto& r) {
    return r.job == job && r.commit == commit && r.purpose == purpose && r.state == RequestState::failed;
  });
}

Result<std::optional<RequestRow>> MemoryStore::last_failed_request(const std::string& job, const std::string& commit,
                                                                   Purpose purpose) {
  std::lock_guard lock(m_mutex);
  for (auto r = m_requests.rbegin(); r != m_requests.rend(); ++r) {
    if (r->job == job && r->commit == commit && r->purpose == purpose && r->state == RequestState::failed) {
      return std::optional<RequestRow>(*r);
    }
  }
  return std::optional<RequestRow>();
}

Result<std::vector<RequestRow>> MemoryStore::requests_for_bisection(std::int64_t bisection_id) {
  std::lock_guard lock(m_mutex);
  std::vector<RequestRow> out;
  std::copy_if(m_requests.begin(), m_requests.end(), std::back_inserter(out),
               [&](const auto& r) { return r.bisection_id == bisection_id; });
  return out;
}

Result<std::vector<RequestRow>> MemoryStore::requests_for_detection(std::int64_t detection_id) {
  std::lock_guard lock(m_mutex);
  std::vector<RequestRow> out;
  std::copy_if(m_requests.begin(), m_requests.end(), std::back_inserter(out),
               [&](const auto& r) { return r.detection_id == detection_id; });
  return out;
}

Result<std::vector<RequestRow>> MemoryStore::queued_requests() {
  std::lock_guard lock(m_mutex);
  std::vector<RequestRow> out;
  std::copy_if(m_requests.begin(), m_requests.end(), std::back_inserter(out),
               [&](const auto& r) { return r.state == RequestState::queued; });
  return out;
}

Result<std::vector<RequestRow>> MemoryStore::open_requests() {
  std::lock_guard lock(m_mutex);
  std::vector<RequestRow> out;
  std::copy_if(m_requests.begin(), m_requests.end(), std::back_inserter(out),
               [&](const auto& r) { return r.is_open(); });
  return out;
}

Result<std::optional<RequestRow>> MemoryStore::request(std::int64_t id) {
  std::lock_guard lock(m_mutex);
  auto* r = find_request(id);
  return r == nullptr ? std::optional<RequestRow>() : std::optional<RequestRow>(*r);
}

Result<std::int64_t> MemoryStore::open_requests_for(const std::string& job, const std::string& commit) {
  std::lock_guard lock(m_mutex);
  return std::count_if(m_requests.begin(), m_requests.end(),
                       [&](const auto& r) { return r.job == job && r.commit == commit && r.is_open(); });
}

Result<std::map<std::string, std::int64_t>> MemoryStore::request_counts() {
  std::lock_guard lock(m_mutex);
  std::map<std::string, std::int64_t> out;
  for (const auto& r : m_requests) {
    ++out[std::string(to_string(r.state))];
  }
  return out;
}

Result<std::vector<std::string>> MemoryStore::watched_commits(const std::string& tree, const std::string& job,
                                                              const std::string& group, std::size_t limit) {
  std::lock_guard lock(m_mutex);
  std::vector<std::string> oldest_first;
  for (const auto& r : m_requests) {
    if (r.tree == tree && r.job == job && r.machine_group == group && r.purpose == Purpose::watch &&
        r.state == RequestState::done && !in(oldest_first, r.commit)) {
      oldest_first.push_back(r.commit);
    }
  }
  std::vector<std::string> out(oldest_first.rbegin(), oldest_first.rend());
  out.resize(std::min(out.size(), limit));
  return out;
}

Result<bool> MemoryStore::is_watched(const std::string& tree, const std::string& job, const std::string& group,
                                     const std::string& commit) {
  auto commits = watched_commits(tree, job, group, 1'000'000);
  return commits && in(*commits, commit);
}

Result<std::vector<SampleRow>> MemoryStore::samples(const std::string& job, const std::vector<std::string>& commits,
                                                    const std::string& variant) {
  std::lock_guard lock(m_mutex);
  // One pass over the samples (bench/e2e-cost asks for chains of a thousand commits every tick); in the commits'
  // order, then in insertion order.
  std::unordered_map<std::string, std::vector<const SampleRow*>> by_commit;
  for (const auto& commit : commits) {
    by_commit.try_emplace(commit);
  }
  for (const auto& s : m_samples) {
    auto found = s.job == job && s.variant == variant ? by_commit.find(s.commit) : by_commit.end();
    if (found != by_commit.end()) {
      found->second.push_back(&s);
    }
  }
  std::vector<SampleRow> out;
  for (const auto& commit : commits) {
    for (const auto* s : by_commit[commit]) {
      out.push_back(*s);
    }
  }
  return out;
}

Result<std::vector<MetricSample>> MemoryStore::metric_samples(const std::string& job,
                                                              const std::vector<std::string>& commits,
                                                              const std::string& metric, const std::string& variant) {
  BISECTD_TRY_ASSIGN(auto rows, samples(job, commits, variant));
  std::vector<MetricSample> out;
  for (const auto& s : rows) {
    if (auto value = s.metrics.find(metric); value != s.metrics.end()) {
      out.push_back(metric_sample(s, value->second));
    }
  }
  return out;
}

Result<std::vector<MetricSample>> MemoryStore::request_metric_samples(const std::vector<std::int64_t>& requests,
                                                                      const std::string& metric) {
  std::lock_guard lock(m_mutex);
  std::vector<MetricSample> out;
  for (auto id : requests) {
    for (const auto& s : m_samples) {
      if (auto value = s.metrics.find(metric); s.request_id == id && value != s.metrics.end()) {
        out.push_back(metric_sample(s, value->second));
      }
    }
  }
  return out;
}

Result<std::vector<std::pair<std::string, MetricSample>>>
MemoryStore::series_samples(const std::string& tree, const std::string& job, const std::string& group,
                            const std::vector<std::string>& metrics) {
  std::lock_guard lock(m_mutex);
  std::vector<std::pair<std::string, MetricSample>> out;
  for (const auto& metric : metrics) {
    for (const auto& s : m_samples) {
      auto* r = find_request(s.request_id);
      auto value = s.metrics.find(metric);
      if (r != nullptr && r->tree == tree && r->job == job && r->machine_group == group && s.variant.empty() &&
          value != s.metrics.end()) {
        out.emplace_back(metric, metric_sample(s, value->second));
      }
    }
  }
  return out;
}

Result<std::vector<SampleRow>> MemoryStore::samples_for_commit_prefix(const std::string& prefix,
                                                                      const std::string& tree, std::int64_t after_id,
                                                                      std::size_t limit) {
  std::lock_guard lock(m_mutex);
  std::vector<SampleRow> out;
  for (const auto& s : m_samples) {
    if (out.size() < limit && s.id > after_id && s.commit.starts_with(prefix) && (tree.empty() || s.tree == tree)) {
      out.push_back(s);
    }
  }
  return out;
}

Result<std::vector<SampleRow>> MemoryStore::samples_for_job(const std::string& job) {
  std::lock_guard lock(m_mutex);
  std::vector<SampleRow> out;
  std::copy_if(m_samples.begin(), m_samples.end(), std::back_inserter(out),
               [&](const auto& s) { return s.job == job; });
  return out;
}

namespace {
bool same_key(const storage::FlagKey& a, const storage::FlagKey& b) {
  return a.job == b.job && a.definition == b.definition && a.commit == b.commit && a.variant == b.variant;
}
} // namespace

Result<std::int64_t> MemoryStore::add_flag(const storage::FlagKey& key, CommitFlag flag, const std::string& message) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_flags, [&](const auto& f) { return same_key(f.key, key) && f.flag == flag; });
  if (found == m_flags.end()) {
    m_flags.push_back({key, flag, 0, "", 0});
    found = std::prev(m_flags.end());
  }
  found->message = message;
  return ++found->count;
}

Result<CommitFlags> MemoryStore::flags(const storage::FlagKey& key) {
  std::lock_guard lock(m_mutex);
  CommitFlags flags;
  for (const auto& f : m_flags) {
    if (same_key(f.key, key)) {
      (f.flag == CommitFlag::unbuildable  ? flags.unbuildable
       : f.flag == CommitFlag::unbootable ? flags.unbootable
       : f.flag == CommitFlag::unrunnable ? flags.unrunnable
                                          : flags.infra) = f.count;
      flags.messages[f.flag] = f.message;
    }
  }
  return flags;
}

Result<std::vector<storage::FlagRow>> MemoryStore::commit_flags(const std::string& prefix) {
  std::lock_guard lock(m_mutex);
  std::vector<storage::FlagRow> out;
  std::copy_if(m_flags.begin(), m_flags.end(), std::back_inserter(out),
               [&](const auto& f) { return f.key.commit.starts_with(prefix); });
  return out;
}

Status MemoryStore::forget_single_failures(const storage::FlagKey& key) {
  std::lock_guard lock(m_mutex);
  std::erase_if(m_flags, [&](const auto& f) {
    return same_key(f.key, key) && f.flag != CommitFlag::infra && f.count < CommitFlags::k_failures_to_skip;
  });
  return {};
}

Result<std::int64_t> MemoryStore::clear_flags(const std::string& job, const std::string& commit) {
  std::lock_guard lock(m_mutex);
  return static_cast<std::int64_t>(
    std::erase_if(m_flags, [&](const auto& f) { return f.key.job == job && f.key.commit == commit; }));
}

Status MemoryStore::record_build(const BuildRecord& build) {
  std::lock_guard lock(m_mutex);
  m_builds.push_back(build);
  return {};
}

Result<std::optional<BuildRecord>> MemoryStore::last_build(const std::string& job, const std::string& commit,
                                                           const std::string& variant) {
  std::lock_guard lock(m_mutex);
  for (auto b = m_builds.rbegin(); b != m_builds.rend(); ++b) {
    if (b->job == job && b->commit == commit && b->variant == variant) {
      return std::optional<BuildRecord>(*b);
    }
  }
  return std::optional<BuildRecord>();
}

Result<std::int64_t> MemoryStore::add_detection(const DetectionRow& detection) {
  std::lock_guard lock(m_mutex);
  if (find_if(m_detections, [&](const auto& d) {
        return d.tree == detection.tree && d.job == detection.job && d.good == detection.good && d.bad == detection.bad;
      }) != m_detections.end()) {
    return make_error(ErrorCode::conflict, "detection exists");
  }
  auto row = detection;
  row.id = static_cast<std::int64_t>(m_detections.size()) + 1;
  row.created_at = ++m_now;
  m_detections.push_back(row);
  return row.id;
}

Result<std::optional<DetectionRow>> MemoryStore::detection(const std::string& tree, const std::string& job,
                                                           const std::string& good, const std::string& bad) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_detections,
                       [&](const auto& d) { return d.tree == tree && d.job == job && d.good == good && d.bad == bad; });
  return found == m_detections.end() ? std::optional<DetectionRow>() : std::optional<DetectionRow>(*found);
}

Result<std::vector<DetectionRow>> MemoryStore::detections(const std::string& tree) {
  std::lock_guard lock(m_mutex);
  std::vector<DetectionRow> out;
  for (auto d = m_detections.rbegin(); d != m_detections.rend(); ++d) {
    if (tree.empty() || d->tree == tree) {
      out.push_back(*d);
    }
  }
  return out;
}

Result<std::vector<DetectionRow>> MemoryStore::detections_in_state(DetectionState state) {
  std::lock_guard lock(m_mutex);
  std::vector<DetectionRow> out;
  std::copy_if(m_detections.begin(), m_detections.end(), std::back_inserter(out),
               [&](const auto& d) { return d.state == state; });
  return out;
}

Status MemoryStore::set_detection_state(std::int64_t id, DetectionState state, std::int64_t bisection_id,
                                        std::optional<double> change) {
  std::lock_guard lock(m_mutex);
  for (auto& d : m_detections) {
    if (d.id == id) {
      d.state = state;
      d.bisection_id = bisection_id;
      d.change = change.value_or(d.change);
    }
  }
  return {};
}

Status MemoryStore::update_detection(const DetectionRow& row) {
  std::lock_guard lock(m_mutex);
  for (auto& d : m_detections) {
    if (d.id == row.id) {
      d.state = row.state;
      d.bisection_id = row.bisection_id;
      d.change = row.change;
      d.p_value = row.p_value;
      d.rewritten = row.rewritten;
      d.base = row.base;
      d.note = row.note;
      d.request_id = row.request_id;
    }
  }
  return {};
}

BisectionRow* MemoryStore::find_bisection(std::int64_t id) {
  auto found = find_if(m_bisections, [&](const auto& b) { return b.id == id; });
  return found == m_bisections.end() ? nullptr : &*found;
}

Result<std::int64_t> MemoryStore::add_bisection(const BisectionRow& bisection) {
  std::lock_guard lock(m_mutex);
  auto row = bisection;
  row.id = static_cast<std::int64_t>(m_bisections.size()) + 1;
  row.state = BisectionState::running;
  row.created_at = ++m_now;
  m_bisections.push_back(row);
  return row.id;
}

Result<std::optional<BisectionRow>> MemoryStore::bisection(std::int64_t id) {
  std::lock_guard lock(m_mutex);
  auto* b = find_bisection(id);
  return b == nullptr ? std::optional<BisectionRow>() : std::optional<BisectionRow>(*b);
}

Result<std::vector<BisectionRow>> MemoryStore::bisections(const std::string& tree,
                                                          std::optional<BisectionState> state) {
  std::lock_guard lock(m_mutex);
  std::vector<BisectionRow> out;
  for (auto b = m_bisections.rbegin(); b != m_bisections.rend(); ++b) {
    if ((tree.empty() || b->tree == tree) && (!state || b->state == *state)) {
      out.push_back(*b);
    }
  }
  return out;
}

Status MemoryStore::update_locked(const BisectionRow& bisection) {
  auto* b = find_bisection(bisection.id);
  if (b == nullptr) {
    return make_error(ErrorCode::not_found, "bisection not found");
  }
  if (b->state != storage::BisectionState::running) { // as the real store: an ended bisection is never written over
    return make_error(ErrorCode::conflict, "bisection " + std::to_string(bisection.id) + " is no longer running");
  }
  auto marks = std::pair{b->excluded, b->prebuilt}; // kept in their own table by the real store
  *b = bisection;
  b->excluded = marks.first;
  b->prebuilt = marks.second;
  return {};
}

Result<storage::BisectionCost> MemoryStore::bisection_cost(std::int64_t bisection_id) {
  std::lock_guard lock(m_mutex);
  storage::BisectionCost cost;
  std::set<std::string> boots;
  std::set<std::pair<std::string, std::string>> builds;
  for (const auto& r : m_requests) {
    if (r.bisection_id != bisection_id) {
      continue;
    }
    bool measured = false;
    for (const auto& s : m_samples) {
      if (s.request_id == r.id) {
        ++cost.runs;
        boots.insert(s.boot_id);
        measured = true;
      }
    }
    if (measured || r.error_code == "build_failed") {
      builds.insert({r.commit, r.variant});
    }
    cost.machine_seconds += r.machine_seconds;
  }
  cost.boots = static_cast<std::int64_t>(boots.size());
  cost.builds = static_cast<std::int64_t>(builds.size());
  return cost;
}

Status MemoryStore::update_bisection(const BisectionRow& bisection) {
  std::lock_guard lock(m_mutex);
  return update_locked(bisection);
}

Status MemoryStore::exclude_commit(std::int64_t bisection_id, const std::string& commit) {
  std::lock_guard lock(m_mutex);
  if (auto* b = find_bisection(bisection_id)) {
    b->excluded.insert(commit);
  }
  return {};
}

Status MemoryStore::add_prebuilt(std::int64_t bisection_id, const std::string& commit) {
  std::lock_guard lock(m_mutex);
  if (auto* b = find_bisection(bisection_id)) {
    b->prebuilt.insert(commit);
  }
  return {};
}

Status MemoryStore::end_running(std::int64_t bisection_id, BisectionState state, const std::string& reason,
                                const std::string& request_code) {
  std::lock_guard lock(m_mutex);
  auto* b = find_bisection(bisection_id);
  if (b == nullptr) {
    return make_error(ErrorCode::not_found, "bisection " + std::to_string(bisection_id) + " not found");
  }
  if (b->state != BisectionState::running) {
    return make_error(ErrorCode::conflict, "bisection is not running");
  }
  b->state = state;
  b->error = reason;
  for (auto& r : m_requests) {
    if (r.bisection_id == bisection_id && r.state == RequestState::queued) {
      r.state = RequestState::failed;
      r.error_code = request_code;
    }
  }
  return {};
}

Status MemoryStore::cancel_bisection(std::int64_t bisection_id) {
  return end_running(bisection_id, BisectionState::cancelled, "cancelled by the operator", "cancelled");
}

Status MemoryStore::fail_bisection(std::int64_t bisection_id, const std::string& reason) {
  return end_running(bisection_id, BisectionState::failed, reason, "bisection_failed");
}

Status MemoryStore::retry_bisection(std::int64_t bisection_id) {
  std::lock_guard lock(m_mutex);
  auto* b = find_bisection(bisection_id);
  if (b == nullptr) {
    return make_error(ErrorCode::not_found, "bisection " + std::to_string(bisection_id) + " not found");
  }
  if (b->state == BisectionState::running) {
    return make_error(ErrorCode::conflict, "bisection is running already");
  }
  for (const auto& r : m_requests) {
    if (r.bisection_id == bisection_id && r.state == RequestState::failed) {
      std::erase_if(m_flags, [&](const auto& f) {
        return f.flag == CommitFlag::infra && f.key.job == r.job && f.key.commit == r.commit &&
               f.key.variant == r.variant;
      });
    }
  }
  b->state = BisectionState::running;
  b->error.clear();
  b->culprit.clear();
  b->finished_at = 0;
  return {};
}

Result<std::int64_t> MemoryStore::delete_bisection(std::int64_t bisection_id, bool purge) {
  std::lock_guard lock(m_mutex);
  auto* b = find_bisection(bisection_id);
  if (b == nullptr) {
    return make_error(ErrorCode::not_found, "bisection " + std::to_string(bisection_id) + " not found");
  }
  if (b->state == BisectionState::running) {
    return make_error(ErrorCode::conflict, "bisection is running: cancel it first");
  }
  std::int64_t purged = 0;
  std::set<std::int64_t> requests;
  for (auto& r : m_requests) {
    if (r.bisection_id == bisection_id) {
      requests.insert(r.id);
      r.bisection_id = 0;
    }
  }
  if (purge) {
    purged = std::erase_if(m_samples, [&](const auto& s) { return requests.contains(s.request_id); });
  }
  std::erase_if(m_events, [&](const auto& e) { return e.first == bisection_id; });
  std::erase_if(m_bisections, [&](const auto& row) { return row.id == bisection_id; });
  return purged;
}

Status MemoryStore::add_event(std::int64_t bisection_id, const std::string& message) {
  std::lock_guard lock(m_mutex);
  m_events.push_back({bisection_id, EventRow{++m_now, message}});
  return {};
}

Result<std::vector<EventRow>> MemoryStore::events(std::int64_t bisection_id) {
  std::lock_guard lock(m_mutex);
  std::vector<EventRow> out;
  for (const auto& [id, event] : m_events) {
    if (id == bisection_id) {
      out.push_back(event);
    }
  }
  return out;
}

Status MemoryStore::finish_bisection(const BisectionRow& bisection, const std::optional<ReportRow>& report) {
  std::lock_guard lock(m_mutex);
  if (report && find_if(m_reports, [&](const auto& r) { return r.bisection_id == bisection.id; }) != m_reports.end()) {
    return make_error(ErrorCode::conflict, "bisection has a report already");
  }
  BISECTD_TRY(update_locked(bisection));
  if (report) {
    auto row = *report;
    row.id = static_cast<std::int64_t>(m_reports.size()) + 1;
    row.bisection_id = bisection.id;
    row.created_at = ++m_now;
    m_reports.push_back(row);
    if (row.repeat_of == 0) {
      m_outbox.push_back({static_cast<std::int64_t>(m_outbox.size()) + 1, row.id, OutboxState::pending, 0, m_now, ""});
    }
  }
  return {};
}

Result<std::optional<ReportRow>> MemoryStore::first_report(const std::string& tree, const std::string& job,
                                                           const std::string& culprit, std::int64_t except_bisection) {
  std::lock_guard lock(m_mutex);
  for (const auto& r : m_reports) {
    auto b = find_if(m_bisections, [&](const auto& row) { return row.id == r.bisection_id; });
    if (b != m_bisections.end() && b->id != except_bisection && b->tree == tree && b->job == job &&
        b->culprit == culprit && r.repeat_of == 0) {
      return std::optional<ReportRow>(r);
    }
  }
  return std::optional<ReportRow>();
}

Result<std::optional<ReportRow>> MemoryStore::report(std::int64_t bisection_id) {
  std::lock_guard lock(m_mutex);
  auto found = find_if(m_reports, [&](const auto& r) { return r.bisection_id == bisection_id; });
  return found == m_reports.end() ? std::optional<ReportRow>() : std::optional<ReportRow>(*found);
}

Result<std::vector<std::pair<OutboxRow, ReportRow>>> MemoryStore::due_mail(std::int64_t now) {
  std::lock_guard lock(m_mutex);
  std::vector<std::pair<OutboxRow, ReportRow>> out;
  for (const auto& o : m_outbox) {
    if (o.state == OutboxState::pending && o.next_attempt_at <= now) {
      out.emplace_back(o, m_reports[static_cast<std::size_t>(o.report_id - 1)]);
    }
  }
  return out;
}

Result<bool> MemoryStore::mark_mail_sending(std::int64_t outbox_id) {
  std::lock_guard lock(m_mutex);
  auto& o = m_outbox.at(static_cast<std::size_t>(outbox_id - 1));
  if (o.state != OutboxState::pending) {
    return false;
  }
  o.state = OutboxState::sending;
  return true;
}

Result<std::vector<std::pair<OutboxRow, ReportRow>>> MemoryStore::interrupted_mail() {
  std::lock_guard lock(m_mutex);
  std::vector<std::pair<OutboxRow, ReportRow>> out;
  for (const auto& o : m_outbox) {
    if (o.state == OutboxState::sending) {
      out.emplace_back(o, m_reports[static_cast<std::size_t>(o.report_id - 1)]);
    }
  }
  return out;
}

Status MemoryStore::mark_mail_sent(std::int64_t outbox_id) {
  std::lock_guard lock(m_mutex);
  auto& o = m_outbox.at(static_cast<std::size_t>(outbox_id - 1));
  o.state = OutboxState::sent;
  o.attempts += 1;
  m_reports.at(static_cast<std::size_t>(o.report_id - 1)).sent = true;
  return {};
}

Result<std::optional<OutboxRow>> MemoryStore::report_mail(std::int64_t report_id) {
  std::lock_guard lock(m_mutex);
  auto found = std::find_if(m_outbox.begin(), m_outbox.end(), [&](const auto& o) { return o.report_id == report_id; });
  return found == m_outbox.end() ? std::optional<OutboxRow>() : std::optional<OutboxRow>(*found);
}

Status MemoryStore::mark_mail_failed(std::int64_t outbox_id, const std::string& error, std::int64_t next_attempt_at,
                                     bool give_up) {
  std::lock_guard lock(m_mutex);
  auto& o = m_outbox.at(static_cast<std::size_t>(outbox_id - 1));
  o.state = give_up ? OutboxState::failed : OutboxState::pending;
  o.attempts += 1;
  o.last_error = error;
  o.next_attempt_at = next_attempt_at;
  return {};
}

std::vector<RequestRow> MemoryStore::all_requests() {
  std::lock_guard lock(m_mutex);
  return m_requests;
}

std::vector<ReportRow> MemoryStore::all_reports() {
  std::lock_guard lock(m_mutex);
  return m_reports;
}

} // namespace bisectd::test
