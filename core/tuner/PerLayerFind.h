// The `per-layer` strategy's first half, like cuDNN's Find: each conv layer's problem is
// run alone, for every algorithm that supports it, through the registry with a
// workspace, as a trial of the tuner's one trial runner (measure_layer, TrialRunner.h):
// forward + backward-data + backward-filter are checked against `direct` on the same
// inputs with the error norm and tolerance of whole configs, then timed together, under
// the same isolation, time limit and memory cap.
// Layers with the same problem (a ResNet repeats its blocks) are timed once: the later
// ones take the first one's timings and pick.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tuner/Measurement.h"
#include "core/tuner/SearchSpace.h"

namespace tunescope::tuner {

// Each pass's fastest time (ms) over the find's repetitions.
struct PassTimes {
  double fwd_ms = 0, bwd_data_ms = 0, bwd_filter_ms = 0;
  bool operator==(const PassTimes&) const = default;
};

struct AlgorithmTiming {
  std::string algorithm;
  double median_ms = 0;     // fwd + bwd_data + bwd_filter, timed together
  std::string skip_reason;  // empty: timed; else unsupported / wrong / failed (threw, crashed, over
                            // a limit)
  PassTimes
      passes;  // each pass's fastest run (StepTimePredictor adds only the passes a layer runs)
  bool reused = false;  // taken from a LayerTimingCache, not timed now
  // What the find ranks by: the sum of each pass's fastest run (interference only adds
  // time: under load the median of the five whole runs was up to 3.5x that sum,
  // docs/TUNER-MEASUREMENT.md), or the median when the passes are unknown.
  double score_ms() const;
};

// The fewest timed runs of an algorithm on a layer: the first to time, the second to
// confirm it.
inline constexpr int kFindMinimumRuns = 2;

// An algorithm whose score is within this share of a layer's best is one of the layer's
// close alternatives (LayerFind::close): the find alone cannot tell it from the best, so
// the per-layer strategy races the configs with it in whole-config rounds.
inline constexpr double kFindCloseMargin = 0.25;

// Timings of a conv problem (its key includes the layout) with a pool of `threads`,
// kept across tunes and models (LayerTimingStore.h keeps them in the results DB).
class LayerTimingCache {
 public:
  virtual ~LayerTimingCache() = default;
  // A timing of `algorithm` by a find allowed at least `repetitions` timed runs, if one
  // is kept.
  virtual std::optional<AlgorithmTiming> lookup(const ConvProblem& problem, int threads,
                                                const std::string& algorithm, int repetitions) = 0;
  virtual void store(const ConvProblem& problem, int threads, int repetitions,
                     const AlgorithmTiming& timing) = 0;
  // Called once a find has stored its timings (a store may keep them until then).
  virtual void flush() {}
};

struct LayerFind {
  std::string layer;
  Layout layout = Layout::NCHW;
  int threads = 1;
  std::vector<AlgorithmTiming> timings;
  std::string best;  // fastest timed algorithm (by score_ms)
  // The other timed algorithms within kFindCloseMargin of the best, closest first.
  std::vector<std::string> close;
  std::string
      timed_as;  // empty: timed for this layer; else the earlier layer with the same problem
};

struct FindOptions {
  // Timed runs per algorithm and layer, at most: on a quiet machine the runs stop once one
  // confirms the fastest within +-delta/2 (fastest_confirmed), from kFindMinimumRuns on;
  // on a shared one (MeasureOptions::free_cores > 0) all of them are timed.
  int repetitions = 5;
  // Timings of the same problem, threads and algorithm found before (another model, an
  // earlier tune) are taken from here instead of timed; new ones are stored. Null: none.
  LayerTimingCache* cache = nullptr;
};

// One LayerFind per conv layer of `space` for `layout` with a pool of `threads`, each
// algorithm's trial under `limits` (tolerances, isolate, time_limit_seconds,
// memory_limit_bytes; its step counts and warm-up are the find's). Throws
// Error(runtime) naming the layer when no algorithm passes for it.
std::vector<LayerFind> find_per_layer(const SearchSpace& space, Layout layout, int threads,
                                      const FindOptions& options = {},
                                      const MeasureOptions& limits = {});
// The same at each of `thread_counts` (one vector of finds per count, in that order,
// each count's finds run as above before the next's), each problem's numerics reference
// made once for all of them: it depends on the problem, not on the pool. Throws as
// above, and Error(usage) for an empty list.
std::vector<std::vector<LayerFind>> find_per_layer(const SearchSpace& space, Layout layout,
                                                   const std::vector<int>& thread_counts,
                                                   const FindOptions& options = {},
                                                   const MeasureOptions& limits = {});

}  // namespace tunescope::tuner
