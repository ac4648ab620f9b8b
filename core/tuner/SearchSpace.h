// The candidates of a tune: every combination of layout x threads x conv algorithm
// (one global algorithm, or optionally every per-layer combination) that the registered
// algorithms can run, each crossed with the lists of the other knobs (core/base/Knob.h:
// streams, replicas, ..., in catalog order). A knob that only some conv algorithms read
// (fft_tile, fft_workspace) is crossed only with configs where some layer's algorithm
// says it applies (ConvAlgorithm::knob_applies); elsewhere each value is the same run.
// A combination that cannot run is not dropped silently: it is kept as a skipped
// candidate with the reason, so the results say why it was never timed.
#pragma once

#include <string>
#include <vector>

#include "core/base/ConvProblem.h"
#include "core/engine/Network.h"
#include "core/engine/RunConfig.h"
#include "core/tuner/KnobLists.h"

namespace tunescope::tuner {

// A conv layer of a model and its problem (the layout is set per candidate).
struct ConvLayerInfo {
  std::string name;
  ConvProblem problem;
};

// The conv layers of a built network, in graph order.
std::vector<ConvLayerInfo> conv_layers(const Network& network);

struct SpaceOptions {
  std::string model = "lenet5";
  int64_t batch = 128;
  std::string backend = "cpu";
  std::vector<std::string> algorithms;  // empty: every algorithm registered for the backend
  // false: one algorithm for all conv layers; true: every per-layer combination
  // (the product of each layer's supporting algorithms).
  bool per_layer_product = false;
  // The values tried of each knob; layout and threads are the outer dimensions (the
  // per-layer find runs once per pair). Unlisted knobs stay at their tune default, which
  // keeps a tune single-lane (and short).
  KnobLists knobs;

  std::vector<Layout> layouts() const;
  std::vector<int> threads() const;
};

struct Candidate {
  RunConfig config;
  std::string skip_reason;  // empty: runnable
  bool runnable() const { return skip_reason.empty(); }
};

// Why `config`'s cpu_binding cannot run here: bound, its lanes' threads outnumber the
// CPUs this process may use (cpu_binding_refusal); empty otherwise. The lanes a run adds
// itself (ranks' communication, a host update) are left to the executor's refusal.
std::string binding_refusal(const RunConfig& config);

class SearchSpace {
 public:
  // Throws Error(usage) naming the list flag for a value outside its knob's values, or
  // for an algorithm name not registered for the backend.
  SearchSpace(SpaceOptions options, std::vector<ConvLayerInfo> layers);

  const SpaceOptions& options() const { return options_; }
  const std::vector<ConvLayerInfo>& layers() const { return layers_; }
  // The algorithms considered (the option list, or all registered ones).
  const std::vector<std::string>& algorithms() const { return algorithms_; }

  // Every candidate, runnable or skipped, in a stable order (layout, threads, algorithms,
  // concurrency).
  std::vector<Candidate> enumerate() const;
  // The config with `algorithm` on every conv layer, skipped with a reason when some
  // layer does not support it.
  Candidate global(Layout layout, int threads, const std::string& algorithm) const;
  // A config from one algorithm per conv layer (in layers() order), normalised so the
  // most common algorithm is the default and the rest are overrides (no layers: the
  // backend's default conv algorithm).
  Candidate per_layer(Layout layout, int threads,
                      const std::vector<std::string>& per_layer_algorithms) const;
  // `candidate` once per combination of the lists of the knobs other than layout and
  // threads (the first combination first; an algorithm's knob only where it applies:
  // knob_applies); a split that does not divide the batch or a knob value some layer's
  // algorithm refuses (an fft_tile not larger than its kernel) is kept as skipped with
  // the reason, and a skipped candidate stays skipped.
  std::vector<Candidate> with_knobs(const Candidate& candidate) const;
  // Whether the knob `key` changes how some conv layer of `config` runs: a run-wide
  // knob always, an algorithm's knob where some layer's algorithm says so
  // (ConvAlgorithm::knob_applies).
  bool knob_applies(const RunConfig& config, const std::string& key) const;
  // Empty when `algorithm`, made with `knobs`, runs `layer` in `layout`, else why not.
  std::string unsupported_reason(const ConvLayerInfo& layer, Layout layout,
                                 const std::string& algorithm, const KnobValues& knobs = {}) const;

 private:
  RunConfig base_config(Layout layout, int threads) const;

  SpaceOptions options_;
  std::vector<ConvLayerInfo> layers_;
  std::vector<std::string> algorithms_;
};

}  // namespace tunescope::tuner
