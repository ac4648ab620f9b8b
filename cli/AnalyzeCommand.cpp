// `tunescope analyze TRACE`: the critical path of each step and what bounds it, the
// lanes' idle time, and what-if predictions by replaying the trace's dependency graph
// (profiler/analysis). See docs/ANALYZE.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/Commands.h"
#include "cli/MachinePeaks.h"
#include "cli/TopFinding.h"
#include "cli/TraceFileCommands.h"
#include "core/base/Error.h"
#include "profiler/CoreDistanceProbes.h"
#include "profiler/Metrics.h"
#include "profiler/RankMerge.h"
#include "profiler/analysis/Findings.h"
#include "profiler/analysis/StepAnalysis.h"
#include "profiler/analysis/WhatIf.h"

namespace tunescope::cli {

namespace {

namespace an = profiler::analysis;
using nlohmann::json;

struct AnalyzeFlags {
  std::string input;
  std::vector<std::string> what_if;
  std::string what_if_times;
  std::vector<std::string> what_if_layers;
  std::string latency = "recorded";
  std::string durations = "recorded";
  std::string core_waits = "inferred";
  size_t top = 10;
  bool json = false;
  std::string db_path;
};

// The first `most` names, comma-separated, with ", ..." when there are more.
std::string first_of(const std::vector<std::string>& names, size_t most) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > most) out += ", ...";
  return out;
}

// Every --what-if-layers glob must match a layer of the trace: a typo would otherwise
// predict the unchanged step.
void check_layer_globs(const profiler::Trace& trace, const std::vector<std::string>& globs,
                       const std::string& path) {
  const std::vector<std::string> layers = an::layer_names(trace);
  for (const std::string& glob : globs) {
    if (std::any_of(layers.begin(), layers.end(),
                    [&glob](const std::string& l) { return an::glob_match(glob, l); }))
      continue;
    fail(ErrorKind::usage, "--what-if-layers: '", glob, "' matches no layer of ", path,
         " (its layers: ", layers.empty() ? std::string("none") : first_of(layers, 12), ")");
  }
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string rank_suffix(int rank) {
  return rank < 0 ? std::string() : " (rank " + std::to_string(rank) + ")";
}

an::TraceAnalysis analyze_argument(const profiler::Trace& trace, const std::string& path,
                                   const AnalyzeFlags& flags) {
  an::TraceAnalysis analysis;
  try {
    analysis = an::analyze(
        trace, flags.core_waits == "none" ? an::CoreWaits::none : an::CoreWaits::inferred);
  } catch (const std::invalid_argument& e) {
    fail(ErrorKind::input, path, ": ", e.what());
  }
  if (analysis.graph.lanes > 1 && analysis.graph.cross_lane_edges() == 0)
    fail(ErrorKind::input, path, ": no dependencies between its ", analysis.graph.lanes,
         " lanes (no flows, no launch correlations), so what waited for what is unknown; record "
         "the trace with "
         "`tunescope profile` (which stores the executor's dependencies), or export PyTorch/nsys "
         "traces with "
         "their CUDA runtime calls");
  return analysis;
}

// The kinds of work the replay took from the other trace, the largest changes first (at
// most `top`; 0: all): per step, this trace's time -> the replayed one, and the other's.
void print_work_replaced(const json& changes, size_t top) {
  std::vector<const json*> rows;
  for (const json& c : changes) rows.push_back(&c);
  const auto change = [](const json* c) {
    return std::abs(c->at("replayed_ms").get<double>() - c->at("here_ms").get<double>());
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const json* a, const json* b) { return change(a) > change(b); });
  if (top > 0 && rows.size() > top) rows.resize(top);
  std::printf(
      "\n  work replaced, per step (this trace's ms -> replayed ms; the other's ms x its "
      "environment factor):\n");
  for (const json* c : rows)
    std::printf("    %-14s %-10s %8.3f -> %8.3f  (%.3f x%.3f)\n",
                c->at("layer").get<std::string>().c_str(), c->at("pass").get<std::string>().c_str(),
                c->at("here_ms").get<double>(), c->at("replayed_ms").get<double>(),
                c->at("other_ms").get<double>(), c->at("environment").get<double>());
}

json bounds_json(const std::array<int64_t, an::kBoundCount>& bound_ns) {
  json out = json::object();
  for (size_t b = 0; b < an::kBoundCount; ++b)
    out[an::to_string(static_cast<an::Bound>(b))] = ms(bound_ns[b]);
  return out;
}

void print_bounds(const std::array<int64_t, an::kBoundCount>& bound_ns) {
  int64_t total = 0;
  for (int64_t ns : bound_ns) total += ns;
  for (size_t b = 0; b < an::kBoundCount; ++b)
    std::printf(
        "  %-22s %10.3f ms %6.1f %%\n", an::to_string(static_cast<an::Bound>(b)), ms(bound_ns[b]),
        total > 0 ? 100.0 * static_cast<double>(bound_ns[b]) / static_cast<double>(total) : 0.0);
}

// The critical path's activities grouped by name, longest total first.
struct PathEntry {
  std::string name;
  int device = 0, stream = 0;
  int64_t total_ns = 0;
  size_t count = 0;
};
std::vector<PathEntry> path_entries(const profiler::Trace& trace, const an::DependencyGraph& graph,
                                    const an::CriticalPath& path,
                                    const std::vector<int64_t>& durations) {
  std::map<std::tuple<std::string, int, int>, PathEntry> by_name;
  for (size_t node : path.nodes) {
    const profiler::Activity& a = trace.activities[graph.activity[node]];
    PathEntry& e = by_name[{a.name, a.device, a.stream}];
    e.name = a.name, e.device = a.device, e.stream = a.stream;
    e.total_ns += durations[node];
    ++e.count;
  }
  std::vector<PathEntry> out;
  for (auto& [key, e] : by_name) out.push_back(e);
  std::sort(out.begin(), out.end(),
            [](const PathEntry& a, const PathEntry& b) { return a.total_ns > b.total_ns; });
  return out;
}

json path_json(const std::vector<PathEntry>& entries, size_t top) {
  json out = json::array();
  for (size_t i = 0; i < entries.size() && (top == 0 || i < top); ++i)
    out.push_back({{"name", entries[i].name},
                   {"device", entries[i].device},
                   {"stream", entries[i].stream},
                   {"total_ms", ms(entries[i].total_ns)},
                   {"count", entries[i].count}});
  return out;
}

void print_path(const std::vector<PathEntry>& entries, size_t top) {
  std::printf("  %-40s %6s %10s %6s\n", "activity", "lane", "total ms", "count");
  for (size_t i = 0; i < entries.size() && (top == 0 || i < top); ++i)
    std::printf("  %-40.40s %6d %10.3f %6zu\n", entries[i].name.c_str(), entries[i].stream,
                ms(entries[i].total_ns), entries[i].count);
}

std::vector<an::DurationScale> parse_scales(const std::vector<std::string>& texts) {
  std::vector<an::DurationScale> scales;
  for (const std::string& text : texts) {
    try {
      scales.push_back(an::parse_duration_scale(text));
    } catch (const std::invalid_argument& e) {
      fail(ErrorKind::usage, "--what-if ", e.what());
    }
  }
  return scales;
}

// The analysis of one process's records (a whole single-process trace, or one rank of a
// merged one; rank -1 for the former): printed unless --json, and returned as JSON.
json analyze_process(const profiler::Trace& trace, int rank, const AnalyzeFlags& flags,
                     const std::vector<an::DurationScale>& scales,
                     const profiler::Trace* other_trace) {
  const an::TraceAnalysis analysis =
      analyze_argument(trace, flags.input + rank_suffix(rank), flags);
  const an::DependencyGraph& graph = analysis.graph;
  const auto recorded = an::recorded_durations(graph);

  json out;
  out["trace"] = flags.input;
  if (rank >= 0) out["rank"] = rank;
  out["graph"] = {{"activities", graph.size()},         {"lanes", graph.lanes},
                  {"flows_bound", graph.flows_bound},   {"flows_unbound", graph.flows_unbound},
                  {"launch_edges", graph.launch_edges}, {"core_edges", graph.core_edges}};
  out["steps"] = analysis.steps.size();
  out["one_core_steps"] = analysis.one_core_steps;
  out["bound_apart_steps"] = analysis.bound_apart_steps;
  out["median_step_ms"] = ms(analysis.recorded.median_step_ns);
  out["critical_path"] = bounds_json(analysis.recorded.bound_ns);
  const auto median_entries = path_entries(trace, graph, analysis.recorded.median_path, recorded);
  out["median_step_path"] = path_json(median_entries, flags.top);
  json idle = json::array();
  for (const an::LaneIdle& l : analysis.idle)
    idle.push_back({{"device", l.device},
                    {"stream", l.stream},
                    {"busy_ms", ms(l.busy_ns)},
                    {"host_wait_ms", ms(l.host_wait_ns)},
                    {"kernel_wait_ms", ms(l.kernel_wait_ns)},
                    {"other_ms", ms(l.other_ns)}});
  out["idle"] = idle;
  const PeakLookup peak = trace_peak(trace.metadata, flags.db_path);
  if (peak.peak)
    out["machine_peak"] = {{"fma_gflops", peak.peak->fma_gflops},
                           {"bandwidth_gbs", peak.peak->bandwidth_gbs},
                           {"isa", peak.peak->isa},
                           {"threads", peak.peak->threads}};
  else
    out["roofline_rule_off"] = peak.why_not_measured;
  const std::vector<an::Finding> findings = an::find_findings(trace, analysis, peak.peak);
  json findings_json = json::array();
  for (const an::Finding& f : findings)
    findings_json.push_back({{"rule", f.rule},
                             {"summary", f.summary},
                             {"evidence", f.evidence},
                             {"window_ms",
                              {ms(f.window_start_ns - graph.start_ns.front()),
                               ms(f.window_end_ns - graph.start_ns.front())}},
                             {"gain_ms", ms(f.gain_ns)},
                             {"gain_is_upper_bound", f.gain_is_bound},
                             {"suggestion", f.suggestion}});
  out["findings"] = findings_json;
  const std::optional<profiler::CoreDistanceWatch> cores = profiler::core_distance_of(trace);
  out["core_distance"] = cores ? profiler::core_distance_to_json(*cores) : json(nullptr);

  if (!flags.json) {
    if (rank < 0) std::printf("trace: %s\n", flags.input.c_str());
    std::printf(
        "graph: %zu activities on %zu lanes; %zu flows bound (%zu unbound), %zu launch "
        "correlations, %zu waits for a core another lane held\n",
        graph.size(), graph.lanes, graph.flows_bound, graph.flows_unbound, graph.launch_edges,
        graph.core_edges);
    std::printf("steps: %zu, median %.3f ms", analysis.steps.size(),
                ms(analysis.recorded.median_step_ns));
    if (analysis.one_core_steps > 0)
      std::printf("; lanes shared one core in %zu of them", analysis.one_core_steps);
    if (analysis.bound_apart_steps > 0)
      std::printf("; lanes bound to CPUs of their own (cpu_binding), no core waits");
    std::printf("\n");
    if (cores) std::printf("cores: %s\n", cores->describe("run").c_str());
    std::printf("\n");
    std::printf("critical path, summed over the steps:\n");
    print_bounds(analysis.recorded.bound_ns);
    std::printf(
        "\ncritical path of the median step (%s, %.3f ms):\n",
        analysis.steps.empty() ? "-" : analysis.steps[analysis.recorded.median_step].name.c_str(),
        ms(analysis.recorded.median_step_ns));
    print_path(median_entries, flags.top);
    std::printf("\nidle time by lane, summed over the steps (ms):\n");
    std::printf("  %6s %6s %10s %10s %12s %10s\n", "device", "lane", "busy", "host wait",
                "kernel wait", "other");
    for (const an::LaneIdle& l : analysis.idle)
      std::printf("  %6d %6d %10.3f %10.3f %12.3f %10.3f\n", l.device, l.stream, ms(l.busy_ns),
                  ms(l.host_wait_ns), ms(l.kernel_wait_ns), ms(l.other_ns));
    std::printf("\nfindings, by estimated gain on the median step:\n");
    if (!peak.peak) std::printf("  (roofline rule off: %s)\n", peak.why_not_measured.c_str());
    if (findings.empty()) std::printf("  none above 1 %% of the step\n");
    for (size_t i = 0; i < findings.size(); ++i) {
      const an::Finding& f = findings[i];
      std::printf("  %zu. [%s] %s\n     %s\n", i + 1, f.rule.c_str(), f.summary.c_str(),
                  finding_gain_text(f, analysis.recorded.median_step_ns).c_str());
      if (!f.evidence.empty()) {
        std::printf("     evidence: %s\n", first_of(f.evidence, 6).c_str());
      }
      std::printf("     try: %s\n", f.suggestion.c_str());
    }
  }

  if (!scales.empty() || !flags.what_if_times.empty()) {
    std::vector<int64_t> durations = recorded;
    json what_if;
    std::optional<profiler::CoreDistanceWatch> other_cores;
    if (!flags.what_if_times.empty()) {
      const profiler::Trace& other = *other_trace;
      const an::TraceAnalysis other_analysis =
          analyze_argument(other, flags.what_if_times + rank_suffix(rank), flags);
      const an::Substitution s =
          an::substituted_durations(trace, graph, analysis.steps, other, other_analysis.graph,
                                    other_analysis.steps, flags.what_if_layers);
      durations = s.durations;
      what_if["times_from"] = flags.what_if_times;
      if (!flags.what_if_layers.empty()) what_if["layers"] = flags.what_if_layers;
      what_if["work_kinds_replaced"] = s.keys_replaced;
      what_if["work_kinds_not_in_other"] = s.keys_missing;
      what_if["work_kinds_kept"] = s.keys_same;
      what_if["environment_calibration"] = s.calibration;
      what_if["overlap_slowdown"] = s.overlap_slowdown;
      what_if["activities_replaced"] = s.nodes_replaced;
      json changes = json::array();
      for (const an::KeyChange& c : s.changes)
        changes.push_back({{"layer", c.key.layer},
                           {"pass", c.key.pass},
                           {"here_ms", c.here_ns / 1e6},
                           {"other_ms", c.other_ns / 1e6},
                           {"environment", c.environment},
                           {"replayed_ms", c.replaced_ns / 1e6}});
      what_if["work_replaced"] = changes;
      // Traces taken with the host's CPUs near and far apart are of two machine states: the
      // other's kernel times carry its state into the prediction.
      other_cores = profiler::core_distance_of(other);
      what_if["other_core_distance"] =
          other_cores ? profiler::core_distance_to_json(*other_cores) : json(nullptr);
      what_if["core_states_differ"] =
          cores && other_cores ? json(profiler::different_core_states(*cores, *other_cores))
                               : json(nullptr);
    }
    size_t matched = 0;
    durations = an::scaled_durations(trace, graph, durations, scales, &matched);
    what_if["scaled_activities"] = matched;
    const an::Latency latency =
        flags.latency == "typical" ? an::Latency::typical : an::Latency::recorded;
    const an::Prediction p = an::predict(
        trace, analysis, durations, latency,
        flags.durations == "typical" ? an::Durations::typical : an::Durations::as_given);
    what_if["latency"] = flags.latency;
    what_if["core_waits"] = flags.core_waits;
    what_if["durations"] = flags.durations;
    what_if["replay_check_median_step_ms"] = ms(p.replay_check.median_step_ns);
    what_if["predicted_median_step_ms"] = ms(p.predicted.median_step_ns);
    what_if["change_percent"] = analysis.recorded.median_step_ns > 0
                                    ? 100.0 *
                                          static_cast<double>(p.predicted.median_step_ns -
                                                              analysis.recorded.median_step_ns) /
                                          static_cast<double>(analysis.recorded.median_step_ns)
                                    : 0.0;
    what_if["critical_path"] = bounds_json(p.predicted.bound_ns);
    const auto entries = path_entries(trace, graph, p.predicted.median_path, durations);
    what_if["median_step_path"] = path_json(entries, flags.top);
    out["what_if"] = what_if;
    if (!flags.json) {
      std::printf("\nwhat-if:");
      for (const std::string& text : flags.what_if) std::printf(" %s", text.c_str());
      if (!scales.empty()) std::printf(" (%zu activities scaled)", matched);
      if (!flags.what_if_times.empty())
        std::printf(
            "%s times of %s (%zu kinds of work replaced, %zu not in it, %zu the same and kept; "
            "its times x%.3f for this run's environment)",
            scales.empty() ? "" : ";", flags.what_if_times.c_str(),
            what_if["work_kinds_replaced"].get<size_t>(),
            what_if["work_kinds_not_in_other"].get<size_t>(),
            what_if["work_kinds_kept"].get<size_t>(),
            what_if["environment_calibration"].get<double>());
      if (!flags.what_if_times.empty()) print_work_replaced(what_if["work_replaced"], flags.top);
      std::printf(
          "\n  replay of the recorded times (%s latencies, %s durations): median step %.3f ms "
          "(recorded %.3f ms)\n",
          flags.latency.c_str(), flags.durations.c_str(), ms(p.replay_check.median_step_ns),
          ms(analysis.recorded.median_step_ns));
      std::printf("  predicted median step: %.3f ms (%+.1f %%)\n", ms(p.predicted.median_step_ns),
                  what_if["change_percent"].get<double>());
      // A run whose lanes get a core each runs the same kernels much faster than one whose
      // lanes share one: the prediction is for the state this trace ran in.
      if (analysis.one_core_steps > 0)
        std::printf(
            "  note: this trace's lanes shared one core in %zu of %zu steps; the prediction "
            "is for a run in that state\n",
            analysis.one_core_steps, analysis.steps.size());
      if (cores && other_cores && profiler::different_core_states(*cores, *other_cores))
        std::printf(
            "  note: the host had CPUs %d and %d %s apart in this trace and %s in %s's: two "
            "machine states; the prediction carries that difference (profile both again)\n",
            cores->cpu_a, cores->cpu_b, cores->range_text().c_str(),
            other_cores->range_text().c_str(), flags.what_if_times.c_str());
      std::printf("\npredicted critical path, summed over the steps:\n");
      print_bounds(p.predicted.bound_ns);
      std::printf("\npredicted critical path of the median step:\n");
      print_path(entries, flags.top);
    }
  }
  return out;
}

// A merged trace of several ranks: each rank analysed on its own (its lanes, steps and
// critical path), after a table of the ranks with the straggler.
void analyze_ranks(const profiler::Trace& trace, const AnalyzeFlags& flags,
                   const std::vector<an::DurationScale>& scales,
                   const profiler::Trace* other_trace) {
  const std::vector<int> ranks = profiler::ranks_of(trace);
  std::vector<profiler::Trace> other_parts;
  json per_rank = json::array();
  if (!flags.json)
    std::printf("trace: %s (%zu ranks, each analysed on its own)\n", flags.input.c_str(),
                ranks.size());
  std::vector<std::pair<int, json>> results;
  for (const int rank : ranks) {
    const profiler::Trace* other = other_trace;
    std::optional<profiler::Trace> other_part;
    if (other_trace && profiler::has_ranks(*other_trace)) {
      other_part = profiler::rank_part(*other_trace, rank);
      if (other_part->activities.empty())
        fail(ErrorKind::input, flags.what_if_times, ": has no records of rank ", rank, " of ",
             flags.input);
      other = &*other_part;
    }
    if (!flags.json) std::printf("\n=== rank %d ===\n", rank);
    results.emplace_back(
        rank, analyze_process(profiler::rank_part(trace, rank), rank, flags, scales, other));
  }
  // The straggler as the report defines it: the rank with the most compute, which the
  // others wait for in the all-reduce.
  const profiler::RankBalance balance = profiler::rank_balance(trace);
  const double excess_ms = ms(balance.straggler_excess_ns);
  if (flags.json) {
    json out;
    out["trace"] = flags.input;
    for (auto& [rank, result] : results) per_rank.push_back(result);
    out["ranks"] = per_rank;
    out["straggler"] = {{"rank", balance.straggler},
                        {"fastest_rank", balance.fastest},
                        {"compute_excess_ms", excess_ms},
                        {"compute_excess_percent", balance.straggler_excess_pct}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("\nranks, side by side (critical path shares summed over each rank's steps):\n");
  std::printf("  %4s %6s %10s %9s %9s %9s %9s\n", "rank", "steps", "median ms", "compute", "comm",
              "sync", "idle");
  for (const auto& [rank, result] : results) {
    const json& bounds = result["critical_path"];
    double total = 0;
    for (const auto& [name, value] : bounds.items()) total += value.get<double>();
    auto share = [&](const char* bound) {
      return total > 0 ? 100.0 * bounds[bound].get<double>() / total : 0.0;
    };
    std::printf(
        "  %4d %6zu %10.3f %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n", rank, result["steps"].get<size_t>(),
        result["median_step_ms"].get<double>(), share(an::to_string(an::Bound::compute)),
        share(an::to_string(an::Bound::communication)),
        share(an::to_string(an::Bound::synchronisation)), share(an::to_string(an::Bound::idle)));
  }
  std::printf(
      "straggler: rank %d, %.3f ms (%.1f %%) more compute than rank %d; the others wait for it "
      "in the all-reduce\n",
      balance.straggler, excess_ms, balance.straggler_excess_pct, balance.fastest);
}

}  // namespace

Action add_analyze_command(CLI::App& command) {
  auto flags = std::make_shared<AnalyzeFlags>();
  command
      .add_option(
          "trace", flags->input,
          "Trace to analyse: tunescope or PyTorch-profiler JSON (.json/.json.gz), nsys SQLite")
      ->required();
  command.add_option("--what-if", flags->what_if,
                     "PATTERN=xF: activities whose name matches the glob PATTERN take F times as "
                     "long (repeatable)");
  command.add_option(
      "--what-if-times", flags->what_if_times,
      "Take each layer and pass's kernel time per step from this other trace (e.g. another "
      "algorithm's run)");
  command.add_option("--what-if-layers", flags->what_if_layers,
                     "With --what-if-times: only the layers whose name matches one of these "
                     "globs take the other trace's times (e.g. conv1: a per-layer mix; "
                     "repeatable)");
  command
      .add_option(
          "--latency", flags->latency,
          "Replay latencies between dependent activities: recorded (each as in the trace) | "
          "typical "
          "(the median over the same activity in every step: less of one run's preemptions)")
      ->check(CLI::IsMember({"recorded", "typical"}))
      ->capture_default_str();
  command
      .add_option("--durations", flags->durations,
                  "Replay durations of the activities not changed by a what-if: recorded (each "
                  "step as it ran) | typical (the median over the same activity in every step)")
      ->check(CLI::IsMember({"recorded", "typical"}))
      ->capture_default_str();
  command
      .add_option("--core-waits", flags->core_waits,
                  "Waits for a core another lane held, which the trace shows but does not "
                  "record: inferred (edges in the graph, so the replay keeps them) | none")
      ->check(CLI::IsMember({"inferred", "none"}))
      ->capture_default_str();
  command.add_option("--top", flags->top, "Activities of the critical path to list (0: all)")
      ->check(CLI::Range(size_t{0}, size_t{100000}))
      ->capture_default_str();
  command.add_flag("--json", flags->json, "Print JSON instead of text");
  command.add_option("--db", flags->db_path,
                     "Results DB holding the machine's measured peaks (tunescope machine --db): "
                     "enables the roofline finding");

  return [flags] {
    // Options first: a malformed --what-if is refused before any file is read.
    const std::vector<an::DurationScale> scales = parse_scales(flags->what_if);
    if (!flags->what_if_layers.empty() && flags->what_if_times.empty())
      fail(ErrorKind::usage,
           "--what-if-layers: needs --what-if-times (the trace whose times "
           "those layers take)");
    const profiler::Trace trace = read_trace_argument(flags->input);
    std::optional<profiler::Trace> other;
    if (!flags->what_if_times.empty()) other = read_trace_argument(flags->what_if_times);
    check_layer_globs(trace, flags->what_if_layers, flags->input);
    if (!profiler::has_ranks(trace)) {
      const json out = analyze_process(trace, -1, *flags, scales, other ? &*other : nullptr);
      if (flags->json) std::printf("%s\n", out.dump(2).c_str());
      return;
    }
    analyze_ranks(trace, *flags, scales, other ? &*other : nullptr);
  };
}

}  // namespace tunescope::cli
