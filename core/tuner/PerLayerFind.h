// The `per-layer` strategy's first half, like cuDNN's Find: each conv layer's problem is
// run alone, for every algorithm that supports it, through the registry with a
// workspace, as a trial of the tuner's one trial runner (measure_layer, TrialRunner.h):
// forward + backward-data + backward-filter are checked against `direct` on the same
// inputs with the error norm and tolerance of whole configs, then timed together, under
// the same isolation, time limit and memory cap.
// Layers with the same problem (a ResNet repeats its blocks) are timed once: the later
// ones take the first one's timings and pick.
#pragma once

#include <string>
#include <vector>

#include "core/tuner/Measurement.h"
#include "core/tuner/SearchSpace.h"

namespace tunescope::tuner {

struct AlgorithmTiming {
  std::string algorithm;
  double median_ms = 0;    // fwd + bwd_data + bwd_filter
  std::string skip_reason;  // empty: timed; else unsupported / wrong / failed (threw, crashed, over a limit)
};

struct LayerFind {
  std::string layer;
  Layout layout = Layout::NCHW;
  int threads = 1;
  std::vector<AlgorithmTiming> timings;
  std::string best;  // fastest timed algorithm
  std::string timed_as;  // empty: timed for this layer; else the earlier layer with the same problem
};

struct FindOptions {
  int repetitions = 5;  // timed runs per algorithm and layer (a fixed count: the find's cost stays known)
};

// One LayerFind per conv layer of `space` for `layout` with a pool of `threads`, each
// algorithm's trial under `limits` (tolerances, isolate, time_limit_seconds,
// memory_limit_bytes; its step counts and warm-up are the find's). Throws
// Error(runtime) naming the layer when no algorithm passes for it.
std::vector<LayerFind> find_per_layer(const SearchSpace& space, Layout layout, int threads,
                                      const FindOptions& options = {}, const MeasureOptions& limits = {});

}  // namespace tunescope::tuner
