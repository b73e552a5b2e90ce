#include "daemon/bisection_driver.hpp"

#include "base/clock.hpp"
#include "base/strings.hpp"
#include "daemon/bisection_priors.hpp"
#include "daemon/verifier.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <set>

namespace bisectd::daemon {

namespace {

using nlohmann::json;

// What the culprit is compared with: its first parent, or when that (and maybe more) was left out as irrelevant
// to the build or verified implausible (prior 0: the same binary), the nearest predecessor that counts; and when
// that one builds identically to an earlier commit (same_as), the commit whose build and samples it shares.
std::size_t reference_parent(const std::vector<bisect::Candidate>& chain, std::size_t culprit) {
  std::size_t i = culprit - 1;
  while (i > 0 && chain[i].prior == 0 && !chain[i].skipped) {
    --i;
  }
  for (std::size_t hops = 0; chain[i].same_as && *chain[i].same_as < chain.size() && hops < chain.size(); ++hops) {
    i = *chain[i].same_as;
  }
  return i;
}

bool is_open(const storage::RequestRow& r) { return r.state == "queued" || r.state == "building" || r.state == "running"; }

std::string verdict_state(bisect::Verdict verdict) {
  return verdict == bisect::Verdict::found ? "found" : "not_found";
}

json result_json(const storage::BisectionRow& b, const std::vector<std::string>& chain, const bisect::Step& step) {
  auto result = json::parse(b.result_json, nullptr, false);
  if (!result.is_object()) {
    result = json::object();
  }
  json set = json::array();
  for (auto i : step.credible_set) {
    set.push_back(chain[i]);
  }
  result["verdict"] = bisect::to_string(step.verdict);
  result["credible_set"] = set;
  result["shift"] = {{"estimate", step.shift}, {"low", step.shift_low}, {"high", step.shift_high}};
  result["p_no_change"] = step.p_no_change;
  result["chain_length"] = chain.size();
  std::vector<std::string> tail(step.trace.end() - std::min<std::ptrdiff_t>(8, std::ssize(step.trace)),
                                step.trace.end());
  result["trace"] = tail;
  return result;
}

} // namespace

Result<std::int64_t> BisectionDriver::start(const std::string& tree, const std::string& branch,
                                            const std::string& good, const std::string& bad,
                                            const std::string& job_name, const std::string& origin,
                                            const std::string& metric) {
  BISECTD_TRY_ASSIGN(auto job, m_context.jobs->get(job_name));
  storage::BisectionRow b;
  b.tree = tree;
  b.branch = branch;
  b.job = job_name;
  b.metric = metric.empty() ? job->metrics.primary : metric;
  b.origin = origin;
  BISECTD_TRY(m_context.trees->with_repo(tree, [&](vcs::Repository& repo) -> Status {
    auto good_sha = repo.resolve(good);
    if (!good_sha) {
      return make_error(ErrorCode::invalid_input, "good: unknown revision '" + good + "' in tree " + tree);
    }
    auto bad_sha = repo.resolve(bad);
    if (!bad_sha) {
      return make_error(ErrorCode::invalid_input, "bad: unknown revision '" + bad + "' in tree " + tree);
    }
    if (*good_sha == *bad_sha) {
      return make_error(ErrorCode::invalid_input, "good and bad are the same commit " + base::short_sha(*good_sha));
    }
    BISECTD_TRY_ASSIGN(bool ancestor, repo.is_ancestor(*good_sha, *bad_sha));
    if (!ancestor) {
      return make_error(ErrorCode::invalid_input,
                        "good " + base::short_sha(*good_sha) + " is not an ancestor of bad " + base::short_sha(*bad_sha));
    }
    b.good = b.range_good = *good_sha;
    b.bad = b.range_bad = *bad_sha;
    return {};
  }));
  BISECTD_TRY_ASSIGN(auto id, m_context.store->add_bisection(b));
  (void)m_context.store->add_event(id, "started (" + origin + "): good " + base::short_sha(b.good) + ", bad " +
                                         base::short_sha(b.bad) + ", metric " + b.metric);
  spdlog::info("bisection {} started on {}: {}..{}", id, tree, base::short_sha(b.good), base::short_sha(b.bad));
  if (m_context.wake) {
    m_context.wake();
  }
  return id;
}

void BisectionDriver::advance_all() {
  auto running = m_context.store->bisections("", "running");
  if (!running) {
    spdlog::error("bisections: {}", running.error().message);
    return;
  }
  for (auto& b : *running) {
    if (auto status = advance(b); !status) {
      spdlog::error("bisection {}: {}", b.id, status.error().message);
    }
  }
}

Result<std::vector<std::string>> BisectionDriver::chain(const storage::BisectionRow& b) {
  auto key = b.range_good + ".." + b.range_bad;
  auto found = m_chains.find(b.id);
  if (found != m_chains.end() && found->second.first == key) {
    return found->second.second;
  }
  std::vector<std::string> chain;
  BISECTD_TRY(m_context.trees->with_repo(b.tree, [&](vcs::Repository& repo) -> Status {
    BISECTD_TRY_ASSIGN(chain, repo.first_parent_chain(b.range_good, b.range_bad));
    return {};
  }));
  m_chains[b.id] = {key, chain};
  return chain;
}

int BisectionDriver::machines_in(const std::string& group) const {
  int n = 0;
  for (const auto& slot : m_context.machines) {
    n += slot.machine->spec().group == group ? 1 : 0;
  }
  return n;
}

Result<bisect::Problem> BisectionDriver::problem_for(const storage::BisectionRow& b, const Job& job,
                                                     const std::vector<std::string>& chain) {
  bisect::Problem problem;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    index[chain[i]] = i;
    bisect::Candidate candidate;
    candidate.id = chain[i];
    BISECTD_TRY_ASSIGN(auto flags, m_context.store->flags(job.name, chain[i]));
    candidate.skipped = flags["unbuildable"] > 0 || flags["unbootable"] >= 2 || flags["unrunnable"] > 0;
    problem.chain.push_back(candidate);
  }
  auto result = json::parse(b.result_json, nullptr, false);
  for (const auto& sha : json_string_list(result, "excluded")) {
    if (index.contains(sha)) {
      problem.chain[index[sha]].prior = 0; // verified implausible: cannot be the change
    }
  }
  BISECTD_TRY_ASSIGN(auto samples, m_context.store->samples(job.name, chain));
  std::set<std::size_t> built;
  for (const auto& s : samples) {
    if (auto value = metric_value(s, b.metric)) {
      problem.samples.push_back({index[s.commit], *value, s.boot_id, s.id, s.verification});
      built.insert(index[s.commit]);
    }
  }
  for (const auto& sha : json_string_list(result, "prebuilt")) { // built ahead by the prebuilder, not measured yet
    if (index.contains(sha)) {
      built.insert(index[sha]);
    }
  }
  BISECTD_TRY_ASSIGN(auto requests, m_context.store->requests_for_bisection(b.id));
  int open = 0;
  for (const auto& r : requests) {
    if (is_open(r) && index.contains(r.commit)) {
      problem.settings.in_flight.push_back(index[r.commit]);
      ++open;
    }
  }
  auto& s = problem.settings;
  s.method = job.bisect.method;
  s.direction = job.metrics.direction;
  s.threshold = job.metrics.threshold;
  s.delta = job.bisect.delta;
  s.runs_per_visit = job.runs;
  s.max_runs = job.bisect.max_runs;
  s.max_builds = job.bisect.max_builds;
  s.idle_machines = std::max(0, machines_in(job.machine_group) - open);
  s.built.assign(built.begin(), built.end());
  s.verification_pairs = job.verify.confirm ? job.verify.pairs : 0;
  apply_history(m_context, b, job, s, m_history);
  auto dropped = apply_relevance(m_context, b, job, problem.chain, m_history);
  if (dropped > 0 && m_relevance_told.insert({b.id, b.range_good + ".." + b.range_bad}).second) {
    (void)m_context.store->add_event(b.id, std::to_string(dropped) + " of " + std::to_string(chain.size() - 1) +
                                             " commits touch no file the kernel build uses: never built");
  }
  m_equivalence.apply(m_context, b, job, problem.chain); // identical builds share samples
  return problem;
}

Status BisectionDriver::advance(storage::BisectionRow b) {
  BISECTD_TRY_ASSIGN(auto job, m_context.jobs->get(b.job));
  auto chain_or = chain(b);
  if (!chain_or) {
    return fail(b, chain_or.error().message);
  }
  const auto& chain = *chain_or;
  BISECTD_TRY_ASSIGN(auto problem, problem_for(b, *job, chain));
  if (problem.chain.front().skipped || problem.chain.back().skipped) {
    return fail(b, "an endpoint (good or bad) cannot be built or run; see `bisectctl results`");
  }
  auto step = bisect::next_step(problem);
  b.runs = step.runs_used;
  b.builds = step.builds_used;
  b.p_culprit = step.p_culprit;
  b.result_json = result_json(b, chain, step).dump();
  b.builds += m_prebuilder.on_step(b, job, problem, step); // prebuilt commits not measured yet are builds too
  if (step.verdict == bisect::Verdict::need_runs) {
    BISECTD_TRY(m_context.store->update_bisection(b));
    return enqueue_picks(b, *job, chain, step, problem.settings.in_flight);
  }
  if (!problem.settings.in_flight.empty()) {
    BISECTD_TRY(m_context.store->update_bisection(b));
    return {}; // let the runs in flight land first: they may still change the answer
  }
  return finish(b, *job, problem, step);
}

Status BisectionDriver::enqueue_picks(const storage::BisectionRow& b, const Job& job,
                                      const std::vector<std::string>& chain, const bisect::Step& step,
                                      const std::vector<std::size_t>& open) {
  std::set<std::size_t> in_flight(open.begin(), open.end());
  for (const auto& pick : step.picks) {
    if (in_flight.contains(pick.commit) || pick.runs <= 0) {
      continue;
    }
    storage::RequestRow r;
    r.tree = b.tree;
    r.job = b.job;
    r.commit = chain[pick.commit];
    r.purpose = pick.verification ? "verify" : "bisect";
    r.bisection_id = b.id;
    r.machine_group = job.machine_group;
    r.runs = pick.runs;
    BISECTD_TRY(m_context.store->enqueue(r));
    (void)m_context.store->add_event(b.id, std::string(pick.verification ? "verify " : "test ") +
                                             base::short_sha(r.commit) + " x" + std::to_string(pick.runs) +
                                             " (P(culprit) " + std::to_string(step.p_culprit).substr(0, 5) + ")");
  }
  return {};
}

Result<bool> BisectionDriver::recurse_into_merge(storage::BisectionRow& b, const std::string& culprit) {
  bool moved = false;
  BISECTD_TRY(m_context.trees->with_repo(b.tree, [&](vcs::Repository& repo) -> Status {
    BISECTD_TRY_ASSIGN(auto range, repo.merged_range(culprit));
    if (!range) {
      return {};
    }
    auto result = json::parse(b.result_json, nullptr, false);
    result["merge"] = culprit;
    b.result_json = result.dump();
    b.range_good = range->first;
    b.range_bad = range->second;
    moved = true;
    return {};
  }));
  if (moved) {
    BISECTD_TRY(m_context.store->update_bisection(b));
    (void)m_context.store->add_event(b.id, "culprit " + base::short_sha(culprit) +
                                             " is a merge: searching the merged branch " + base::short_sha(b.range_good) +
                                             ".." + base::short_sha(b.range_bad));
  }
  return moved;
}

Status BisectionDriver::finish(storage::BisectionRow& b, const Job& job, const bisect::Problem& problem,
                               const bisect::Step& step) {
  std::vector<std::string> chain;
  for (const auto& candidate : problem.chain) {
    chain.push_back(candidate.id);
  }
  auto result = json::parse(b.result_json, nullptr, false);
  std::string merge = result.contains("merge") ? result["merge"].get<std::string>() : "";
  if (step.verdict == bisect::Verdict::found && step.culprit) {
    BISECTD_TRY_ASSIGN(bool moved, recurse_into_merge(b, chain[*step.culprit]));
    if (moved) {
      return {};
    }
  }
  std::optional<Verification> verification;
  if (step.verdict == bisect::Verdict::found && step.culprit) {
    BISECTD_TRY_ASSIGN(verification, verify_culprit(m_context, b, job, chain, *step.culprit,
                                                     reference_parent(problem.chain, *step.culprit)));
    if (!verification) {
      return m_context.store->update_bisection(b); // verification runs pending
    }
    auto stored = json::parse(b.result_json, nullptr, false);
    stored["verification"] = verification->details;
    if (verification->implausible) {
      // The culprit cannot explain a shift: leave it out of the search and let the posterior move.
      stored["excluded"].push_back(chain[*step.culprit]);
      b.result_json = stored.dump();
      (void)m_context.store->add_event(b.id, "culprit " + base::short_sha(chain[*step.culprit]) +
                                               " is implausible (" + base::join(verification->lines, "; ") +
                                               "): searching on without it");
      return m_context.store->update_bisection(b);
    }
    b.result_json = stored.dump();
  }
  Conclusion c;
  if (verification) {
    c.verification = verification->lines;
    c.layout_artefact = verification->layout_artefact;
  }
  c.chain = chain;
  c.culprit = step.culprit.value_or(chain.size() - 1);
  c.parent = c.culprit > 0 ? reference_parent(problem.chain, c.culprit) : 0;
  c.culprit_sha = chain[c.culprit];
  c.p_culprit = step.p_culprit;
  c.credible_set = step.credible_set;
  c.confident = step.verdict == bisect::Verdict::found;
  c.runs = step.runs_used;
  c.builds = b.builds; // prebuilt commits never measured included
  if (!merge.empty() && step.verdict == bisect::Verdict::no_change) {
    c.culprit_sha = merge; // the merged branch alone does not regress: the merge itself is the culprit
    c.confident = true;
    b.state = "found";
  } else {
    b.state = verdict_state(step.verdict);
  }
  b.culprit = b.state == "found" ? c.culprit_sha : "";
  b.finished_at = base::unix_now();
  std::optional<storage::ReportRow> report;
  if (step.verdict != bisect::Verdict::no_change || !merge.empty()) {
    BISECTD_TRY_ASSIGN(auto tree, m_context.store->tree(b.tree));
    if (tree) {
      BISECTD_TRY_ASSIGN(report, compose_report(m_context, b, job, *tree, c));
    }
  }
  BISECTD_TRY(m_context.store->finish_bisection(b, report));
  (void)m_context.store->add_event(b.id, "finished: " + b.state +
                                           (b.culprit.empty() ? "" : " culprit " + base::short_sha(b.culprit)) +
                                           " P=" + std::to_string(b.p_culprit).substr(0, 6));
  spdlog::info("bisection {} {}: {} (P={:.4f}, {} runs, {} builds)", b.id, b.state,
               b.culprit.empty() ? "-" : base::short_sha(b.culprit), b.p_culprit, b.runs, b.builds);
  return {};
}

Status BisectionDriver::fail(storage::BisectionRow& b, const std::string& why) {
  b.state = "failed";
  b.error = why;
  b.finished_at = base::unix_now();
  BISECTD_TRY(m_context.store->update_bisection(b));
  (void)m_context.store->add_event(b.id, "failed: " + why);
  spdlog::warn("bisection {} failed: {}", b.id, why);
  return {};
}

} // namespace bisectd::daemon
