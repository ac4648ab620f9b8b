#include "profiler/analysis/Findings.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "profiler/Metrics.h"
#include "profiler/analysis/WhatIf.h"

namespace tunescope::profiler::analysis {

namespace {

// Kernels that move or reshape data instead of computing: a different layout or
// algorithm often does without them (the seed's padding and broadcast kernels).
bool is_data_movement(const std::string& name) {
  for (const char* word : {"pad", "transpose", "reorder", "broadcast", "nchw", "nhwc"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

bool is_update(const std::string& name) {
  return name == "sgd" || name.find("optimizer") != std::string::npos;
}

std::string config_value(const Trace& trace, const char* key) {
  if (trace.metadata.config.empty()) return {};
  const auto config = nlohmann::json::parse(trace.metadata.config, nullptr, false);
  if (!config.is_object() || !config.contains(key)) return {};
  return config[key].is_string() ? config[key].get<std::string>() : config[key].dump();
}

std::string fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

class Rules {
 public:
  Rules(const Trace& trace, const TraceAnalysis& analysis, const std::optional<MachinePeak>& peak)
      : trace_(trace), a_(analysis), peak_(peak) {
    for (size_t n : a_.recorded.median_path.nodes) on_path_.insert(n);
  }

  // The median step's saving when the nodes `pick` selects take `factor` times as long.
  int64_t replayed_gain(double factor, const std::function<bool(size_t)>& pick) const {
    std::vector<int64_t> durations = recorded_durations(a_.graph);
    for (size_t n = 0; n < durations.size(); ++n)
      if (pick(n)) durations[n] = static_cast<int64_t>(static_cast<double>(durations[n]) * factor);
    return a_.recorded.median_step_ns - predict(trace_, a_, durations).predicted.median_step_ns;
  }

  const std::string& name(size_t n) const { return trace_.activities[a_.graph.activity[n]].name; }

  Finding make(const char* rule, std::string summary, const std::set<std::string>& evidence,
               int64_t gain, bool bound, std::string suggestion) const {
    Finding f;
    f.rule = rule;
    f.summary = std::move(summary);
    f.evidence.assign(evidence.begin(), evidence.end());
    f.window_start_ns = a_.recorded.median_path.start_ns;
    f.window_end_ns = a_.recorded.median_path.end_ns;
    f.gain_ns = gain;
    f.gain_is_bound = bound;
    f.suggestion = std::move(suggestion);
    return f;
  }

  int64_t path_ns(const std::function<bool(size_t)>& pick,
                  std::set<std::string>* names = nullptr) const {
    int64_t total = 0;
    for (size_t n : a_.recorded.median_path.nodes)
      if (pick(n)) {
        total += a_.graph.duration_ns(n);
        if (names) names->insert(name(n));
      }
    return total;
  }

  int64_t bound(Bound b) const { return a_.recorded.median_path.bound_ns[static_cast<size_t>(b)]; }

  std::vector<Finding> run() const {
    std::vector<Finding> out;
    const double step = static_cast<double>(a_.recorded.median_step_ns);
    const auto percent = [&](int64_t ns) {
      return std::to_string(std::lround(100.0 * static_cast<double>(ns) / step)) + " %";
    };

    // Data movement kernels (padding, transposes, reorders, broadcasts).
    std::set<std::string> movers;
    const int64_t moving = path_ns([&](size_t n) { return is_data_movement(name(n)); }, &movers);
    if (moving > 0)
      out.push_back(
          make("data-movement",
               "layout-conversion kernels (padding, transposes, reorders, broadcasts) take " +
                   percent(moving) + " of the median step's critical path",
               movers, replayed_gain(0, [&](size_t n) { return is_data_movement(name(n)); }), false,
               "a layout whose algorithms need no conversion (--layout nhwc | nchw), or a conv "
               "algorithm without padding or reorders (tunescope tune --algorithms ...)"));

    // The weight update on the critical path.
    std::set<std::string> updates;
    const int64_t updating = path_ns([&](size_t n) { return is_update(name(n)); }, &updates);
    if (updating > 0 && config_value(trace_, "async_update") != "true")
      out.push_back(make("update-on-path",
                         "the weight update is on the critical path (" + percent(updating) +
                             " of the median step)",
                         updates, replayed_gain(0, [&](size_t n) { return is_update(name(n)); }),
                         true,
                         "--async-update (overlaps the update with the next step's forward pass) "
                         "and --streams 2"));

    // Serial parameter gradients: one lane, and backward-filter work on the critical path.
    std::set<std::string> filters;
    const int64_t filtering = path_ns(
        [&](size_t n) {
          return name(n).find("bwd_filter") != std::string::npos ||
                 name(n).find("bwd_weight") != std::string::npos;
        },
        &filters);
    if (filtering > 0 && a_.graph.lanes == 1)
      out.push_back(make("no-concurrency",
                         "one lane (0 % concurrency) while parameter gradients, independent of "
                         "backward-data, take " +
                             percent(filtering) + " of the critical path",
                         filters, filtering, true,
                         "--streams 2 (parameter gradients on their own lane) or --replicas"));

    // Host time between steps before the first kernel.
    if (const int64_t wait = bound(Bound::data_wait); wait > 0)
      out.push_back(
          make("input-wait",
               "the step waits " + percent(wait) + " for the host (input pipeline, submission)", {},
               wait, true, "--prefetch (more batches prepared ahead), a faster data source"));

    // Gaps on the lanes of the critical path.
    if (const int64_t idle = bound(Bound::idle) + bound(Bound::synchronisation); idle > 0)
      out.push_back(make("lane-gaps",
                         "lanes on the critical path sit idle or wait on each other for " +
                             percent(idle) + " of the step (scheduling, wake-ups, event latency)",
                         {}, idle, true,
                         "fewer threads than free cores (--threads), fewer lanes; on a shared "
                         "machine, less load"));

    // Launch-bound short kernels.
    if (const int64_t launch = bound(Bound::launch_overhead); launch > 0)
      out.push_back(
          make("launch-bound",
               "launch and host overhead takes " + percent(launch) + " of the critical path", {},
               launch, true, "fewer, larger kernels (a larger batch, fused ops, CUDA graphs)"));

    // Communication on the path (a rank's all-reduce): its time includes the wait for
    // the slowest rank, so a faster kernel is not the remedy.
    std::set<std::string> communication_names;
    for (size_t n : a_.recorded.median_path.nodes)
      if (is_communication(name(n))) communication_names.insert(name(n));
    if (const int64_t communication = bound(Bound::communication); communication > 0)
      out.push_back(make("communication",
                         "communication takes " + percent(communication) +
                             " of the critical path, the wait for the other ranks included",
                         communication_names, communication, true,
                         "overlap the all-reduce with the backward pass (--allreduce-overlap on), "
                         "other bucket sizes (--allreduce-bucket-kb), or balance the ranks (see "
                         "the straggler of the merged trace)"));

    // The heaviest kind of computation on the path: what a 2x faster algorithm would give.
    std::map<WorkKey, int64_t> by_key;
    const auto keys = work_keys(trace_, a_.graph);
    for (size_t n : a_.recorded.median_path.nodes)
      if (!is_communication(name(n))) by_key[keys[n]] += a_.graph.duration_ns(n);
    const auto top =
        std::max_element(by_key.begin(), by_key.end(),
                         [](const auto& x, const auto& y) { return x.second < y.second; });
    if (top != by_key.end() && top->second > 0) {
      const WorkKey key = top->first;
      std::set<std::string> names;
      for (size_t n : a_.recorded.median_path.nodes)
        if (keys[n] == key) names.insert(name(n));
      const std::string what =
          key.layer.empty() || key.layer == key.pass ? key.pass : key.layer + " " + key.pass;
      out.push_back(
          make("heaviest-work",
               what + " takes " + percent(top->second) +
                   " of the critical path; twice as fast would give this",
               names, replayed_gain(0.5, [&](size_t n) { return keys[n] == key; }), false,
               "another algorithm or tile for this layer (tunescope tune), or a faster kernel"));
    }

    if (auto roofline = below_roofline()) out.push_back(std::move(*roofline));

    const int64_t floor = a_.recorded.median_step_ns / 100;
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const Finding& f) { return f.gain_ns < floor || f.gain_ns <= 0; }),
              out.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const Finding& x, const Finding& y) { return x.gain_ns > y.gain_ns; });
    return out;
  }

  // The conv pass furthest below the roof, by the step time reaching kRooflineTarget of
  // the roof would save: effective GFLOP/s (Roofline.h) against the FMA peak, or against
  // intensity x bandwidth where that is lower (a memory-bound pass).
  std::optional<Finding> below_roofline() const {
    if (!peak_ || peak_->fma_gflops <= 0) return std::nullopt;
    std::vector<ConvLayerInfo> layers;
    try {
      layers = conv_layers_of(trace_.metadata);
    } catch (const std::invalid_argument&) {
      return std::nullopt;  // report and profile say what is wrong with the entry
    }
    const auto keys = work_keys(trace_, a_.graph);
    std::optional<Finding> best;
    for (const ConvPassRate& r : conv_pass_rates(trace_, layers)) {
      double roof = peak_->fma_gflops;
      if (r.intensity > 0 && peak_->bandwidth_gbs > 0)
        roof = std::min(roof, r.intensity * peak_->bandwidth_gbs);
      if (r.gflops <= 0 || r.gflops >= kFarBelowRoofline * roof) continue;
      const WorkKey key{r.layer, r.pass};
      std::set<std::string> names;
      for (size_t n : a_.recorded.median_path.nodes)
        if (keys[n] == key) names.insert(name(n));
      if (names.empty()) continue;  // off the critical path: faster would not shorten the step
      const int64_t gain = replayed_gain(r.gflops / (kRooflineTarget * roof),
                                         [&](size_t n) { return keys[n] == key; });
      if (best && gain <= best->gain_ns) continue;
      const bool memory = roof < peak_->fma_gflops;
      best = make("below-roofline",
                  r.layer + " " + r.pass + " (" + r.algorithm + ") runs at " + fixed(r.gflops, 1) +
                      " GFLOP/s, " + fixed(100 * r.gflops / roof, 1) + " % of the " +
                      fixed(roof, 1) + " GFLOP/s its roof allows (" +
                      (memory ? "memory-bound: intensity x bandwidth" : "the measured FMA peak") +
                      "); at " + fixed(100 * kRooflineTarget, 0) + " % of the roof",
                  names, gain, false,
                  "another algorithm for " + r.layer +
                      " (tunescope tune --strategy per-layer), or more threads per lane");
    }
    return best;
  }

 private:
  const Trace& trace_;
  const TraceAnalysis& a_;
  const std::optional<MachinePeak>& peak_;
  std::set<size_t> on_path_;
};

}  // namespace

std::vector<Finding> find_findings(const Trace& trace, const TraceAnalysis& analysis,
                                   const std::optional<MachinePeak>& peak) {
  if (analysis.steps.empty() || analysis.recorded.median_step_ns <= 0) return {};
  return Rules(trace, analysis, peak).run();
}

}  // namespace tunescope::profiler::analysis
