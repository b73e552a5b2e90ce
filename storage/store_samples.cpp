// Samples with their metrics (one row per metric in sample_metrics), commit flags and the build record.
#include "base/clock.hpp"
#include "storage/query.hpp"
#include "storage/store.hpp"

namespace bisectd::storage {

namespace {

constexpr std::string_view k_sample_columns =
  "id, request_id, tree, job, commit_sha, variant, machine, boot_id, run, verification, COALESCE(log_path, ''), "
  "created_at";

SampleRow read_sample(const Statement& s) {
  SampleRow r;
  r.id = s.column_int(0);
  r.request_id = s.column_int(1);
  r.tree = s.column_text(2);
  r.job = s.column_text(3);
  r.commit = s.column_text(4);
  r.variant = s.column_text(5);
  r.machine = s.column_text(6);
  r.boot_id = s.column_text(7);
  r.run = s.column_int(8);
  r.verification = s.column_int(9) != 0;
  r.log_path = s.column_text(10);
  r.created_at = s.column_int(11);
  return r;
}

constexpr std::string_view k_metric_columns =
  "s.id, s.commit_sha, s.machine, s.boot_id, m.value, s.verification, s.request_id";

MetricSample read_metric_sample(const Statement& s, int first = 0) {
  return MetricSample{s.column_int(first),      s.column_text(first + 1),   s.column_text(first + 2),
                      s.column_text(first + 3), s.column_double(first + 4), s.column_int(first + 5) != 0,
                      s.column_int(first + 6)};
}

// Every metric of `rows` (sample ids in order), in one query per batch of samples.
Status fill_metrics(Connection& connection, std::vector<SampleRow>& rows) {
  constexpr std::size_t k_batch = 400; // below SQLite's bound-parameter limit
  std::map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    index[rows[i].id] = i;
  }
  for (std::size_t begin = 0; begin < rows.size(); begin += k_batch) {
    auto end = std::min(rows.size(), begin + k_batch);
    std::string sql = "SELECT sample_id, name, value FROM sample_metrics WHERE sample_id IN (";
    std::vector<Value> params;
    for (auto i = begin; i < end; ++i) {
      sql += i == begin ? "?" : ", ?";
      params.push_back(integer(rows[i].id));
    }
    BISECTD_TRY_ASSIGN(auto metrics, (query<std::tuple<std::int64_t, std::string, double>>(
                                       connection, sql + ")", params, [](const Statement& s) {
                                         return std::tuple{s.column_int(0), s.column_text(1), s.column_double(2)};
                                       })));
    for (auto& [id, name, value] : metrics) {
      rows[index[id]].metrics[std::move(name)] = value;
    }
  }
  return {};
}

// `limit`: at most that many (the first ones in time order), counted before any metric is read.
Result<std::vector<SampleRow>> samples_where(Connection& connection, const std::string& where,
                                             std::vector<Value> params, std::size_t limit = k_all_samples) {
  params.push_back(integer(static_cast<std::int64_t>(std::min(limit, k_all_samples))));
  BISECTD_TRY_ASSIGN(auto rows, query<SampleRow>(connection,
                                                 "SELECT " + std::string(k_sample_columns) + " FROM samples WHERE " +
                                                   where + " ORDER BY id LIMIT ?",
                                                 params, read_sample));
  BISECTD_TRY(fill_metrics(connection, rows));
  return rows;
}

// A sample's metrics in multi-row INSERTs: a run may carry 10,000 metrics, and one statement prepared per metric
// held the database (and every API read waiting on it) for seconds.
Status insert_metrics(Connection& connection, std::int64_t sample_id, const std::map<std::string, double>& metrics) {
  constexpr std::size_t k_rows = 300; // 3 parameters each: below SQLite's bound-parameter limit
  auto it = metrics.begin();
  while (it != metrics.end()) {
    std::string sql = "INSERT INTO sample_metrics (sample_id, name, value) VALUES ";
    std::vector<Value> params;
    for (std::size_t row = 0; row < k_rows && it != metrics.end(); ++row, ++it) {
      sql += row == 0 ? "(?, ?, ?)" : ", (?, ?, ?)";
      params.insert(params.end(), {integer(sample_id), text(it->first), Value(it->second)});
    }
    BISECTD_TRY(connection.run(sql, params));
  }
  return {};
}

} // namespace

Status Store::finish_request(std::int64_t id, const std::vector<SampleRow>& samples) {
  Transaction txn(*m_connection);
  BISECTD_TRY(txn.begin());
  auto now = base::unix_now();
  for (const auto& s : samples) {
    BISECTD_TRY(m_connection->run(
      "INSERT INTO samples (request_id, tree, job, commit_sha, variant, machine, boot_id, run, verification, "
      "log_path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {integer(id), text(s.tree), text(s.job), text(s.commit), text(s.variant), text(s.machine), text(s.boot_id),
       integer(s.run), integer(s.verification ? 1 : 0), text(s.log_path), integer(now)}));
    BISECTD_TRY(insert_metrics(*m_connection, m_connection->last_insert_id(), s.metrics));
  }
  BISECTD_TRY(m_connection->run("UPDATE requests SET state = 'done', error = NULL, updated_at = ? WHERE id = ?",
                                {integer(now), integer(id)}));
  return txn.commit();
}

Result<std::vector<SampleRow>> Store::samples(const std::string& job, const std::vector<std::string>& commits,
                                              const std::string& variant) {
  std::vector<SampleRow> all;
  for (const auto& commit : commits) {
    BISECTD_TRY_ASSIGN(auto rows, samples_where(*m_connection, "job = ? AND commit_sha = ? AND variant = ?",
                                                {text(job), text(commit), text(variant)}));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

Result<std::vector<MetricSample>> Store::metric_samples(const std::string& job, const std::vector<std::string>& commits,
                                                        const std::string& metric, const std::string& variant) {
  std::vector<MetricSample> all;
  std::lock_guard lock(m_connection->mutex()); // one statement text, prepared once per call
  for (const auto& commit : commits) {
    BISECTD_TRY_ASSIGN(
      auto rows, query<MetricSample>(*m_connection,
                                     "SELECT " + std::string(k_metric_columns) +
                                       " FROM samples s JOIN sample_metrics m ON m.sample_id = s.id AND m.name = ? "
                                       "WHERE s.job = ? AND s.commit_sha = ? AND s.variant = ? ORDER BY s.id",
                                     {text(metric), text(job), text(commit), text(variant)},
                                     [](const Statement& s) { return read_metric_sample(s); }));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

Result<std::vector<MetricSample>> Store::request_metric_samples(const std::vector<std::int64_t>& requests,
                                                                const std::string& metric) {
  std::vector<MetricSample> all;
  for (auto id : requests) {
    BISECTD_TRY_ASSIGN(
      auto rows,
      query<MetricSample>(*m_connection,
                          "SELECT " + std::string(k_metric_columns) +
                            " FROM samples s JOIN sample_metrics m ON m.sample_id = s.id AND m.name = ? "
                            "WHERE s.request_id = ? ORDER BY s.id",
                          {text(metric), integer(id)}, [](const Statement& s) { return read_metric_sample(s); }));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

Result<std::vector<std::pair<std::string, MetricSample>>>
Store::series_samples(const std::string& tree, const std::string& job, const std::string& group,
                      const std::vector<std::string>& metrics) {
  std::vector<std::pair<std::string, MetricSample>> all;
  for (const auto& metric : metrics) {
    BISECTD_TRY_ASSIGN(auto rows, (query<std::pair<std::string, MetricSample>>(
                                    *m_connection,
                                    "SELECT m.name, " + std::string(k_metric_columns) +
                                      " FROM samples s JOIN requests r ON r.id = s.request_id "
                                      "JOIN sample_metrics m ON m.sample_id = s.id AND m.name = ? "
                                      "WHERE r.tree = ? AND r.job = ? AND r.machine_group = ? AND s.variant = '' "
                                      "ORDER BY s.id",
                                    {text(metric), text(tree), text(job), text(group)}, [](const Statement& s) {
                                      return std::pair{s.column_text(0), read_metric_sample(s, 1)};
                                    })));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

Result<std::vector<SampleRow>> Store::samples_for_commit_prefix(const std::string& prefix, const std::string& tree,
                                                                std::int64_t after_id, std::size_t limit) {
  std::string where = "substr(commit_sha, 1, ?) = ? AND id > ?";
  std::vector<Value> params{integer(static_cast<std::int64_t>(prefix.size())), text(prefix), integer(after_id)};
  if (!tree.empty()) {
    where += " AND tree = ?";
    params.push_back(text(tree));
  }
  return samples_where(*m_connection, where, params, limit);
}

Result<std::vector<SampleRow>> Store::samples_for_job(const std::string& job) {
  return samples_where(*m_connection, "job = ?", {text(job)});
}

Result<std::int64_t> Store::add_flag(const FlagKey& key, CommitFlag flag, const std::string& message) {
  std::lock_guard lock(m_connection->mutex());
  BISECTD_TRY(m_connection->run(
    "INSERT INTO commit_flags (job, definition, commit_sha, variant, flag, message, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(job, definition, commit_sha, variant, flag) DO UPDATE SET "
    "count = count + 1, message = excluded.message, updated_at = excluded.updated_at",
    {text(key.job), text(key.definition), text(key.commit), text(key.variant), text(std::string(to_string(flag))),
     text(message), integer(base::unix_now())}));
  BISECTD_TRY_ASSIGN(auto all, flags(key));
  return all.count(flag);
}

Result<CommitFlags> Store::flags(const FlagKey& key) {
  struct Row {
    std::string name;
    std::int64_t count = 0;
    std::string message;
  };
  BISECTD_TRY_ASSIGN(auto rows, query<Row>(*m_connection,
                                           "SELECT flag, count, message FROM commit_flags WHERE job = ? AND "
                                           "definition = ? AND commit_sha = ? AND variant = ?",
                                           {text(key.job), text(key.definition), text(key.commit), text(key.variant)},
                                           [](const Statement& s) {
                                             return Row{s.column_text(0), s.column_int(1), s.column_text(2)};
                                           }));
  CommitFlags flags;
  for (const auto& [name, count, message] : rows) {
    auto flag = parse_commit_flag(name);
    if (!flag) {
      continue;
    }
    flags.messages[*flag] = message;
    switch (*flag) {
    case CommitFlag::unbuildable: flags.unbuildable = count; break;
    case CommitFlag::unbootable: flags.unbootable = count; break;
    case CommitFlag::unrunnable: flags.unrunnable = count; break;
    case CommitFlag::infra: flags.infra = count; break;
    }
  }
  return flags;
}

Result<std::vector<FlagRow>> Store::commit_flags(const std::string& prefix) {
  BISECTD_TRY_ASSIGN(
    auto rows, query<std::optional<FlagRow>>(
                 *m_connection,
                 "SELECT job, definition, commit_sha, variant, flag, count, COALESCE(message, ''), updated_at "
                 "FROM commit_flags WHERE substr(commit_sha, 1, ?) = ? ORDER BY commit_sha, job, variant, updated_at",
                 {integer(static_cast<std::int64_t>(prefix.size())), text(prefix)},
                 [](const Statement& s) -> std::optional<FlagRow> {
                   auto flag = parse_commit_flag(s.column_text(4));
                   if (!flag) {
                     return std::nullopt; // a name of a newer bisectd: not this one's to judge
                   }
                   return FlagRow{{s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3)},
                                  *flag,
                                  s.column_int(5),
                                  s.column_text(6),
                                  s.column_int(7)};
                 }));
  std::vector<FlagRow> out;
  for (auto& row : rows) {
    if (row) {
      out.push_back(std::move(*row));
    }
  }
  return out;
}

Status Store::forget_single_failures(const FlagKey& key) {
  BISECTD_TRY(m_connection->run("DELETE FROM commit_flags WHERE job = ? AND definition = ? AND commit_sha = ? AND "
                                "variant = ? AND flag != 'infra' AND count < ?",
                                {text(key.job), text(key.definition), text(key.commit), text(key.variant),
                                 integer(CommitFlags::k_failures_to_skip)}));
  return {};
}

Result<std::int64_t> Store::clear_flags(const std::string& job, const std::string& commit) {
  BISECTD_TRY_ASSIGN(int deleted, m_connection->run("DELETE FROM commit_flags WHERE job = ? AND commit_sha = ?",
                                                    {text(job), text(commit)}));
  return deleted;
}

Status Store::record_build(const BuildRecord& b) {
  BISECTD_TRY(m_connection->run("INSERT INTO builds (job, commit_sha, variant, outcome, seconds, log_path, created_at) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                {text(b.job), text(b.commit), text(b.variant), text(b.outcome), Value(b.seconds),
                                 text(b.log_path), integer(base::unix_now())}));
  return {};
}

Result<std::optional<BuildRecord>> Store::last_build(const std::string& job, const std::string& commit,
                                                     const std::string& variant) {
  return query_one<BuildRecord>(*m_connection,
                                "SELECT job, commit_sha, variant, outcome, seconds, COALESCE(log_path, '') FROM builds "
                                "WHERE job = ? AND commit_sha = ? AND variant = ? ORDER BY id DESC LIMIT 1",
                                {text(job), text(commit), text(variant)}, [](const Statement& s) {
                                  return BuildRecord{s.column_text(0), s.column_text(1),   s.column_text(2),
                                                     s.column_text(3), s.column_double(4), s.column_text(5)};
                                });
}

} // namespace bisectd::storage
