#include "daemon/bisection/driver.hpp"

#include "base/clock.hpp"
#include "base/strings.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace bisectd::daemon::bisection {

namespace {

using nlohmann::json;
using storage::BisectionState;

// The engine's summary as the API shows it (never read back by the daemon). `threshold`: the job's, which a "no
// change" verdict is about.
std::string result_json(const std::vector<std::string>& chain, const bisect::Step& step, double threshold) {
  json set = json::array();
  for (auto i : step.credible_set) {
    set.push_back(chain[i]);
  }
  std::vector<std::string> tail(step.trace.end() - std::min<std::ptrdiff_t>(8, std::ssize(step.trace)),
                                step.trace.end());
  return json{{"verdict", bisect::to_string(step.verdict)},
              {"credible_set", set},
              {"shift", {{"estimate", step.shift}, {"low", step.shift_low}, {"high", step.shift_high}}},
              {"p_no_change", step.p_no_change},
              {"threshold", threshold},
              {"chain_length", chain.size()},
              {"trace", tail}}
    .dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

std::size_t build_root(const std::vector<bisect::Candidate>& chain, std::size_t i) {
  for (std::size_t hops = 0; chain[i].same_as && *chain[i].same_as < chain.size() && hops < chain.size(); ++hops) {
    i = *chain[i].same_as;
  }
  return i;
}

std::size_t reference_parent(const std::vector<bisect::Candidate>& chain, std::size_t culprit) {
  std::size_t i = culprit - 1;
  while (i > 0 && chain[i].prior == 0 && !chain[i].skipped) {
    --i;
  }
  return build_root(chain, i);
}

std::vector<std::string> same_build(const std::vector<std::string>& commits,
                                    const std::vector<bisect::Candidate>& chain, std::size_t i) {
  std::vector<std::string> out{commits[i]};
  auto root = build_root(chain, i);
  for (std::size_t j = 0; j < chain.size(); ++j) {
    if (j != i && build_root(chain, j) == root) {
      out.push_back(commits[j]);
    }
  }
  return out;
}

Result<std::int64_t> Driver::start(const BisectionStart& start) {
  BISECTD_TRY_ASSIGN(auto job, m_parts.jobs.get(start.job));
  storage::BisectionRow b;
  b.tree = start.tree;
  b.branch = start.branch;
  b.job = start.job;
  b.metric = start.metric.empty() ? job->metrics.primary : start.metric;
  b.origin = start.origin;
  BISECTD_TRY(m_parts.repos.with_repo(start.tree, [&](vcs::Repo& repo) -> Status {
    auto good = repo.resolve(start.good);
    if (!good) {
      return make_error(ErrorCode::invalid_input, "good: unknown revision '" + start.good + "' in tree " + start.tree);
    }
    auto bad = repo.resolve(start.bad);
    if (!bad) {
      return make_error(ErrorCode::invalid_input, "bad: unknown revision '" + start.bad + "' in tree " + start.tree);
    }
    if (*good == *bad) {
      return make_error(ErrorCode::invalid_input, "good and bad are the same commit " + base::short_sha(*good));
    }
    BISECTD_TRY_ASSIGN(bool ancestor, repo.is_ancestor(*good, *bad));
    if (!ancestor) {
      return make_error(ErrorCode::invalid_input,
                        "good " + base::short_sha(*good) + " is not an ancestor of bad " + base::short_sha(*bad));
    }
    b.good = b.range_good = *good;
    b.bad = b.range_bad = *bad;
    return {};
  }));
  BISECTD_TRY_ASSIGN(auto id, m_stores.bisections.add_bisection(b));
  (void)m_stores.bisections.add_event(id, "started (" + std::string(to_string(b.origin)) + "): good " +
                                            base::short_sha(b.good) + ", bad " + base::short_sha(b.bad) + ", metric " +
                                            b.metric);
  spdlog::info("bisection {} started on {}: {}..{}", id, b.tree, base::short_sha(b.good), base::short_sha(b.bad));
  if (m_wake) {
    m_wake();
  }
  return id;
}

bool Driver::still_running(std::int64_t id) {
  auto now = m_stores.bisections.bisection(id);
  return !now || !*now || (*now)->state == BisectionState::running;
}

void Driver::advance_all() {
  auto running = m_stores.bisections.bisections("", BisectionState::running);
  if (!running) {
    spdlog::error("bisections: {}", running.error().message);
    return;
  }
  for (auto& b : *running) {
    auto status = advance(b);
    if (!status && status.error().code == ErrorCode::conflict && !still_running(b.id)) {
      spdlog::info("bisection {}: ended while its step was computed (cancelled): the step is dropped", b.id);
      continue;
    }
    auto failing = m_failing.find(b.id);
    if (!status && (failing == m_failing.end() || failing->second != status.error().message)) {
      spdlog::error("bisection {}: {} (logged again only when it changes)", b.id, status.error().message);
      m_failing[b.id] = status.error().message;
    } else if (status && failing != m_failing.end()) {
      spdlog::info("bisection {}: its step works again", b.id);
      m_failing.erase(failing);
    }
  }
}

Result<std::vector<std::string>> Driver::chain(const storage::BisectionRow& b) {
  auto key = b.range_good + ".." + b.range_bad;
  auto found = m_chains.find(b.id);
  if (found != m_chains.end() && found->second.first == key) {
    return found->second.second;
  }
  std::vector<std::string> chain;
  BISECTD_TRY(m_parts.repos.with_repo(b.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(chain, repo.first_parent_chain(b.range_good, b.range_bad));
    return {};
  }));
  m_chains[b.id] = {key, chain};
  return chain;
}

// The chain's commits (skipped or excluded ones marked) and every sample of the bisection's metric on them.
Status Driver::add_candidates(const Job& job, const storage::BisectionRow& b, const std::vector<std::string>& chain,
                              bisect::Problem& problem, std::int64_t& reused) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    index[chain[i]] = i;
    bisect::Candidate candidate;
    candidate.id = chain[i];
    BISECTD_TRY_ASSIGN(auto flags, m_stores.samples.flags(flag_key(job, chain[i])));
    candidate.skipped = flags.is_skipped();
    if (b.excluded.contains(chain[i])) {
      candidate.prior = 0; // verified implausible: cannot be the change
    }
    problem.chain.push_back(candidate);
  }
  BISECTD_TRY_ASSIGN(auto samples, m_stores.samples.metric_samples(job.name, chain, b.metric));
  BISECTD_TRY_ASSIGN(auto requests, m_stores.queue.requests_for_bisection(b.id));
  std::set<std::int64_t> own;
  for (const auto& r : requests) {
    own.insert(r.id);
  }
  std::set<std::size_t> built;
  reused = 0;
  for (const auto& s : samples) {
    if (s.value > 0) {
      problem.samples.push_back({index[s.commit], s.value, s.boot_id, s.id, s.verification});
      built.insert(index[s.commit]);
      reused += own.contains(s.request_id) ? 0 : 1;
    }
  }
  for (const auto& sha : b.prebuilt) { // built ahead by the prebuilder, not measured yet
    if (index.contains(sha)) {
      built.insert(index[sha]);
    }
  }
  problem.settings.built.assign(built.begin(), built.end());
  for (const auto& r : requests) {
    if (r.is_open() && index.contains(r.commit)) {
      problem.settings.in_flight.push_back(index[r.commit]);
    }
  }
  return {};
}

void Driver::apply_settings(const storage::BisectionRow& b, const Job& job, int open_requests,
                            bisect::Problem& problem) {
  auto& s = problem.settings;
  s.method = job.bisect.method;
  s.direction = job.metrics.direction;
  s.threshold = job.metrics.threshold;
  s.delta = job.bisect.delta;
  s.runs_per_visit = job.runs;
  s.max_runs = job.bisect.max_runs;
  s.max_builds = job.bisect.max_builds;
  s.idle_machines = std::max(0, m_parts.lab.machines_in(job.machine_group) - open_requests);
  s.verification_pairs = job.verify.confirm ? job.verify.pairs : 0;
  m_parts.priors.apply_history(b, job, s);
}

Result<bisect::Problem> Driver::problem_for(const storage::BisectionRow& b, const Job& job,
                                            const std::vector<std::string>& chain, std::int64_t& reused) {
  bisect::Problem problem;
  BISECTD_TRY(add_candidates(job, b, chain, problem, reused));
  apply_settings(b, job, static_cast<int>(problem.settings.in_flight.size()), problem);
  auto dropped = m_parts.priors.apply_relevance(b, job, problem.chain);
  if (dropped > 0 && m_relevance_told.insert({b.id, b.range_good + ".." + b.range_bad}).second) {
    (void)m_stores.bisections.add_event(b.id, std::to_string(dropped) + " of " + std::to_string(chain.size() - 1) +
                                                " commits touch no file the kernel build uses: never built");
  }
  m_parts.equivalence.apply(b, job, problem.chain); // identical builds share samples
  return problem;
}

Result<Driver::StandIns> Driver::stand_ins(const storage::BisectionRow& b, const std::vector<std::string>& chain) {
  auto key = b.merge + ":" + b.range_good + ".." + b.range_bad;
  if (auto found = m_stand_ins.find(b.id); found != m_stand_ins.end() && found->second.key == key) {
    return found->second;
  }
  StandIns s{key, {b.merge}, {}};
  BISECTD_TRY(m_parts.repos.with_repo(b.tree, [&](vcs::Repo& repo) -> Status {
    // The mainline phase named the merge with P >= 1 - delta: it judged every commit of its chain before the merge
    // good and the merge and those after it bad. A merge base off that chain (older than its good end, or inside
    // another merged branch, or a nested merge's) was never judged: no stand-in for it.
    BISECTD_TRY_ASSIGN(auto mainline, repo.first_parent_chain(b.good, b.bad));
    auto merge = std::find(mainline.begin(), mainline.end(), b.merge);
    if (merge == mainline.end()) {
      return {};
    }
    s.tip.assign(merge, mainline.end());
    if (std::find(mainline.begin(), merge, chain.front()) != merge) {
      s.base.assign(mainline.begin(), merge);
    }
    return {};
  }));
  return m_stand_ins[b.id] = s;
}

// The branch's tip is the merge's second parent and, with the regression inside the branch, reads like the merge
// and the mainline after it; the merge base reads like the mainline before the merge. Their samples from the
// mainline phase (its search's and its replication runs) replace new endpoint runs. The tip's stand-ins hold only
// while the tip has no runs of its own: once measured, the tip speaks for itself. None of them is counted again:
// they are the bisection's own runs, or were counted as reused in the mainline phase.
Status Driver::add_merge_evidence(Tick& t) {
  if (t.b.merge.empty() || t.chain.size() < 2) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto s, stand_ins(t.b, t.chain));
  std::size_t tip = t.chain.size() - 1;
  bool tip_measured = std::any_of(t.problem.samples.begin(), t.problem.samples.end(),
                                  [&](const bisect::Sample& x) { return x.commit == tip; });
  auto borrow = [&](const std::vector<std::string>& commits, std::size_t as) -> Result<std::size_t> {
    if (commits.empty()) {
      return std::size_t{0};
    }
    BISECTD_TRY_ASSIGN(auto samples, m_stores.samples.metric_samples(t.job->name, commits, t.b.metric));
    std::size_t added = 0;
    for (const auto& x : samples) {
      if (x.value > 0) { // not verification runs here: the branch's own pairs are taken afresh
        t.problem.samples.push_back({as, x.value, x.boot_id, x.id, false});
        ++added;
      }
    }
    return added;
  };
  BISECTD_TRY(borrow(s.base, 0));
  if (!tip_measured) {
    BISECTD_TRY_ASSIGN(t.borrowed_tip, borrow(s.tip, tip));
  }
  return {};
}

// A merge's own confirm pairs would be paid twice: the search moves into its branch, and the branch's culprit gets
// pairs of its own (a merge that regresses where its branch does not is named after its tip is measured itself).
Result<bool> Driver::branch_verifies(const Tick& t) {
  const auto& picks = t.step.picks;
  bool pairs_next = t.step.verdict == bisect::Verdict::need_runs && !picks.empty() &&
                    std::all_of(picks.begin(), picks.end(), [](const bisect::Pick& p) { return p.verification; });
  if (!pairs_next || !t.step.culprit) {
    return false;
  }
  std::optional<std::pair<std::string, std::string>> range;
  BISECTD_TRY(m_parts.repos.with_repo(t.b.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(range, repo.merged_range(t.chain[*t.step.culprit]));
    return {};
  }));
  return range.has_value();
}

Status Driver::advance(storage::BisectionRow b) {
  BISECTD_TRY_ASSIGN(auto job, m_parts.jobs.get(b.job));
  auto chain_or = chain(b);
  if (!chain_or) {
    return fail(b, chain_or.error().message);
  }
  Tick t{std::move(b), job, *chain_or, {}, {}};
  BISECTD_TRY_ASSIGN(t.problem, problem_for(t.b, *job, t.chain, t.reused));
  if (t.problem.chain.front().skipped || t.problem.chain.back().skipped) {
    return fail(t.b, "an endpoint (good or bad) cannot be built or run; see `bisectctl results`");
  }
  BISECTD_TRY(add_merge_evidence(t));
  t.step = bisect::next_step(t.problem);
  BISECTD_TRY_ASSIGN(bool branch_will_verify, branch_verifies(t));
  if (branch_will_verify) {
    t.problem.settings.verification_pairs = 0;
    t.step = bisect::next_step(t.problem);
  }
  if (t.borrowed_tip > 0 && t.step.verdict == bisect::Verdict::found && t.step.culprit == t.chain.size() - 1) {
    // The tip is named on the mainline's runs alone: it must be measured itself (the merge may regress where the
    // branch alone does not).
    t.problem.samples.resize(t.problem.samples.size() - t.borrowed_tip);
    t.borrowed_tip = 0;
    t.step = bisect::next_step(t.problem);
  }
  t.b.p_culprit = t.step.p_culprit;
  t.b.result_json = result_json(t.chain, t.step, t.problem.settings.threshold);
  BISECTD_TRY(count_cost(t));
  if (m_parts.prebuilder != nullptr) {
    t.b.builds += m_parts.prebuilder->on_step(t.b, job, t.problem, t.step); // prebuilt, not measured yet
  }
  if (t.step.verdict == bisect::Verdict::need_runs) {
    BISECTD_TRY(m_stores.bisections.update_bisection(t.b));
    return enqueue_picks(t);
  }
  if (!t.problem.settings.in_flight.empty()) {
    BISECTD_TRY(m_stores.bisections.update_bisection(t.b));
    return {}; // let the runs in flight land first: they may still change the answer
  }
  return finish(t);
}

Status Driver::count_cost(Tick& t) {
  BISECTD_TRY_ASSIGN(auto cost, m_stores.bisections.bisection_cost(t.b.id));
  t.b.runs = cost.runs;
  t.b.builds = cost.builds;
  t.b.boots = cost.boots;
  t.b.machine_seconds = cost.machine_seconds;
  t.b.runs_reused = t.b.reused_earlier + t.reused;
  return {};
}

Status Driver::enqueue_picks(const Tick& t) {
  const auto& open = t.problem.settings.in_flight;
  std::set<std::size_t> in_flight(open.begin(), open.end());
  for (const auto& pick : t.step.picks) {
    if (in_flight.contains(pick.commit) || pick.runs <= 0) {
      continue;
    }
    auto purpose = pick.verification ? storage::Purpose::verify : storage::Purpose::bisect;
    auto r = make_request(*t.job, t.b.tree, t.chain[pick.commit], purpose, pick.runs);
    r.bisection_id = t.b.id;
    BISECTD_TRY(m_stores.queue.enqueue(r));
    (void)m_stores.bisections.add_event(
      t.b.id, std::string(pick.verification ? "verify " : "test ") + base::short_sha(r.commit) + " x" +
                std::to_string(pick.runs) + " (P(culprit) " + std::to_string(t.step.p_culprit).substr(0, 5) + ")");
  }
  return {};
}

Status Driver::fail(storage::BisectionRow& b, const std::string& why) {
  b.state = BisectionState::failed;
  b.error = why;
  b.finished_at = base::unix_now();
  BISECTD_TRY(m_stores.bisections.update_bisection(b));
  (void)m_stores.bisections.add_event(b.id, "failed: " + why);
  spdlog::warn("bisection {} failed: {}", b.id, why);
  return {};
}

} // namespace bisectd::daemon::bisection
