// The series model with lab effects: each sample may name its machine and boot. Before change points are
// judged, boots whose runs scatter far more than the other boots' are dropped (where the commit has another
// boot), each boot contributes its median, and each machine's offset against the reference machine is
// estimated from the commits it measured and their nearest neighbours measured by other machines.

#include "bisect/detect_internal.hpp"
#include "bisect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

namespace bisectd::bisect::detail {

namespace {

constexpr double k_noisy_boot_factor = 4.0;   // 3-run sd above 4x the median sd: ~1e-5 for a Gaussian boot
constexpr int k_offset_neighbours = 4;        // nearest other-machine commits per side used as reference
constexpr std::size_t k_offset_distance = 50; // farthest neighbour (commits) used as reference
constexpr int k_offset_rounds = 3;

struct Boot {
  std::size_t point = 0; // index into the prepared values
  int machine = 0;
  std::vector<double> samples;
  double level = 0, spread = 0;
  bool noisy = false;
};

struct Collected {
  std::vector<std::size_t> origin;
  std::vector<Boot> boots;
  std::vector<std::string> machine_names;
  bool labelled = false; // some sample names a machine
};

bool finite_any(const SeriesPoint& p) {
  return std::any_of(p.samples.begin(), p.samples.end(), [](double v) { return std::isfinite(v); });
}

// Groups the finite samples by boot: a named boot, else one group per (point, machine).
Collected collect(const std::vector<SeriesPoint>& series) {
  Collected out;
  std::map<std::string, int> machine_index;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const SeriesPoint& p = series[i];
    if (!finite_any(p)) {
      continue;
    }
    const std::size_t point = out.origin.size();
    out.origin.push_back(i);
    const bool has_origins = p.origins.size() == p.samples.size();
    // Boots of this point by (machine, boot); an unnamed boot is one group per machine. A boot id seen at two
    // points is two boots: each commit boots its own kernel.
    std::map<std::pair<std::string, std::string>, std::size_t> local;
    for (std::size_t s = 0; s < p.samples.size(); ++s) {
      if (!std::isfinite(p.samples[s])) {
        continue;
      }
      const std::string machine = has_origins ? p.origins[s].machine : std::string();
      const std::string boot = has_origins ? p.origins[s].boot : std::string();
      out.labelled = out.labelled || !machine.empty();
      const auto [m, fresh] = machine_index.emplace(machine, static_cast<int>(machine_index.size()));
      if (fresh) {
        out.machine_names.push_back(machine);
      }
      std::size_t& slot = local[{machine, boot}];
      if (slot == 0) {
        out.boots.push_back(Boot{point, m->second, {}, 0, 0, false});
        slot = out.boots.size(); // stored +1 so that 0 means "none yet"
      }
      out.boots[slot - 1].samples.push_back(p.samples[s]);
    }
  }
  return out;
}

// Each boot's level (its median, or its usual mode's level when the runs have two modes); marks boots whose
// relative run spread exceeds k_noisy_boot_factor times the median spread.
std::size_t mark_noisy_boots(std::vector<Boot>& boots, std::size_t& measurable) {
  std::vector<std::vector<double>> runs;
  for (const Boot& b : boots) {
    runs.push_back(b.samples);
  }
  const RunMixture modes = fit_run_mixture(runs);
  std::vector<double> spreads;
  for (Boot& b : boots) {
    b.level = mixture_level(b.samples, modes);
    if (b.samples.size() >= 2 && b.level != 0.0) {
      b.spread = stddev(b.samples) / std::abs(b.level);
      spreads.push_back(b.spread);
    }
  }
  measurable = spreads.size();
  if (spreads.size() < 10) {
    return 0; // too few boots to say what a normal spread is
  }
  const double typical = median(spreads);
  if (typical <= 0.0) {
    return 0; // quantized runs: most boots repeat one value
  }
  std::size_t noisy = 0;
  for (Boot& b : boots) {
    b.noisy = b.samples.size() >= 2 && b.spread > k_noisy_boot_factor * typical;
    noisy += b.noisy ? 1 : 0;
  }
  return noisy;
}

// Level of each (point, machine): mean of its boots' medians, noisy boots left out where the point has a
// clean boot. raw[point] lists (machine, level) without offsets.
std::vector<std::vector<MachineValue>> machine_levels(const std::vector<Boot>& boots, std::size_t points) {
  std::vector<bool> has_clean(points, false);
  for (const Boot& b : boots) {
    has_clean[b.point] = has_clean[b.point] || !b.noisy;
  }
  std::vector<std::map<int, std::pair<double, int>>> sums(points); // machine -> (sum, count)
  for (const Boot& b : boots) {
    if (b.noisy && has_clean[b.point]) {
      continue;
    }
    auto& [sum, count] = sums[b.point][b.machine];
    sum += b.level;
    ++count;
  }
  std::vector<std::vector<MachineValue>> out(points);
  for (std::size_t i = 0; i < points; ++i) {
    for (const auto& [machine, sc] : sums[i]) {
      out[i].push_back(MachineValue{machine, sc.first / sc.second});
    }
  }
  return out;
}

// Reference level for machine m at point i: median of the offset-corrected levels other machines measured at
// the nearest points (the same point included), up to k_offset_neighbours per side.
bool reference_level(const std::vector<std::vector<MachineValue>>& raw, const std::vector<double>& offset,
                     std::size_t i, int m, double& out) {
  std::vector<double> near;
  const auto add_from = [&](std::size_t j) {
    bool added = false;
    for (const MachineValue& v : raw[j]) {
      if (v.machine != m) {
        near.push_back(v.value + offset[static_cast<std::size_t>(v.machine)]);
        added = true;
      }
    }
    return added;
  };
  add_from(i);
  int found = 0;
  for (std::size_t j = i; j-- > 0 && i - j <= k_offset_distance && found < k_offset_neighbours;) {
    found += add_from(j) ? 1 : 0;
  }
  found = 0;
  for (std::size_t j = i + 1; j < raw.size() && j - i <= k_offset_distance && found < k_offset_neighbours; ++j) {
    found += add_from(j) ? 1 : 0;
  }
  if (near.empty()) {
    return false;
  }
  out = median(near);
  return true;
}

// Offsets that bring each machine to the reference machine's level (Gauss-Seidel over the machines).
std::vector<double> machine_offsets(const std::vector<std::vector<MachineValue>>& raw, int machines, int reference) {
  std::vector<double> offset(static_cast<std::size_t>(machines), 0.0);
  for (int round = 0; round < k_offset_rounds; ++round) {
    for (int m = 0; m < machines; ++m) {
      if (m == reference) {
        continue;
      }
      std::vector<double> evidence;
      for (std::size_t i = 0; i < raw.size(); ++i) {
        for (const MachineValue& v : raw[i]) {
          double ref = 0;
          if (v.machine == m && reference_level(raw, offset, i, m, ref)) {
            evidence.push_back(ref - v.value);
          }
        }
      }
      offset[static_cast<std::size_t>(m)] = evidence.empty() ? 0.0 : median(evidence);
    }
  }
  return offset;
}

std::vector<std::size_t> commits_per_machine(const std::vector<std::vector<MachineValue>>& raw, int machines) {
  std::vector<std::size_t> count(static_cast<std::size_t>(machines), 0);
  for (const auto& point : raw) {
    for (const MachineValue& v : point) {
      ++count[static_cast<std::size_t>(v.machine)];
    }
  }
  return count;
}

PreparedSeries plain(const std::vector<SeriesPoint>& series) {
  PreparedSeries out;
  std::vector<double> finite;
  for (std::size_t i = 0; i < series.size(); ++i) {
    finite.clear();
    std::copy_if(series[i].samples.begin(), series[i].samples.end(), std::back_inserter(finite),
                 [](double v) { return std::isfinite(v); });
    if (!finite.empty()) {
      out.values.push_back(median(finite));
      out.origin.push_back(i);
    }
  }
  out.by_machine.resize(out.values.size());
  return out;
}

} // namespace

PreparedSeries prepare(const std::vector<SeriesPoint>& series, bool lab_model, LabEstimate* lab) {
  if (!lab_model) {
    return plain(series);
  }
  Collected c = collect(series);
  LabEstimate estimate;
  estimate.noisy_boots = mark_noisy_boots(c.boots, estimate.boots);
  std::vector<std::vector<MachineValue>> raw = machine_levels(c.boots, c.origin.size());
  const int machines = static_cast<int>(c.machine_names.size());
  const std::vector<std::size_t> commits = commits_per_machine(raw, machines);
  const int reference = static_cast<int>(std::max_element(commits.begin(), commits.end()) - commits.begin());
  const std::vector<double> offset =
    c.labelled && machines > 1 ? machine_offsets(raw, machines, reference) : std::vector<double>(machines, 0.0);
  PreparedSeries out;
  out.origin = std::move(c.origin);
  out.machines = c.labelled ? machines : 0;
  out.by_machine.resize(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    double sum = 0;
    for (MachineValue v : raw[i]) {
      v.value += offset[static_cast<std::size_t>(v.machine)];
      sum += v.value;
      if (c.labelled) {
        out.by_machine[i].push_back(v);
      }
    }
    out.values.push_back(sum / static_cast<double>(raw[i].size()));
  }
  if (lab != nullptr) {
    if (c.labelled) {
      estimate.machines.push_back(
        {c.machine_names[static_cast<std::size_t>(reference)], 0.0, commits[static_cast<std::size_t>(reference)]});
      for (int m = 0; m < machines; ++m) {
        if (m != reference) {
          estimate.machines.push_back({c.machine_names[static_cast<std::size_t>(m)],
                                       offset[static_cast<std::size_t>(m)], commits[static_cast<std::size_t>(m)]});
        }
      }
    }
    *lab = std::move(estimate);
  }
  return out;
}

} // namespace bisectd::bisect::detail

namespace bisectd::bisect {

LabEstimate estimate_lab(const std::vector<SeriesPoint>& series) {
  LabEstimate out;
  (void)detail::prepare(series, true, &out);
  return out;
}

} // namespace bisectd::bisect
