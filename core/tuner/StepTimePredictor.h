// Predicts a whole config's training-step time without running it, from two things a
// tune has anyway: the per-layer find's timings (each conv layer, algorithm, pass,
// layout and thread count: PerLayerFind.h) and ONE traced run of a reference config
// (what every step does besides the conv algorithms: the other layers' kernels, the
// update, the gaps between kernels). docs/TUNER-MEASUREMENT.md says how, and
// docs/BENCHMARKS.md how accurate it is.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/RunConfig.h"
#include "core/tuner/PerLayerFind.h"
#include "profiler/Trace.h"

namespace tunescope::tuner {

// What one traced run of the reference config says, per training step: medians over its
// train_step iterations, except non_conv_ms and idle_ms, the least over them.
struct ReferenceProfile {
  Layout layout = Layout::NCHW;
  int threads = 1;
  std::string algorithm;  // the conv algorithm of every conv layer of the reference
  int64_t steps = 0;      // train_step iterations in the trace
  double step_ms = 0;
  double conv_ms = 0;  // the conv algorithm's kernels (`<algorithm>.<pass>[.step]`) in conv layers
  double non_conv_ms = 0;  // every other kernel (bias, activations, pooling, fc, loss, update...)
  double idle_ms = 0;      // step_ms minus its kernels: dispatch, tracing, waits
  // Which passes (fwd, bwd_data, bwd_filter) each conv layer ran (the first conv layer
  // of a net computes no input gradient), and their in-network time per step.
  std::map<std::string, std::array<bool, 3>> passes;
  std::map<std::string, PassTimes> conv_layer_ms;
};

// Reads `trace` (one lane: the reference runs on one) of a run whose every conv layer
// (named in `conv_layers`) ran `algorithm`. Throws Error(input) when the trace has no
// train_step iteration or no kernel of `algorithm` in some conv layer.
ReferenceProfile profile_reference(const profiler::Trace& trace,
                                   const std::vector<std::string>& conv_layers,
                                   const std::string& algorithm, Layout layout, int threads);

struct StepPrediction {
  double step_ms = 0;
  double conv_ms = 0;         // the find's timings of the passes each layer runs
  double non_conv_ms = 0;     // the reference's, scaled to the config's threads
  double idle_ms = 0;         // the reference's
  std::string unpredictable;  // non-empty: why there is no prediction (the other fields 0)
  bool predicted() const { return unpredictable.empty(); }
};

class StepTimePredictor {
 public:
  // `finds`: any number of find_per_layer results (one per layout and thread count).
  StepTimePredictor(ReferenceProfile reference, std::vector<LayerFind> finds);

  // step = sum over conv layers of the find's time of each pass the layer runs with the
  // config's algorithm, layout and threads + the reference's non-conv kernels scaled by
  // how the find's timings of the reference layout scale from the reference's thread
  // count to the config's + the reference's idle time. Unpredictable: a config with a
  // knob other than layout and threads off its default (lanes, a split, an algorithm's
  // knob: the find times none of them), or a layer, layout, thread count or algorithm
  // the finds have no timing of.
  StepPrediction predict(const RunConfig& config) const;

  const ReferenceProfile& reference() const { return reference_; }
  // The non-conv kernels' scale at `threads` (1 at the reference's): the ratio of the
  // find's summed timings, in the reference's layout, at `threads` to those at the
  // reference's threads, over the (layer, algorithm) pairs timed at both; nullopt when
  // there is none.
  std::optional<double> thread_scale(int threads) const;

 private:
  const AlgorithmTiming* timing(const std::string& layer, Layout layout, int threads,
                                const std::string& algorithm) const;
  double layer_ms(const std::string& layer, const AlgorithmTiming& timing) const;

  ReferenceProfile reference_;
  // (layer, layout, threads) -> its find.
  std::map<std::tuple<std::string, Layout, int>, LayerFind> finds_;
};

}  // namespace tunescope::tuner
