// What-if changes to a trace's activity durations, for the replay (Replay.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/Trace.h"
#include "profiler/analysis/CriticalPath.h"
#include "profiler/analysis/DependencyGraph.h"

namespace tunescope::profiler::analysis {

// `PATTERN=xF`: activities whose whole name matches the glob PATTERN (* and ?) take F
// times as long. F is a finite number in (0, 1000].
struct DurationScale {
  std::string pattern;
  double factor = 1;
};
// Throws std::invalid_argument saying what is wrong with `text`.
DurationScale parse_duration_scale(const std::string& text);
bool glob_match(const std::string& pattern, const std::string& name);

// Applies every scale whose pattern matches a node's name (factors multiply); returns
// how many nodes matched in `matched` when given.
std::vector<int64_t> scaled_durations(const Trace& trace, const DependencyGraph& graph,
                                      const std::vector<int64_t>& durations,
                                      const std::vector<DurationScale>& scales,
                                      size_t* matched = nullptr);

// What an activity does, comparable across configs: the layer range it ran in and its
// pass: for a kernel named `op.pass[.step]` with pass fwd, bwd_data or bwd_filter that
// pass, so that different algorithms' kernels of one layer and pass compare; otherwise
// its name (relu.bwd, sgd, ...). Not the phase: a lane that only computes parameter
// gradients (--streams 2) runs them outside any phase range.
struct WorkKey {
  std::string layer, pass;
  auto operator<=>(const WorkKey&) const = default;
};
// Per node of `graph`.
std::vector<WorkKey> work_keys(const Trace& trace, const DependencyGraph& graph);

// One kind of work whose time the replay took from the other trace, per step (medians).
struct KeyChange {
  WorkKey key;
  double here_ns = 0;      // this trace's busy time of the key
  double other_ns = 0;     // the other's busy time and hand-offs, as recorded there
  double environment = 1;  // the factor from the other's environment to this one's
  double replaced_ns = 0;  // what the replay gives it (0: work the other does not do)
};

struct Substitution {
  std::vector<int64_t> durations;
  std::vector<KeyChange> changes;              // each replaced key, in key order
  size_t keys_replaced = 0, keys_missing = 0;  // keys of the trace found, not found, in the other
  size_t keys_same = 0;    // keys both do with the same activities: kept, and calibrating
  double calibration = 1;  // this trace's time of the same work / the other's
  // The slowdown of work that other lanes' kernels overlapped, per unit of overlap share
  // (0: not told apart, where both traces overlapped the same work alike).
  double overlap_slowdown = 0;
  size_t nodes_replaced = 0;
};
// Durations of the nodes whose work key the other trace does differently (other activity
// names): each such key's time per step in `trace` (the median over `steps`) becomes the
// other trace's (the median over `other_steps`: its busy time and the hand-offs between
// its consecutive activities of the key on one lane) times `calibration`, by scaling its
// nodes alike. `calibration` is this trace's time over the other's for the work both do with
// the same activities (ReLU, pooling, fc...), which keeps this trace's times: it carries
// the difference of environment (one lane alone on the cores against two sharing them).
// Where the traces overlap that same work differently (a one-lane run and a two-lane run
// whose lanes ran side by side), calibration is fitted with the slowdown of overlapped
// work: this trace's time of a key = calibration x the other's x (1 + slowdown x its
// overlapped share here) / (1 + slowdown x its share there), the shares being the part of
// the key's time that kernels of other lanes of its device ran beside it.
// A key the other lacks in a layer it has is work it does not do (0); work only the
// other does is spread over the layer's nodes. With `layers` (globs), only the layers
// whose name matches one of them take the other's times (a per-layer mix of two runs);
// the calibration still reads every layer.
Substitution substituted_durations(const Trace& trace, const DependencyGraph& graph,
                                   const std::vector<Step>& steps, const Trace& other,
                                   const DependencyGraph& other_graph,
                                   const std::vector<Step>& other_steps,
                                   const std::vector<std::string>& layers = {});
// The layer ranges of `trace` (names), for messages about --what-if-layers.
std::vector<std::string> layer_names(const Trace& trace);

}  // namespace tunescope::profiler::analysis
