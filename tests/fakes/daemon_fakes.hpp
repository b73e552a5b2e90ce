#pragma once
// Fakes of the daemon's smaller collaborators (jobs, lab, bisection starter, verifier, reporter, builder), and a
// simulated lab that answers queued requests with samples from a planted step: with tests/fakes' store and
// history, the watcher's and the driver's decisions run without SQLite, git or processes.

#include "daemon/core/bisection_starter.hpp"
#include "daemon/core/job_catalog.hpp"
#include "daemon/core/lab_view.hpp"
#include "daemon/reporting/reporter.hpp"
#include "daemon/verify/verifier.hpp"
#include "fakes/memory_store.hpp"
#include "kbuild/builder.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace bisectd::test {

class FakeJobs final : public daemon::JobCatalog {
public:
  explicit FakeJobs(daemon::Job job) : m_job(std::make_shared<const daemon::Job>(std::move(job))) {}
  Result<std::shared_ptr<const daemon::Job>> get(const std::string& name) override {
    if (name != m_job->name) {
      return make_error(ErrorCode::not_found, "job '" + name + "' not found");
    }
    return m_job;
  }

private:
  std::shared_ptr<const daemon::Job> m_job;
};

class FakeLab final : public daemon::LabView {
public:
  explicit FakeLab(std::vector<daemon::MachineInfo> machines) : m_machines(std::move(machines)) {}
  [[nodiscard]] std::vector<daemon::MachineInfo> machines() const override { return m_machines; }

private:
  std::vector<daemon::MachineInfo> m_machines;
};

class FakeStarter final : public daemon::BisectionStarter {
public:
  Result<std::int64_t> start(const daemon::BisectionStart& start) override {
    started.push_back(start);
    return static_cast<std::int64_t>(started.size());
  }
  std::vector<daemon::BisectionStart> started;
};

// Answers every verification with `answer` (nullopt: runs pending) and counts the calls.
class FakeVerifier final : public daemon::verify::Verifier {
public:
  Result<std::optional<daemon::verify::Verification>> verify(const storage::BisectionRow&, const daemon::Job&,
                                                             const daemon::verify::Suspect& suspect) override {
    ++calls;
    verified.push_back(suspect.culprit.front());
    return answer;
  }
  std::optional<daemon::verify::Verification> answer = daemon::verify::Verification{{"confirm: verified"}};
  int calls = 0;
  std::vector<std::string> verified;
};

class FakeReporter final : public daemon::reporting::Reporter {
public:
  Result<storage::ReportRow> compose(const storage::BisectionRow& b, const daemon::Job&, const storage::TreeRow&,
                                     const daemon::reporting::Conclusion& conclusion) override {
    storage::ReportRow row;
    row.subject = "culprit " + conclusion.culprit_sha;
    row.message_id = "<" + std::to_string(b.id) + "@test>";
    row.text = row.subject;
    conclusions.push_back(conclusion);
    return row;
  }
  std::vector<daemon::reporting::Conclusion> conclusions;
};

// A build that always succeeds (prebuilds and visits of a command recipe in unit tests).
class FakeBuilder final : public kbuild::Builder {
public:
  Result<kbuild::BuildResult> build(const kbuild::BuildRequest& request) override {
    built.push_back(request.commit);
    return kbuild::BuildResult{};
  }
  std::vector<std::string> built;
};

// The simulated lab: every queued request is run at once, each run's value from a sampler; by default
// `level(commit)` times lognormal noise of `sigma`. Each claimed request is one boot of the machine.
class SimulatedLab {
public:
  // The value of run `run` of the visit `boot` made for `request` (the metric "ops").
  using Sampler = std::function<double(const storage::RequestRow& request, int run, const std::string& boot)>;

  SimulatedLab(MemoryStore& store, std::function<double(const std::string& commit)> level, double sigma,
               std::uint32_t seed = 1)
      : m_store(store),
        m_sampler([level = std::move(level), noise = std::normal_distribution<double>(0.0, sigma),
                   random = std::mt19937(seed)](const storage::RequestRow& r, int, const std::string&) mutable {
          return level(r.commit) * std::exp(noise(random));
        }) {}
  SimulatedLab(MemoryStore& store, Sampler sampler) : m_store(store), m_sampler(std::move(sampler)) {}

  // Runs every queued request of `group` on `machine`; returns how many ran.
  int run_queued(const std::string& group, const std::string& machine = "m0");
  int boots() const { return m_boots; }

private:
  MemoryStore& m_store;
  Sampler m_sampler;
  int m_boots = 0;
};

inline int SimulatedLab::run_queued(const std::string& group, const std::string& machine) {
  int ran = 0;
  while (auto claimed = m_store.claim_request(group, machine).value()) {
    std::vector<storage::SampleRow> samples;
    auto boot = machine + "-boot" + std::to_string(++m_boots);
    for (int run = 0; run < claimed->runs; ++run) {
      storage::SampleRow s;
      s.tree = claimed->tree;
      s.job = claimed->job;
      s.commit = claimed->commit;
      s.variant = claimed->variant;
      s.machine = machine;
      s.boot_id = boot;
      s.run = run;
      s.verification = claimed->purpose == storage::Purpose::verify;
      s.metrics["ops"] = m_sampler(*claimed, run, boot);
      samples.push_back(s);
    }
    (void)m_store.finish_request(claimed->id, samples);
    ++ran;
  }
  return ran;
}

// A command-recipe job measuring "ops" (higher is better) on group "local", verification off.
inline daemon::Job bench_job() {
  daemon::Job job;
  job.name = "bench";
  job.machine_group = "local";
  job.runs = 3;
  job.build.command = {"make"};
  job.build.artifacts = {"bench"};
  job.metrics.primary = "ops";
  job.metrics.threshold = 0.05;
  job.bisect.noise = 0.01;
  job.verify.confirm = false;
  job.verify.revert = false;
  job.verify.layout = false;
  return job;
}

} // namespace bisectd::test
