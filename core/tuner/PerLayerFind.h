// The `per-layer` strategy's first half, like cuDNN's Find: each conv layer's problem is
// run alone, for every algorithm that supports it, through the registry with a
// workspace; forward + backward-data + backward-filter are timed together (median of
// several repetitions) after checking the results against `direct` on the same inputs.
// Layers with the same problem (a ResNet repeats its blocks) are timed once: the later
// ones take the first one's timings and pick.
#pragma once

#include <string>
#include <vector>

#include "core/tuner/SearchSpace.h"

namespace tunescope::tuner {

struct AlgorithmTiming {
  std::string algorithm;
  double median_ms = 0;    // fwd + bwd_data + bwd_filter
  std::string skip_reason;  // empty: timed; else unsupported / wrong / threw
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
  int repetitions = 5;
  double tolerance = 2e-3;  // max |out - direct| <= tolerance * max |direct|, per output
};

// One LayerFind per conv layer of `space` for `layout` with a pool of `threads`. Throws
// Error(runtime) naming the layer when no algorithm passes for it.
std::vector<LayerFind> find_per_layer(const SearchSpace& space, Layout layout, int threads,
                                      const FindOptions& options = {});

}  // namespace tunescope::tuner
