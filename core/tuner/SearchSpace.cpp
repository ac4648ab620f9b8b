// Enumeration of the tuning space; support is asked of each algorithm for each layer's
// problem in the candidate's layout (ConvAlgorithm::unsupported_reason).
#include "core/tuner/SearchSpace.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/layers/Conv2dLayer.h"

namespace tunescope::tuner {

std::vector<ConvLayerInfo> conv_layers(const Network& network) {
  std::vector<ConvLayerInfo> layers;
  for (int node = 1; node <= network.layer_count(); ++node)
    if (const auto* conv = dynamic_cast<const Conv2dLayer*>(&network.layer(node)))
      layers.push_back({conv->name(), conv->problem()});
  return layers;
}

SearchSpace::SearchSpace(SpaceOptions options, std::vector<ConvLayerInfo> layers)
    : options_(std::move(options)), layers_(std::move(layers)) {
  if (options_.layouts.empty()) fail(ErrorKind::usage, "--layouts: the list is empty");
  if (options_.threads.empty()) fail(ErrorKind::usage, "--threads-list: the list is empty");
  for (int t : options_.threads)
    if (t < 1) fail(ErrorKind::usage, "--threads-list: thread counts must be >= 1, got ", t);
  if (options_.batch < 1) fail(ErrorKind::usage, "--batch must be >= 1, got ", options_.batch);
  auto check_list = [](const std::vector<int>& list, const char* flag, int minimum) {
    if (list.empty()) fail(ErrorKind::usage, flag, ": the list is empty");
    for (int value : list)
      if (value < minimum) fail(ErrorKind::usage, flag, ": values must be >= ", minimum, ", got ", value);
  };
  check_list(options_.streams, "--streams-list", 1);
  check_list(options_.replicas, "--replicas-list", 1);
  check_list(options_.micro_batches, "--micro-batches-list", 1);
  check_list(options_.threads_per_lane, "--threads-per-lane-list", 0);
  if (options_.async_update.empty()) fail(ErrorKind::usage, "--async-update-list: the list is empty");
  if (options_.update_on.empty()) fail(ErrorKind::usage, "--update-on-list: the list is empty");
  if (options_.fft_workspace.empty()) fail(ErrorKind::usage, "--fft-workspace-list: the list is empty");
  if (options_.fft_tile.empty()) fail(ErrorKind::usage, "--fft-tile-list: the list is empty");
  const auto registered = Registry::instance().conv_algorithms(options_.backend);
  algorithms_ = options_.algorithms.empty() ? registered : options_.algorithms;
  if (algorithms_.empty()) fail(ErrorKind::usage, "backend ", options_.backend, " has no conv algorithms");
  for (const auto& name : algorithms_)
    Registry::instance().make_conv_algorithm(options_.backend, name);  // throws Error(usage) naming it
}

std::string SearchSpace::unsupported_reason(const ConvLayerInfo& layer, Layout layout, const std::string& algorithm,
                                            const ConvOptions& options) const {
  ConvProblem problem = layer.problem;
  problem.layout = layout;
  const auto instance = Registry::instance().make_conv_algorithm(options_.backend, algorithm, options);
  if (std::string why = instance->unsupported_reason(problem); !why.empty())
    return cat("layer ", layer.name, ": ", algorithm, " does not support ", problem.key(), ": ", why);
  return {};
}

RunConfig SearchSpace::base_config(Layout layout, int threads) const {
  RunConfig config;
  config.model = options_.model;
  config.batch = options_.batch;
  config.layout = layout;
  config.threads = threads;
  return config;
}

Candidate SearchSpace::global(Layout layout, int threads, const std::string& algorithm) const {
  Candidate candidate{base_config(layout, threads), {}};
  candidate.config.conv.default_algorithm = algorithm;
  for (const auto& layer : layers_)
    if (candidate.skip_reason = unsupported_reason(layer, layout, algorithm); !candidate.skip_reason.empty()) break;
  return candidate;
}

Candidate SearchSpace::per_layer(Layout layout, int threads, const std::vector<std::string>& chosen) const {
  if (chosen.size() != layers_.size())
    fail(ErrorKind::runtime, "per-layer choice names ", chosen.size(), " algorithms for ", layers_.size(), " conv layers");
  Candidate candidate{base_config(layout, threads), {}};
  // The most used algorithm becomes the default (ties: the earliest layer's), so equal
  // configs have one form and the override count measures how unusual a config is.
  std::map<std::string, int> uses;
  for (const auto& name : chosen) ++uses[name];
  // A net without conv layers: the backend's default, what its conv layers would run
  // (cuda has no `direct`).
  std::string common = chosen.empty() ? Registry::instance().default_conv_algorithm(options_.backend) : chosen.front();
  for (const auto& name : chosen)
    if (uses[name] > uses[common]) common = name;
  candidate.config.conv.default_algorithm = common;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (chosen[i] != common) candidate.config.conv.per_layer[layers_[i].name] = chosen[i];
    if (candidate.skip_reason.empty()) candidate.skip_reason = unsupported_reason(layers_[i], layout, chosen[i]);
  }
  return candidate;
}

namespace {

// Every combination of the concurrency knobs' lists, in the order the lists give.
std::vector<Concurrency> concurrency_settings(const SpaceOptions& options) {
  std::vector<Concurrency> out;
  for (int streams : options.streams)
    for (int replicas : options.replicas)
      for (int micro : options.micro_batches)
        for (bool async : options.async_update)
          for (int lane_threads : options.threads_per_lane)
            for (UpdateOn where : options.update_on)
              out.push_back(Concurrency{streams, replicas, micro, async, lane_threads, where});
  return out;
}

// Enumerating the product of every layer's options is exponential in the depth (4
// algorithms over ResNet-18-small's 20 conv layers: 4^20 configs), so a product too large
// to measure is refused up front instead of enumerating for ever.
constexpr double kMaxPerLayerProduct = 4096;

void refuse_huge_product(const std::vector<std::vector<std::string>>& options) {
  double combinations = 1;
  for (const auto& layer_options : options) combinations *= static_cast<double>(layer_options.size());
  if (combinations <= kMaxPerLayerProduct) return;
  const std::string count = combinations < 1e15 ? std::to_string(std::llround(combinations)) : "over 10^15";
  fail(ErrorKind::usage, "--per-layer-product: ", options.size(), " conv layers give ", count,
       " algorithm combinations per layout and thread count, more than the ", kMaxPerLayerProduct,
       " a tune can measure; use --strategy per-layer (which times each layer alone) or fewer --algorithms");
}

// Whether `test` holds for the algorithm and problem of some conv layer of `config`.
template <typename Test>
bool any_layer(const std::vector<ConvLayerInfo>& layers, const std::string& backend, const RunConfig& config,
               Test test) {
  for (const auto& layer : layers) {
    ConvProblem problem = layer.problem;
    problem.layout = config.layout;
    const auto instance = Registry::instance().make_conv_algorithm(backend, config.conv.for_layer(layer.name));
    if (instance->supports(problem) && test(*instance, problem)) return true;
  }
  return false;
}

}  // namespace

bool SearchSpace::has_fft_layer(const RunConfig& config) const {
  return any_layer(layers_, options_.backend, config,
                   [](const ConvAlgorithm& a, const ConvProblem& p) { return a.saved_bytes(p) > 0; });
}

bool SearchSpace::has_tileable_fft_layer(const RunConfig& config) const {
  return any_layer(layers_, options_.backend, config,
                   [](const ConvAlgorithm& a, const ConvProblem& p) { return a.fft_tile_applies(p); });
}

std::vector<Candidate> SearchSpace::with_concurrency(const Candidate& candidate) const {
  std::vector<Candidate> out;
  const std::vector<FftWorkspace> policies =
      has_fft_layer(candidate.config) ? options_.fft_workspace : std::vector<FftWorkspace>{FftWorkspace::reuse};
  const std::vector<FftTileChoice> tilings = has_tileable_fft_layer(candidate.config)
                                                 ? options_.fft_tile
                                                 : std::vector<FftTileChoice>{FftTileChoice::automatic()};
  for (const FftTileChoice& tiling : tilings) {
    // A tile size is refused per layer (it must exceed the kernel): checked once per tiling.
    Candidate tiled = candidate;
    tiled.config.fft_tile = tiling;
    if (tiled.skip_reason.empty() && tiling.mode == FftTileChoice::Mode::fixed)
      for (const auto& layer : layers_)
        if (tiled.skip_reason = unsupported_reason(layer, tiled.config.layout, tiled.config.conv.for_layer(layer.name),
                                                   ConvOptions{tiling});
            !tiled.skip_reason.empty())
          break;
    for (FftWorkspace policy : policies)
      for (const Concurrency& concurrency : concurrency_settings(options_)) {
        Candidate variant = tiled;
        variant.config.concurrency = concurrency;
        variant.config.fft_workspace = policy;
        if (variant.skip_reason.empty()) {
          try {
            variant.config.concurrency.validate(variant.config.batch);
          } catch (const Error& e) {
            variant.skip_reason = e.what();
          }
        }
        out.push_back(std::move(variant));
      }
  }
  return out;
}

std::vector<Candidate> SearchSpace::enumerate() const {
  std::vector<Candidate> out;
  auto add = [&](const Candidate& candidate) {
    for (Candidate& variant : with_concurrency(candidate)) out.push_back(std::move(variant));
  };
  for (Layout layout : options_.layouts)
    for (int threads : options_.threads) {
      if (!options_.per_layer_product || layers_.empty()) {
        for (const auto& algorithm : algorithms_) add(global(layout, threads, algorithm));
        continue;
      }
      // Per-layer product: only supporting algorithms enter a layer's options; one
      // skipped entry per (layer, algorithm) records why the others were left out.
      std::vector<std::vector<std::string>> options(layers_.size());
      for (size_t i = 0; i < layers_.size(); ++i)
        for (const auto& algorithm : algorithms_) {
          if (std::string why = unsupported_reason(layers_[i], layout, algorithm); why.empty()) {
            options[i].push_back(algorithm);
          } else {
            Candidate skipped{base_config(layout, threads), why};
            skipped.config.conv.default_algorithm = algorithm;
            out.push_back(std::move(skipped));
          }
        }
      if (std::any_of(options.begin(), options.end(), [](const auto& o) { return o.empty(); })) continue;
      refuse_huge_product(options);
      std::vector<size_t> index(layers_.size(), 0);
      while (true) {
        std::vector<std::string> chosen;
        for (size_t i = 0; i < layers_.size(); ++i) chosen.push_back(options[i][index[i]]);
        add(per_layer(layout, threads, chosen));
        size_t i = layers_.size();
        while (i > 0 && ++index[i - 1] == options[i - 1].size()) index[--i] = 0;
        if (i == 0) break;
      }
    }
  return out;
}

}  // namespace tunescope::tuner
