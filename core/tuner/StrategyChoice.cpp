// Cost estimates of the strategies and the `auto` rule (see StrategyChoice.h).
#include "core/tuner/StrategyChoice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/tuner/SuccessiveHalving.h"

namespace tunescope::tuner {

std::string to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::exhaustive: return "exhaustive";
    case Strategy::per_layer: return "per-layer";
    case Strategy::halving: return "halving";
    case Strategy::automatic: return "auto";
  }
  return "?";
}

Strategy parse_strategy(const std::string& text) {
  for (Strategy s : {Strategy::exhaustive, Strategy::per_layer, Strategy::halving, Strategy::automatic})
    if (to_string(s) == text) return s;
  fail(ErrorKind::usage, "--strategy: unknown strategy '", text, "' (known: auto, exhaustive, per-layer, halving)");
}

namespace {

using Clock = std::chrono::steady_clock;

// One layer per distinct conv problem, in graph order.
std::vector<ConvLayerInfo> distinct_layers(const SearchSpace& space) {
  std::vector<ConvLayerInfo> out;
  std::set<std::string> seen;
  for (const ConvLayerInfo& layer : space.layers())
    if (seen.insert(layer.problem.key()).second) out.push_back(layer);
  return out;
}

}  // namespace

CostInputs cost_inputs(const SearchSpace& space, size_t runnable_candidates, int64_t warmup, int64_t steps,
                       double build_seconds, double step_seconds) {
  const SpaceOptions& o = space.options();
  CostInputs in;
  in.candidates = runnable_candidates;
  in.layout_thread_pairs = o.layouts.size() * o.threads.size();
  in.algorithms = space.algorithms().size();
  in.conv_layers = space.layers().size();
  in.distinct_problems = distinct_layers(space).size();
  in.per_layer_allowed = !o.per_layer_product;
  in.warmup = warmup;
  in.steps = steps;
  in.build_seconds = build_seconds;
  in.step_seconds = step_seconds;

  // The concurrency product of one config without an FFT layer (FFT configs add the
  // workspace policies; per-layer's picks are mostly not FFT on the nets measured).
  if (!o.layouts.empty() && !o.threads.empty() && !space.algorithms().empty()) {
    Candidate sample{space.global(o.layouts.front(), o.threads.front(), space.algorithms().front()).config, ""};
    for (const std::string& algorithm : space.algorithms()) {
      const RunConfig config = space.global(o.layouts.front(), o.threads.front(), algorithm).config;
      if (!space.has_fft_layer(config)) {
        sample.config = config;
        break;
      }
    }
    const auto variants = space.with_concurrency(sample);
    in.concurrency_variants = static_cast<size_t>(
        std::max<std::ptrdiff_t>(1, std::count_if(variants.begin(), variants.end(), [](const Candidate& c) { return c.runnable(); })));
  }
  return in;
}

double estimate_find_seconds(const SearchSpace& space, const FindOptions& options) {
  const SpaceOptions& o = space.options();
  std::vector<ConvLayerInfo> distinct = distinct_layers(space);
  if (distinct.empty() || o.layouts.empty() || o.threads.empty()) return 0;
  auto by_flops = [](const ConvLayerInfo& a, const ConvLayerInfo& b) { return a.problem.flops() < b.problem.flops(); };
  const ConvLayerInfo least = *std::min_element(distinct.begin(), distinct.end(), by_flops);
  const ConvLayerInfo most = *std::max_element(distinct.begin(), distinct.end(), by_flops);
  FindOptions probe_options = options;
  probe_options.repetitions = 1;
  // A layer's find is a fixed part (its tensors, the direct reference, each algorithm's
  // first, checked run) plus `repetitions` timed runs of each algorithm. The probe runs
  // the fixed part and one repetition, and its timings say what one repetition costs, so
  // the full find of that layer is the probe plus repetitions - 1 more of those.
  const int repetitions = std::max(1, options.repetitions);
  auto time_find = [&](const ConvLayerInfo& layer) {
    const SearchSpace one(o, {layer});
    const auto start = Clock::now();
    const std::vector<LayerFind> found = find_per_layer(one, o.layouts.front(), o.threads.front(), probe_options);
    const double probe_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return find_seconds_of(probe_seconds, found.front(), repetitions);
  };
  const double least_seconds = time_find(least);
  const double most_seconds = least.problem == most.problem ? least_seconds : time_find(most);
  // A line through the two (flops, seconds) points; one point: proportional to FLOPs.
  const double df = most.problem.flops() - least.problem.flops();
  const double slope = df > 0 ? (most_seconds - least_seconds) / df : least_seconds / std::max(1.0, least.problem.flops());
  double seconds = 0;
  for (const ConvLayerInfo& layer : distinct)
    seconds += std::max(0.0, least_seconds + slope * (layer.problem.flops() - least.problem.flops()));
  return seconds * static_cast<double>(o.layouts.size() * o.threads.size());
}

double find_seconds_of(double probe_seconds, const LayerFind& probe, int repetitions) {
  double repetition_ms = 0;
  for (const AlgorithmTiming& t : probe.timings)
    if (t.skip_reason.empty()) repetition_ms += t.median_ms;
  return probe_seconds + static_cast<double>(std::max(1, repetitions) - 1) * repetition_ms / 1e3;
}

std::vector<StrategyEstimate> estimate_costs(const CostInputs& in) {
  // checked: the measurement starts with the numerics check's step (halving's later
  // rounds leave it out: the candidate passed it in round 0).
  auto measurement = [&](int64_t steps, bool checked = true) {
    return in.build_seconds + static_cast<double>((checked ? 1 : 0) + in.warmup + steps) * in.step_seconds;
  };
  const double remeasure = 2 * measurement(in.steps);  // the interleaved winner vs runner-up, every strategy
  std::vector<StrategyEstimate> out;

  out.push_back({Strategy::exhaustive, static_cast<double>(in.candidates) * measurement(in.steps) + remeasure,
                 in.candidates});

  if (in.per_layer_allowed) {
    // Each distinct problem picks one algorithm, so at most this many per pair: an upper
    // bound (ResNet-18-small, 11 problems x 4 algorithms: 2 to 4 picked per layout).
    const size_t picked = std::min(in.algorithms, std::max<size_t>(1, in.distinct_problems));
    const size_t configs = picked + (picked > 1 ? 1 : 0);
    const size_t measurements = 1 + in.layout_thread_pairs * in.concurrency_variants * configs;
    out.push_back({Strategy::per_layer,
                   in.find_seconds + static_cast<double>(measurements) * measurement(in.steps) +
                       remeasure,
                   measurements});
  }

  // Halving as Tuner::run races it: every candidate at round 0's steps, then the
  // fastest third at each longer round until one is left.
  double halving = 0;
  size_t measurements = 0;
  size_t racing = in.candidates;
  halving += static_cast<double>(racing) * measurement(halving_steps(racing, in.steps));
  measurements += racing;
  while (racing > 1) {
    racing = halving_keep(racing);
    if (racing == 1) break;
    halving += static_cast<double>(racing) * measurement(halving_steps(racing, in.steps), false);
    measurements += racing;
  }
  out.push_back({Strategy::halving, halving + remeasure, measurements});
  return out;
}

namespace {

std::string seconds_text(double seconds) {
  const double rounded = seconds >= 10  ? std::round(seconds)
                        : seconds >= 1 ? std::round(seconds * 10) / 10
                                       : std::round(seconds * 100) / 100;
  return cat(rounded, " s");
}

}  // namespace

std::string describe_estimates(const std::vector<StrategyEstimate>& estimates) {
  std::string out;
  for (const StrategyEstimate& e : estimates)
    out += cat(out.empty() ? "" : ", ", to_string(e.strategy), " ", seconds_text(e.seconds), " (", e.measurements,
               " measurements)");
  return out;
}

StrategyChoice choose_strategy(Strategy requested, const CostInputs& inputs) {
  StrategyChoice choice;
  choice.requested = requested;
  if (requested != Strategy::automatic) {
    choice.run = requested;
    choice.reason = cat("requested with --strategy ", to_string(requested));
    return choice;
  }
  choice.estimates = estimate_costs(inputs);
  const std::string estimated =
      cat("estimated before measuring: ", describe_estimates(choice.estimates), " from ", inputs.candidates,
          " candidates, ", inputs.conv_layers, " conv layers (", inputs.distinct_problems, " distinct), a ",
          seconds_text(inputs.build_seconds), " build and a ", std::round(inputs.step_seconds * 1e4) / 10,
          " ms step", inputs.per_layer_allowed ? cat(", a find of ", seconds_text(inputs.find_seconds)) : "");
  const auto cheapest = *std::min_element(choice.estimates.begin(), choice.estimates.end(),
                                          [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  for (Strategy preferred : {Strategy::per_layer, Strategy::exhaustive, Strategy::halving})
    for (const StrategyEstimate& e : choice.estimates)
      if (e.strategy == preferred && e.seconds <= kStrategyTieFactor * cheapest.seconds) {
        choice.run = preferred;
        choice.reason = preferred == cheapest.strategy
                            ? cat("auto: ", to_string(preferred), " has the cheapest estimate; ", estimated)
                            : cat("auto: ", to_string(preferred), " is within ", kStrategyTieFactor, "x of the cheapest (",
                                  to_string(cheapest.strategy), "), and ties go to per-layer, then exhaustive; ",
                                  estimated);
        return choice;
      }
  fail(ErrorKind::runtime, "auto strategy: no estimate within ", kStrategyTieFactor, "x of the cheapest");
}

std::string estimates_to_json(const std::vector<StrategyEstimate>& estimates) {
  nlohmann::json out = nlohmann::json::array();
  for (const StrategyEstimate& e : estimates)
    out.push_back({{"strategy", to_string(e.strategy)}, {"seconds", e.seconds}, {"measurements", e.measurements}});
  return out.dump();
}

std::vector<StrategyEstimate> estimates_from_json(const std::string& text, const std::string& source) {
  std::vector<StrategyEstimate> out;
  try {
    for (const auto& e : nlohmann::json::parse(text))
      out.push_back({parse_strategy(e.at("strategy").get<std::string>()), e.at("seconds").get<double>(),
                     e.at("measurements").get<size_t>()});
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorKind::input, source, ": strategy estimates: ", e.what());
  } catch (const Error& e) {
    fail(ErrorKind::input, source, ": strategy estimates: ", e.what());
  }
  return out;
}

}  // namespace tunescope::tuner
