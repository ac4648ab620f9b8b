// The candidates of a tune: every combination of layout x threads x conv algorithm
// (one global algorithm, or optionally every per-layer combination) that the registered
// algorithms can run, each crossed with the concurrency knobs (streams x replicas x
// micro-batches x async update x threads per lane x where the update runs) and, for
// configs with an FFT layer, with the FFT workspace policies and (where a layer can be
// tiled) the FFT tilings. A combination that cannot run is not dropped silently: it is kept
// as a skipped candidate with the reason, so the results say why it was never timed.
#pragma once

#include <string>
#include <vector>

#include "core/base/ConvOptions.h"
#include "core/base/ConvProblem.h"
#include "core/engine/Network.h"
#include "core/engine/RunConfig.h"

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
  std::vector<Layout> layouts{Layout::NCHW, Layout::NHWC};
  std::vector<std::string> algorithms;  // empty: every algorithm registered for the backend
  std::vector<int> threads{1};
  // false: one algorithm for all conv layers; true: every per-layer combination
  // (the product of each layer's supporting algorithms).
  bool per_layer_product = false;
  // The concurrency knobs; the defaults keep a tune single-lane (and short).
  std::vector<int> streams{1};
  std::vector<int> replicas{1};
  std::vector<int> micro_batches{1};
  std::vector<bool> async_update{false};
  std::vector<int> threads_per_lane{0};  // 0: the candidate's threads shared out over its lanes
  std::vector<UpdateOn> update_on{UpdateOn::device};
  // Tried only on configs where some layer's algorithm keeps spectra (fft-*); other
  // configs run `reuse`, for them the policies are the same run.
  std::vector<FftWorkspace> fft_workspace{FftWorkspace::reuse};
  // Tried only on configs where some layer's algorithm tiles by fft_tile (a stride-1
  // fft-fftw / fft-own layer, ConvAlgorithm::fft_tile_applies); other configs run `auto`.
  std::vector<FftTileChoice> fft_tile{FftTileChoice::automatic()};
};

struct Candidate {
  RunConfig config;
  std::string skip_reason;  // empty: runnable
  bool runnable() const { return skip_reason.empty(); }
};

class SearchSpace {
 public:
  // Throws Error(usage) for empty lists, non-positive threads, streams, replicas or
  // micro-batches, negative threads per lane, or an algorithm name not registered for
  // the backend.
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
  Candidate per_layer(Layout layout, int threads, const std::vector<std::string>& per_layer_algorithms) const;
  // `candidate` once per combination of the concurrency knobs and, when it has an FFT
  // layer, of the FFT workspace policies and tilings (the first combination first); a
  // split that does not divide the batch or a tile size some layer's algorithm refuses
  // (not larger than its kernel) is kept as skipped with the reason, and a skipped
  // candidate stays skipped.
  std::vector<Candidate> with_concurrency(const Candidate& candidate) const;
  // Whether some conv layer of `config` runs an algorithm that keeps its forward
  // spectra under fft_workspace=cache (ConvAlgorithm::saved_bytes > 0).
  bool has_fft_layer(const RunConfig& config) const;
  // Whether the fft_tile knob changes how some conv layer of `config` runs
  // (ConvAlgorithm::fft_tile_applies).
  bool has_tileable_fft_layer(const RunConfig& config) const;
  // Empty when `algorithm`, made with `options`, runs `layer` in `layout`, else why not.
  std::string unsupported_reason(const ConvLayerInfo& layer, Layout layout, const std::string& algorithm,
                                 const ConvOptions& options = {}) const;

 private:
  RunConfig base_config(Layout layout, int threads) const;

  SpaceOptions options_;
  std::vector<ConvLayerInfo> layers_;
  std::vector<std::string> algorithms_;
};

}  // namespace tunescope::tuner
