#include "profiler/analysis/WhatIf.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "profiler/analysis/Replay.h"

namespace tunescope::profiler::analysis {

bool glob_match(const std::string& pattern, const std::string& name) {
  // Iterative * backtracking: linear in practice, no recursion on long names.
  size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p, ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

DurationScale parse_duration_scale(const std::string& text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("'" + text + "' is not PATTERN=xF (e.g. 'direct.*=x0.5')");
  const std::string factor = text.substr(eq + 1);
  if (factor.size() < 2 || (factor[0] != 'x' && factor[0] != 'X'))
    throw std::invalid_argument("'" + text + "': the factor '" + factor +
                                "' must be written xF (e.g. x0.5)");
  char* end = nullptr;
  const double f = std::strtod(factor.c_str() + 1, &end);
  if (end != factor.c_str() + factor.size() || !std::isfinite(f) || f <= 0 || f > 1000)
    throw std::invalid_argument("'" + text + "': the factor '" + factor.substr(1) +
                                "' is not a number in (0, 1000]");
  return {text.substr(0, eq), f};
}

std::vector<int64_t> scaled_durations(const Trace& trace, const DependencyGraph& graph,
                                      const std::vector<int64_t>& durations,
                                      const std::vector<DurationScale>& scales, size_t* matched) {
  std::vector<int64_t> out = durations;
  size_t count = 0;
  for (size_t n = 0; n < graph.size(); ++n) {
    const std::string& name = trace.activities[graph.activity[n]].name;
    double factor = 1;
    bool any = false;
    for (const DurationScale& s : scales)
      if (glob_match(s.pattern, name)) factor *= s.factor, any = true;
    if (!any) continue;
    ++count;
    out[n] = std::llround(static_cast<double>(out[n]) * factor);
  }
  if (matched) *matched = count;
  return out;
}

namespace {

std::string pass_of(const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return name;
  const size_t next = name.find('.', dot + 1);
  const std::string pass =
      name.substr(dot + 1, next == std::string::npos ? std::string::npos : next - dot - 1);
  return pass == "fwd" || pass == "bwd_data" || pass == "bwd_filter" ? pass : name;
}

// The name of the innermost range of `category` on the activity's lane containing it.
class Enclosing {
 public:
  Enclosing(const Trace& trace, RangeCategory category) {
    for (const Range& r : trace.ranges)
      if (r.category == category) lanes_[{r.device, r.lane}].push_back(&r);
  }
  std::string name_of(const Activity& a) const {
    const auto lane = lanes_.find({a.device, a.stream});
    if (lane == lanes_.end()) return {};
    const auto& ranges = lane->second;  // by start, enclosing first
    auto it = std::upper_bound(ranges.begin(), ranges.end(), a.start_ns,
                               [](int64_t ns, const Range* r) { return ns < r->start_ns; });
    while (it != ranges.begin()) {
      --it;
      if ((*it)->end_ns >= a.end_ns) return (*it)->name;
      if ((*it)->end_ns < a.start_ns && ranges.size() > 64)
        break;  // ranges of a lane do not overlap much
    }
    return {};
  }

 private:
  std::map<std::pair<int, int>, std::vector<const Range*>> lanes_;
};

}  // namespace

std::vector<WorkKey> work_keys(const Trace& trace, const DependencyGraph& graph) {
  const Enclosing layers(trace, RangeCategory::layer);
  std::vector<WorkKey> keys(graph.size());
  for (size_t n = 0; n < graph.size(); ++n) {
    const Activity& a = trace.activities[graph.activity[n]];
    keys[n] = {layers.name_of(a), pass_of(a.name)};
  }
  return keys;
}

namespace {

// Per work key, the median over the steps of its busy time in a step (a step without it
// counts 0), and of the gaps inside it: between consecutive activities of the key on one
// lane, the hand-offs an algorithm of several kernels (im2col, sgemm, col2im) pays that
// one of a single kernel does not. The median, not the mean: one preempted step of a
// loaded machine, or work outside the steps (warm-up, evaluation), would otherwise move
// every key's time.
struct KeyTime {
  double busy = 0, gaps = 0;
};
std::map<WorkKey, KeyTime> median_per_step(const DependencyGraph& graph,
                                           const std::vector<Step>& steps,
                                           const std::vector<WorkKey>& keys) {
  std::map<WorkKey, std::vector<double>> busy, gaps;
  for (size_t s = 0; s < steps.size(); ++s) {
    std::map<size_t, size_t> last_on_lane;
    for (size_t n : steps[s].nodes) {
      auto& b = busy[keys[n]];
      auto& g = gaps[keys[n]];
      b.resize(steps.size(), 0.0);
      g.resize(steps.size(), 0.0);
      b[s] += static_cast<double>(graph.duration_ns(n));
      const auto last = last_on_lane.find(graph.lane[n]);
      if (last != last_on_lane.end() && keys[last->second] == keys[n])
        g[s] += static_cast<double>(
            std::max<int64_t>(0, graph.start_ns[n] - graph.end_ns[last->second]));
      last_on_lane[graph.lane[n]] = n;
    }
  }
  const auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  };
  std::map<WorkKey, KeyTime> out;
  for (auto& [key, per_step] : busy) out[key] = {median(per_step), median(gaps[key])};
  return out;
}

// Per node, how long other lanes of its device ran kernels while it ran (at most its
// duration): on a CPU the lanes share caches, memory bandwidth and, on a VM, maybe one
// physical core, so a kernel beside another lane's runs slower than alone.
std::vector<int64_t> overlapped_ns(const Trace& trace, const DependencyGraph& graph) {
  std::map<std::pair<int, size_t>, std::vector<size_t>> lanes;  // (device, lane) -> nodes by start
  for (size_t n = 0; n < graph.size(); ++n) {
    const Activity& a = trace.activities[graph.activity[n]];
    if (a.kind == ActivityKind::kernel) lanes[{a.device, graph.lane[n]}].push_back(n);
  }
  std::vector<int64_t> out(graph.size(), 0);
  for (const auto& [lane, nodes] : lanes)
    for (const auto& [other, others] : lanes) {
      if (other.first != lane.first || other.second == lane.second) continue;
      for (size_t n : nodes) {  // a lane's nodes do not nest: their ends grow with their starts
        auto it = std::lower_bound(others.begin(), others.end(), graph.start_ns[n],
                                   [&](size_t x, int64_t ns) { return graph.end_ns[x] <= ns; });
        for (; it != others.end() && graph.start_ns[*it] < graph.end_ns[n]; ++it)
          out[n] += std::min(graph.end_ns[n], graph.end_ns[*it]) -
                    std::max(graph.start_ns[n], graph.start_ns[*it]);
      }
    }
  for (size_t n = 0; n < graph.size(); ++n) out[n] = std::min(out[n], graph.duration_ns(n));
  return out;
}

// Per work key, the share of its time in the steps that other lanes' kernels overlapped.
std::map<WorkKey, double> overlap_share(const Trace& trace, const DependencyGraph& graph,
                                        const std::vector<Step>& steps,
                                        const std::vector<WorkKey>& keys) {
  const std::vector<int64_t> overlapped = overlapped_ns(trace, graph);
  std::map<WorkKey, std::pair<double, double>> sums;  // overlapped, busy
  for (const Step& step : steps)
    for (size_t n : step.nodes) {
      sums[keys[n]].first += static_cast<double>(overlapped[n]);
      sums[keys[n]].second += static_cast<double>(graph.duration_ns(n));
    }
  std::map<WorkKey, double> out;
  for (const auto& [key, sum] : sums) out[key] = sum.second > 0 ? sum.first / sum.second : 0.0;
  return out;
}

// Work both traces do with the same activities: this trace's time (m), the other's (t), and
// the share of each that other lanes overlapped (g here, f there).
struct SameWork {
  double m, t, g, f;
};

// The ratio that most of the time shows: the weighted median of `ratios` (value,
// weight), the first value at which the weights reach half their sum.
double weighted_median(std::vector<std::pair<double, double>> ratios) {
  std::sort(ratios.begin(), ratios.end());
  double total = 0;
  for (const auto& r : ratios) total += r.second;
  double seen = 0;
  for (const auto& [value, weight] : ratios)
    if ((seen += weight) >= total / 2) return value;
  return ratios.empty() ? 1.0 : ratios.back().first;
}

// The environment model fitted on the same work: this trace's time of a key is
// calibration x the other's x (1 + slowdown g) / (1 + slowdown f). calibration: the
// weighted median (by the other's time) of the keys' ratios, not the ratio of their sums:
// a kernel that one state of the machine slows far more than the rest (7x for a fused
// pooling backward whose output lines the other lane's core had read, with the host's
// CPUs far apart, while the conv kernels ran as fast as alone) must not scale every time
// taken from the other. slowdown: by grid search over [0, 2] for the least weighted
// absolute log error (the same robustness); 0 where the overlaps differ too little to
// tell it.
struct EnvironmentFit {
  double calibration = 1, slowdown = 0;
};
EnvironmentFit fit_environment(const std::vector<SameWork>& same) {
  EnvironmentFit best;
  double t = 0, spread = 0;
  for (const SameWork& w : same) t += w.t, spread = std::max(spread, std::abs(w.f - w.g));
  if (t <= 0) return best;
  const auto fit_at = [&](double a, double* error) {
    std::vector<std::pair<double, double>> ratios;
    for (const SameWork& w : same)
      if (w.t > 0 && w.m > 0) ratios.emplace_back(w.m / (w.t * (1 + a * w.g) / (1 + a * w.f)), w.t);
    const double c = weighted_median(ratios);
    if (error) {
      *error = 0;
      for (const auto& [ratio, weight] : ratios) *error += weight * std::abs(std::log(ratio / c));
    }
    return c;
  };
  best.calibration = fit_at(0, nullptr);
  if (spread < 0.1) return best;
  double best_error = -1;
  for (int step = 0; step <= 200; ++step) {
    const double a = step / 100.0;
    double error = 0;
    const double c = fit_at(a, &error);
    if (best_error < 0 || error < best_error - 1e-12) best_error = error, best = {c, a};
  }
  return best;
}

// Per work key, the names of the activities doing it: where both traces name the same
// activities, the work is the same and only its environment differs.
std::map<WorkKey, std::set<std::string>> names_per_key(const Trace& trace,
                                                       const DependencyGraph& graph,
                                                       const std::vector<WorkKey>& keys) {
  std::map<WorkKey, std::set<std::string>> out;
  for (size_t n = 0; n < graph.size(); ++n)
    out[keys[n]].insert(trace.activities[graph.activity[n]].name);
  return out;
}

}  // namespace

Substitution substituted_durations(const Trace& trace, const DependencyGraph& graph,
                                   const std::vector<Step>& steps, const Trace& other,
                                   const DependencyGraph& other_graph,
                                   const std::vector<Step>& other_steps,
                                   const std::vector<std::string>& layers) {
  const auto substituted_layer = [&layers](const std::string& layer) {
    if (layers.empty()) return true;
    return std::any_of(layers.begin(), layers.end(),
                       [&layer](const std::string& glob) { return glob_match(glob, layer); });
  };
  if (steps.empty() || other_steps.empty())
    throw std::invalid_argument("substitution: a trace without steps");
  const auto keys = work_keys(trace, graph);
  const auto other_keys = work_keys(other, other_graph);
  const std::map<WorkKey, KeyTime> mine = median_per_step(graph, steps, keys);
  const std::map<WorkKey, KeyTime> theirs = median_per_step(other_graph, other_steps, other_keys);
  const auto my_names = names_per_key(trace, graph, keys);
  const auto their_names = names_per_key(other, other_graph, other_keys);
  Substitution out;
  // Work both traces do with the same activities keeps this trace's times, and tells how
  // the other trace's environment compares with this one: a run with one lane has the
  // cores to itself, one with two lanes shares them, and every kernel of it runs slower.
  // The other's times of changed work are scaled by that ratio (time-weighted).
  // Where the two traces' lanes overlapped that work differently (one lane here, two
  // there), the overlap's slowdown is fitted too, and each key taken from the other is
  // scaled from the overlap it had there to the one it has here.
  const std::map<WorkKey, double> my_overlap = overlap_share(trace, graph, steps, keys);
  const std::map<WorkKey, double> their_overlap =
      overlap_share(other, other_graph, other_steps, other_keys);
  const auto share = [](const std::map<WorkKey, double>& shares, const WorkKey& key) {
    const auto found = shares.find(key);
    return found == shares.end() ? 0.0 : found->second;
  };
  std::vector<SameWork> same;
  for (const auto& [key, per_step] : mine) {
    const auto found = theirs.find(key);
    if (found == theirs.end() || per_step.busy <= 0 || found->second.busy <= 0) continue;
    if (my_names.at(key) != their_names.at(key)) continue;
    same.push_back(
        {per_step.busy, found->second.busy, share(my_overlap, key), share(their_overlap, key)});
    ++out.keys_same;
  }
  const EnvironmentFit fit = fit_environment(same);
  out.calibration = fit.calibration;
  out.overlap_slowdown = fit.slowdown;
  // The factor from the other's time of `key` to this trace's, with `here` the overlap
  // share it has here.
  const auto environment = [&](const WorkKey& key, double here) {
    return fit.calibration * (1 + fit.slowdown * here) /
           (1 + fit.slowdown * share(their_overlap, key));
  };
  // A layer's overlap share here, for the other's work this trace does not name.
  std::map<std::string, std::pair<double, double>> layer_overlap;  // overlapped, busy
  for (const auto& [key, per_step] : mine) {
    layer_overlap[key.layer].first += share(my_overlap, key) * per_step.busy;
    layer_overlap[key.layer].second += per_step.busy;
  }
  const auto layer_share = [&](const std::string& layer) {
    const auto found = layer_overlap.find(layer);
    return found == layer_overlap.end() || found->second.second <= 0
               ? 0.0
               : found->second.first / found->second.second;
  };
  out.durations = recorded_durations(graph);
  // A key the other trace lacks, in a layer it has, is work it does not do (a padding
  // kernel another algorithm needs no more); work only it does (its own helper
  // kernels) is spread over the nodes of that layer.
  std::map<std::string, double> their_only_per_step;
  std::map<std::string, bool> their_layers;
  for (const auto& [key, per_step] : theirs) {
    their_layers[key.layer] = true;
    if (!mine.count(key) && substituted_layer(key.layer))
      their_only_per_step[key.layer] +=
          (per_step.busy + per_step.gaps) * environment(key, layer_share(key.layer));
  }
  std::map<WorkKey, double> factor;
  for (const auto& [key, per_step] : mine) {
    if (!substituted_layer(key.layer)) continue;
    const auto found = theirs.find(key);
    if (found != theirs.end() && per_step.busy > 0) {
      if (my_names.at(key) == their_names.at(key)) continue;  // the same work: kept
      ++out.keys_replaced;
      // The other's busy time and its gaps, less the gaps this trace keeps between its
      // own activities of the key: the replayed key then takes the other's time.
      const double recorded_there = found->second.busy + found->second.gaps;
      const double env = environment(key, share(my_overlap, key));
      factor[key] = std::max(0.0, recorded_there * env - per_step.gaps) / per_step.busy;
      out.changes.push_back({key, per_step.busy, recorded_there, env, factor[key] * per_step.busy});
    } else if (their_layers.count(key.layer)) {
      ++out.keys_replaced;
      factor[key] = 0;
      out.changes.push_back({key, per_step.busy, 0, 1, 0});
    } else {
      ++out.keys_missing;
    }
  }
  std::map<std::string, double> layer_total;  // the replaced time of each layer, all steps
  for (size_t n = 0; n < graph.size(); ++n) {
    const auto f = factor.find(keys[n]);
    if (f == factor.end()) continue;
    ++out.nodes_replaced;
    out.durations[n] = std::llround(static_cast<double>(out.durations[n]) * f->second);
    layer_total[keys[n].layer] += static_cast<double>(out.durations[n]);
  }
  // The other's own work, per step, goes to this layer's nodes in proportion to their time.
  for (size_t n = 0; n < graph.size(); ++n) {
    const auto extra = their_only_per_step.find(keys[n].layer);
    const double total = layer_total[keys[n].layer] / static_cast<double>(steps.size());
    if (extra == their_only_per_step.end() || total <= 0 || !factor.count(keys[n])) continue;
    out.durations[n] += std::llround(static_cast<double>(out.durations[n]) * extra->second / total);
  }
  return out;
}

std::vector<std::string> layer_names(const Trace& trace) {
  std::set<std::string> names;
  for (const Range& r : trace.ranges)
    if (r.category == RangeCategory::layer) names.insert(r.name);
  return {names.begin(), names.end()};
}

}  // namespace tunescope::profiler::analysis
