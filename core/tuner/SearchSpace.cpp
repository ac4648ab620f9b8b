// Enumeration of the tuning space; support is asked of each algorithm for each layer's
// problem in the candidate's layout (ConvAlgorithm::unsupported_reason).
#include "core/tuner/SearchSpace.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/base/CpuAffinity.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/layers/Conv2dLayer.h"

namespace tunescope::tuner {

std::vector<ConvLayerInfo> conv_layers(const Network& network) {
  std::vector<ConvLayerInfo> layers;
  for (int node = 1; node <= network.layer_count(); ++node)
    if (const auto* conv = dynamic_cast<const Conv2dLayer*>(&network.layer(node)))
      layers.push_back({conv->name(), conv->problem()});
  return layers;
}

std::vector<Layout> SpaceOptions::layouts() const { return knobs.get(knobs::layout); }

std::vector<int> SpaceOptions::threads() const { return knobs.get(knobs::threads); }

SearchSpace::SearchSpace(SpaceOptions options, std::vector<ConvLayerInfo> layers)
    : options_(std::move(options)), layers_(std::move(layers)) {
  if (options_.batch < 1) fail(ErrorKind::usage, "--batch must be >= 1, got ", options_.batch);
  options_.knobs.check();
  const auto registered = Registry::instance().conv_algorithms(options_.backend);
  algorithms_ = options_.algorithms.empty() ? registered : options_.algorithms;
  if (algorithms_.empty())
    fail(ErrorKind::usage, "backend ", options_.backend, " has no conv algorithms");
  for (const auto& name : algorithms_)
    Registry::instance().make_conv_algorithm(options_.backend,
                                             name);  // throws Error(usage) naming it
}

std::string SearchSpace::unsupported_reason(const ConvLayerInfo& layer, Layout layout,
                                            const std::string& algorithm,
                                            const KnobValues& knobs) const {
  ConvProblem problem = layer.problem;
  problem.layout = layout;
  const auto instance =
      Registry::instance().make_conv_algorithm(options_.backend, algorithm, knobs);
  if (std::string why = instance->unsupported_reason(problem); !why.empty())
    return cat("layer ", layer.name, ": ", algorithm, " does not support ", problem.key(), ": ",
               why);
  return {};
}

RunConfig SearchSpace::base_config(Layout layout, int threads) const {
  RunConfig config;
  config.model = options_.model;
  config.batch = options_.batch;
  knobs::layout.set(config.knobs, layout);
  knobs::threads.set(config.knobs, threads);
  return config;
}

Candidate SearchSpace::global(Layout layout, int threads, const std::string& algorithm) const {
  Candidate candidate{base_config(layout, threads), {}};
  candidate.config.conv.default_algorithm = algorithm;
  for (const auto& layer : layers_)
    if (candidate.skip_reason = unsupported_reason(layer, layout, algorithm);
        !candidate.skip_reason.empty())
      break;
  return candidate;
}

Candidate SearchSpace::per_layer(Layout layout, int threads,
                                 const std::vector<std::string>& chosen) const {
  if (chosen.size() != layers_.size())
    fail(ErrorKind::runtime, "per-layer choice names ", chosen.size(), " algorithms for ",
         layers_.size(), " conv layers");
  Candidate candidate{base_config(layout, threads), {}};
  // The most used algorithm becomes the default (ties: the earliest layer's), so equal
  // configs have one form and the override count measures how unusual a config is.
  std::map<std::string, int> uses;
  for (const auto& name : chosen) ++uses[name];
  // A net without conv layers: the backend's default, what its conv layers would run
  // (cuda has no `direct`).
  std::string common = chosen.empty()
                           ? Registry::instance().default_conv_algorithm(options_.backend)
                           : chosen.front();
  for (const auto& name : chosen)
    if (uses[name] > uses[common]) common = name;
  candidate.config.conv.default_algorithm = common;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (chosen[i] != common) candidate.config.conv.per_layer[layers_[i].name] = chosen[i];
    if (candidate.skip_reason.empty())
      candidate.skip_reason = unsupported_reason(layers_[i], layout, chosen[i]);
  }
  return candidate;
}

namespace {

// Enumerating the product of every layer's options is exponential in the depth (4
// algorithms over ResNet-18-small's 20 conv layers: 4^20 configs), so a product too large
// to measure is refused up front instead of enumerating for ever.
constexpr double kMaxPerLayerProduct = 4096;

void refuse_huge_product(const std::vector<std::vector<std::string>>& options) {
  double combinations = 1;
  for (const auto& layer_options : options)
    combinations *= static_cast<double>(layer_options.size());
  if (combinations <= kMaxPerLayerProduct) return;
  const std::string count =
      combinations < 1e15 ? std::to_string(std::llround(combinations)) : "over 10^15";
  fail(ErrorKind::usage, "per_layer_product: ", options.size(), " conv layers give ", count,
       " algorithm combinations per layout and thread count, more than the ", kMaxPerLayerProduct,
       " a tune can measure; use strategy per-layer (which times each layer alone) or fewer "
       "algorithms");
}

// Calls visit(index) for every combination of one index per list of `sizes` (each > 0),
// the last list varying fastest.
template <typename Visit>
void for_each_combination(const std::vector<size_t>& sizes, Visit visit) {
  std::vector<size_t> index(sizes.size(), 0);
  while (true) {
    visit(index);
    size_t k = sizes.size();
    while (k > 0 && ++index[k - 1] == sizes[k - 1]) index[--k] = 0;
    if (k == 0) return;
  }
}

}  // namespace

std::string binding_refusal(const RunConfig& config) {
  if (knobs::cpu_binding.get(config.knobs) != CpuBinding::cores) return "";
  const Concurrency concurrency = config.concurrency();
  return cpu_binding_refusal(
      concurrency.executor_threads(config.threads()),
      cat(concurrency.lanes(), " lanes x ", concurrency.lane_threads(config.threads()), " threads"),
      allowed_cpus());
}

bool SearchSpace::knob_applies(const RunConfig& config, const std::string& key) const {
  const KnobSpec& spec = KnobCatalog::instance().at(key);
  if (spec.scope == KnobScope::run) return true;
  for (const auto& layer : layers_) {
    ConvProblem problem = layer.problem;
    problem.layout = config.layout();
    const auto instance = Registry::instance().make_conv_algorithm(
        options_.backend, config.conv.for_layer(layer.name), config.knobs);
    if (instance->supports(problem) && instance->knob_applies(key, problem)) return true;
  }
  return false;
}

std::vector<Candidate> SearchSpace::with_knobs(const Candidate& candidate) const {
  // The lists crossed with this candidate, in catalog order (the first one outermost).
  std::vector<std::pair<const KnobSpec*, std::vector<std::string>>> lists;
  for (const KnobSpec& spec : KnobCatalog::instance().specs()) {
    if (spec.key == knobs::layout.key() || spec.key == knobs::threads.key()) continue;
    lists.emplace_back(&spec, knob_applies(candidate.config, spec.key)
                                  ? options_.knobs.values(spec)
                                  : std::vector{spec.default_value});
  }
  // Whether each layer's algorithm takes the algorithm knobs' values: asked once per
  // combination of them (an fft_tile not larger than a kernel is refused per layer).
  std::map<std::string, std::string> refusals;
  auto refusal = [&](const RunConfig& config) -> std::string {
    std::string key;
    for (const auto& [spec, values] : lists)
      if (spec->scope == KnobScope::conv_algorithm)
        key += spec->key + "=" + config.knobs.text(spec->key) + ";";
    auto [it, added] = refusals.emplace(key, "");
    if (added)
      for (const auto& layer : layers_)
        if (it->second = unsupported_reason(layer, config.layout(),
                                            config.conv.for_layer(layer.name), config.knobs);
            !it->second.empty())
          break;
    return it->second;
  };
  std::vector<Candidate> out;
  std::vector<size_t> sizes;
  for (const auto& [spec, values] : lists) sizes.push_back(values.size());
  for_each_combination(sizes, [&](const std::vector<size_t>& index) {
    Candidate variant = candidate;
    for (size_t k = 0; k < lists.size(); ++k)
      variant.config.knobs.set_text(lists[k].first->key, lists[k].second[index[k]]);
    // A knob this variant does not read (KnobSpec::applies_to, asked with the variant's
    // other knobs set) takes its default: every value of it is the same run, tried once.
    bool normalised = false;
    for (const auto& [spec, values] : lists)
      if (spec->applies_to && !spec->applies_to(variant.config.knobs) &&
          variant.config.knobs.text(spec->key) != spec->default_value) {
        variant.config.knobs.set_text(spec->key, spec->default_value);
        normalised = true;
      }
    if (normalised && std::any_of(out.begin(), out.end(), [&](const Candidate& c) {
          return c.config.knobs == variant.config.knobs;
        }))
      return;
    if (variant.skip_reason.empty()) variant.skip_reason = refusal(variant.config);
    if (variant.skip_reason.empty()) {
      try {
        variant.config.concurrency().validate(variant.config.batch);
      } catch (const Error& e) {
        variant.skip_reason = e.what();
      }
    }
    if (variant.skip_reason.empty()) variant.skip_reason = binding_refusal(variant.config);
    out.push_back(std::move(variant));
  });
  return out;
}

std::vector<Candidate> SearchSpace::enumerate() const {
  std::vector<Candidate> out;
  auto add = [&](const Candidate& candidate) {
    for (Candidate& variant : with_knobs(candidate)) out.push_back(std::move(variant));
  };
  for (Layout layout : options_.layouts())
    for (int threads : options_.threads()) {
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
      if (std::any_of(options.begin(), options.end(), [](const auto& o) { return o.empty(); }))
        continue;
      refuse_huge_product(options);
      std::vector<size_t> sizes;
      for (const auto& layer_options : options) sizes.push_back(layer_options.size());
      for_each_combination(sizes, [&](const std::vector<size_t>& index) {
        std::vector<std::string> chosen;
        for (size_t i = 0; i < layers_.size(); ++i) chosen.push_back(options[i][index[i]]);
        add(per_layer(layout, threads, chosen));
      });
    }
  return out;
}

}  // namespace tunescope::tuner
