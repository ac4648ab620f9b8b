// Cost estimates of the strategies and the `auto` rule (see StrategyChoice.h).
#include "core/tuner/StrategyChoice.h"

#include "core/tuner/StepStatistics.h"

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
    case Strategy::pruned: return "pruned";
  }
  return "?";
}

Strategy parse_strategy(const std::string& text) {
  for (Strategy s : {Strategy::exhaustive, Strategy::per_layer, Strategy::halving,
                     Strategy::automatic, Strategy::pruned})
    if (to_string(s) == text) return s;
  fail(ErrorKind::usage, "strategy: unknown strategy '", text,
       "' (known: auto, exhaustive, per-layer, halving, pruned)");
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

CostInputs cost_inputs(const SearchSpace& space, size_t runnable_candidates, int64_t warmup,
                       int64_t steps, double build_seconds, double step_seconds) {
  const SpaceOptions& o = space.options();
  CostInputs in;
  in.candidates = runnable_candidates;
  const std::vector<Layout> layouts = o.layouts();
  const std::vector<int> threads = o.threads();
  in.layout_thread_pairs = layouts.size() * threads.size();
  in.algorithms = space.algorithms().size();
  in.conv_layers = space.layers().size();
  in.distinct_problems = distinct_layers(space).size();
  in.per_layer_allowed = !o.per_layer_product;
  in.per_layer_mixes = in.algorithms > 1 && in.distinct_problems > 1;
  in.warmup = warmup;
  in.steps = steps;
  in.build_seconds = build_seconds;
  in.step_seconds = step_seconds;

  // The knob product of one config where no algorithm's knob applies (FFT configs add
  // the FFT knobs; per-layer's picks are mostly not FFT on the nets measured).
  auto algorithm_knob_applies = [&](const RunConfig& config) {
    for (const KnobSpec& spec : KnobCatalog::instance().specs())
      if (spec.scope == KnobScope::conv_algorithm && space.knob_applies(config, spec.key))
        return true;
    return false;
  };
  if (!space.algorithms().empty()) {
    Candidate sample{
        space.global(layouts.front(), threads.front(), space.algorithms().front()).config, ""};
    for (const std::string& algorithm : space.algorithms()) {
      const RunConfig config = space.global(layouts.front(), threads.front(), algorithm).config;
      if (!algorithm_knob_applies(config)) {
        sample.config = config;
        break;
      }
    }
    const auto variants = space.with_knobs(sample);
    in.concurrency_variants = static_cast<size_t>(std::max<std::ptrdiff_t>(
        1, std::count_if(variants.begin(), variants.end(),
                         [](const Candidate& c) { return c.runnable(); })));
  }
  return in;
}

FindProbe probe_find(const SearchSpace& space, const FindOptions& options,
                     const MeasureOptions& limits, bool at_find_repetitions) {
  const SpaceOptions& o = space.options();
  std::vector<ConvLayerInfo> distinct = distinct_layers(space);
  FindProbe probe;
  if (distinct.empty()) return probe;
  const std::vector<Layout> layouts = o.layouts();
  const std::vector<int> threads = o.threads();
  auto by_flops = [](const ConvLayerInfo& a, const ConvLayerInfo& b) {
    return a.problem.flops() < b.problem.flops();
  };
  const ConvLayerInfo least = *std::min_element(distinct.begin(), distinct.end(), by_flops);
  const ConvLayerInfo most = *std::max_element(distinct.begin(), distinct.end(), by_flops);
  FindOptions probe_options = options;
  if (!at_find_repetitions) probe_options.repetitions = 1;
  // A layer's find is a fixed part (its tensors, the direct reference, each algorithm's
  // first, checked run) plus up to `repetitions` timed runs of each algorithm (fewer once
  // a run confirms the fastest). The probe runs the fixed part and one repetition, and
  // its timings say what one repetition costs, so the full find of that layer costs at
  // most the probe plus repetitions - 1 more of those (none more when the probe ran the
  // find's own schedule).
  const int repetitions = at_find_repetitions ? 1 : std::max(1, options.repetitions);
  auto time_find = [&](const ConvLayerInfo& layer) {
    const SearchSpace one(o, {layer});
    const auto start = Clock::now();
    std::vector<LayerFind> found =
        find_per_layer(one, layouts.front(), threads.front(), probe_options, limits);
    const double probe_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return std::pair(find_seconds_of(probe_seconds, found.front(), repetitions),
                     std::move(found.front()));
  };
  const auto [least_seconds, least_find] = time_find(least);
  const auto [most_seconds, most_find] =
      least.problem == most.problem ? std::pair(least_seconds, least_find) : time_find(most);
  probe.least_flops = least.problem.flops();
  probe.most_flops = most.problem.flops();
  for (const AlgorithmTiming& a : least_find.timings)
    for (const AlgorithmTiming& b : most_find.timings)
      if (a.algorithm == b.algorithm && a.skip_reason.empty() && b.skip_reason.empty())
        probe.ms[a.algorithm] = {a.median_ms, b.median_ms};
  // A line through the two (flops, seconds) points; one point: proportional to FLOPs.
  const double df = most.problem.flops() - least.problem.flops();
  const double slope = df > 0 ? (most_seconds - least_seconds) / df
                              : least_seconds / std::max(1.0, least.problem.flops());
  double seconds = 0;
  for (const ConvLayerInfo& layer : distinct)
    seconds +=
        std::max(0.0, least_seconds + slope * (layer.problem.flops() - least.problem.flops()));
  probe.find_seconds = seconds * static_cast<double>(layouts.size() * threads.size());
  return probe;
}

double algorithm_ms(const FindProbe& probe, const std::string& algorithm, double flops) {
  const auto it = probe.ms.find(algorithm);
  if (it == probe.ms.end()) return -1;
  const auto [least, most] = it->second;
  const double df = probe.most_flops - probe.least_flops;
  const double ms = df > 0 ? least + (most - least) * (flops - probe.least_flops) / df
                           : least * flops / std::max(1.0, probe.least_flops);
  return std::max(0.0, ms);
}

void price_steps(CostInputs& in, const SearchSpace& space, const std::vector<RunConfig>& runnable,
                 const std::string& reference_algorithm, const FindProbe& probe) {
  if (algorithm_ms(probe, reference_algorithm, probe.least_flops) < 0)
    return;  // nothing to price against
  // A layer's ms with `algorithm`, the reference's when the probe did not time it.
  auto layer_ms = [&](const ConvLayerInfo& layer, const std::string& algorithm) {
    const double ms = algorithm_ms(probe, algorithm, layer.problem.flops());
    return ms >= 0 ? ms : algorithm_ms(probe, reference_algorithm, layer.problem.flops());
  };
  // A config's conv time per step: every conv layer at its algorithm's line.
  auto conv_ms = [&](const ConvChoice& conv) {
    double ms = 0;
    for (const ConvLayerInfo& layer : space.layers()) {
      const std::string& algorithm = conv.for_layer(layer.name);
      ms += layer_ms(layer, algorithm.empty() ? reference_algorithm : algorithm);
    }
    return ms;
  };
  const double reference_ms = conv_ms(ConvChoice{});
  // A floor against lines that extrapolate too low: no config steps in under a tenth of
  // the reference's time.
  auto step_of = [&](double ms) {
    return std::max(0.1 * in.step_seconds, in.step_seconds + (ms - reference_ms) / 1e3);
  };

  in.candidate_step_seconds.clear();
  for (const RunConfig& config : runnable)
    in.candidate_step_seconds.push_back(step_of(conv_ms(config.conv)));

  // Per-layer: each layer's fastest timed algorithm by the lines, the mix of those, and
  // the uniform config of each picked algorithm.
  std::set<std::string> picked;
  double mix_ms = 0;
  for (const ConvLayerInfo& layer : space.layers()) {
    std::string best;
    double best_ms = 0;
    for (const auto& [algorithm, unused] : probe.ms) {
      const double ms = algorithm_ms(probe, algorithm, layer.problem.flops());
      if (best.empty() || ms < best_ms) best = algorithm, best_ms = ms;
    }
    picked.insert(best);
    mix_ms += best_ms;
  }
  in.per_layer_step_seconds.clear();
  if (picked.size() > 1) in.per_layer_step_seconds.push_back(step_of(mix_ms));
  for (const std::string& algorithm : picked)
    in.per_layer_step_seconds.push_back(step_of(conv_ms(ConvChoice{algorithm, {}})));
}

double find_seconds_of(double probe_seconds, const LayerFind& probe, int repetitions) {
  double repetition_ms = 0;
  for (const AlgorithmTiming& t : probe.timings)
    if (t.skip_reason.empty()) repetition_ms += t.median_ms;
  return probe_seconds + static_cast<double>(std::max(1, repetitions) - 1) * repetition_ms / 1e3;
}

int64_t timed_steps(const CostInputs& in, double step_seconds) {
  if (in.max_steps <= in.steps) return in.steps;
  const int64_t minimum = std::max<int64_t>(in.steps, kMinStepsForInterval);
  const double wanted = std::ceil(std::pow(1.92 * in.step_spread / std::max(in.delta, 1e-9), 2));
  int64_t n =
      std::clamp<int64_t>(static_cast<int64_t>(std::min(wanted, 1e12)), minimum, in.max_steps);
  if (in.max_timing_seconds > 0 && step_seconds > 0)
    n = std::min<int64_t>(
        n, std::max<int64_t>(in.steps, static_cast<int64_t>(in.max_timing_seconds / step_seconds)));
  return n;
}

int64_t raced_out_steps(const CostInputs& in) {
  const int64_t first = std::max<int64_t>(in.steps, kMinStepsForInterval);
  return first + std::max<int64_t>(2, first / 4);
}

double sweep_seconds(const CostInputs& in, const std::vector<double>& step_seconds, bool checked) {
  const int64_t raced = raced_out_steps(in);
  // The relative half-width of the median's interval after `raced` steps at the spread
  // (0.958 = 1.96 x 1.2533 / 2.563, as in timed_steps).
  const double half = 0.958 * in.step_spread / std::sqrt(static_cast<double>(raced));
  double seconds = 0, leader = INFINITY;
  for (double step : step_seconds) {
    const int64_t full = timed_steps(in, step);
    const bool out = in.racing && step * (1 - half) > leader * (1 + half) * (1 + in.delta / 2);
    const int64_t timed = out ? std::min(raced, full) : full;
    seconds += in.build_seconds + static_cast<double>((checked ? 1 : 0) + in.warmup + timed) * step;
    if (!out) leader = std::min(leader, step);
  }
  return seconds;
}

double race_seconds(const CostInputs& in, std::vector<double> step_seconds) {
  // Every member built and checked (no warm-up steps: the rounds are paired); the
  // clearly slower leave at the separation test's first look (race_drops), the leading
  // two are timed for the sign-flip test's minimum of rounds (6) and go on as long as a
  // full measurement would (the rounds stop once the sign-flip test settles them).
  const int64_t minimum = std::max<int64_t>(in.steps, 6);
  const auto first_look = static_cast<int64_t>(kEarliestSeparationLook);
  std::sort(step_seconds.begin(), step_seconds.end());
  double seconds = 0;
  for (size_t i = 0; i < step_seconds.size(); ++i)
    seconds += in.build_seconds +
               static_cast<double>(1 + (i < 2 ? minimum : first_look)) * step_seconds[i];
  for (size_t i = 0; i < 2 && i < step_seconds.size(); ++i)
    seconds +=
        static_cast<double>(std::max<int64_t>(0, timed_steps(in, step_seconds[i]) - minimum)) *
        step_seconds[i];
  return seconds;
}

std::vector<StrategyEstimate> estimate_costs(const CostInputs& in) {
  // checked: the measurement starts with the numerics check's step (halving's later
  // rounds leave it out: the candidate passed it in round 0). `steps` below in.steps: a
  // brief halving round (a fixed count); else a full one, timed adaptively.
  auto measurement = [&](int64_t steps, bool checked = true, double step_seconds = -1) {
    const double step = step_seconds >= 0 ? step_seconds : in.step_seconds;
    const int64_t timed = steps < in.steps ? steps : timed_steps(in, step);
    return in.build_seconds + static_cast<double>((checked ? 1 : 0) + in.warmup + timed) * step;
  };
  // The interleaved winner vs runner-up, every strategy: rounds until the sign-flip test
  // settles, priced as a full measurement each.
  const double remeasure = 2 * measurement(in.steps);
  // Each candidate's step in the order measured; unpriced: the reference's.
  std::vector<double> in_order = in.candidate_step_seconds;
  if (in_order.empty()) in_order.assign(in.candidates, in.step_seconds);
  // Fastest first (halving keeps the fastest, and races each round fastest first).
  std::vector<double> steps = in_order;
  std::sort(steps.begin(), steps.end());
  // Measurements of the `count` fastest candidates at `timed` steps: a full round
  // (timed = in.steps) as a sweep, fastest first; a brief one at its fixed count.
  auto fastest = [&](size_t count, int64_t timed, bool checked) {
    if (timed >= in.steps)
      return sweep_seconds(
          in, std::vector<double>(steps.begin(), steps.begin() + std::min(count, steps.size())),
          checked);
    double seconds = 0;
    for (size_t i = 0; i < count && i < steps.size(); ++i)
      seconds += measurement(timed, checked, steps[i]);
    return seconds;
  };
  std::vector<StrategyEstimate> out;

  out.push_back(
      {Strategy::exhaustive, sweep_seconds(in, in_order, true) + remeasure, steps.size()});

  if (in.per_layer_allowed) {
    // The find, then the baseline and per-layer's configs raced in interleaved rounds
    // (PerLayerStrategy.cpp; the baseline is not swept alone first).
    const size_t per_pair = in.layout_thread_pairs * in.concurrency_variants;
    std::vector<double> raced{in.step_seconds};  // the baseline
    if (!in.per_layer_step_seconds.empty()) {
      for (double step : in.per_layer_step_seconds) raced.insert(raced.end(), per_pair, step);
    } else {
      // Each distinct problem picks one algorithm, so at most this many per pair: an upper
      // bound (ResNet-18-small, 11 problems x 4 algorithms: 2 to 4 picked per layout).
      const size_t picked = std::min(in.algorithms, std::max<size_t>(1, in.distinct_problems));
      raced.insert(raced.end(), per_pair * (picked + (picked > 1 ? 1 : 0)), in.step_seconds);
    }
    out.push_back({Strategy::per_layer, in.find_seconds + race_seconds(in, raced), raced.size()});
  }

  // Halving as Tuner::run races it: every candidate at round 0's steps, then the
  // fastest third at each longer round until one is left.
  size_t racing = steps.size();
  double halving = fastest(racing, halving_steps(racing, in.steps), true);
  size_t measurements = racing;
  while (racing > 1) {
    racing = halving_keep(racing);
    if (racing == 1) break;
    halving += fastest(racing, halving_steps(racing, in.steps), false);
    measurements += racing;
  }
  out.push_back({Strategy::halving, halving + remeasure, measurements});

  if (in.per_layer_allowed && !in.candidate_step_seconds.empty()) {
    // The baseline (measured first, never pruned), then every other candidate priced
    // within the margin of the fastest.
    const double limit = steps.front() * (1 + in.prune_margin);
    double seconds = in.find_seconds +
                     measurement(in.steps, true, in.candidate_step_seconds.front()) + remeasure;
    size_t measured = 1;
    for (size_t i = 1; i < in.candidate_step_seconds.size(); ++i)
      if (in.candidate_step_seconds[i] <= limit) {
        seconds += measurement(in.steps, true, in.candidate_step_seconds[i]);
        ++measured;
      }
    out.push_back({Strategy::pruned, seconds, measured});
  }
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
    out += cat(out.empty() ? "" : ", ", to_string(e.strategy), " ", seconds_text(e.seconds), " (",
               e.measurements, " measurements)");
  return out;
}

StrategyChoice choose_strategy(Strategy requested, const CostInputs& inputs) {
  StrategyChoice choice;
  choice.requested = requested;
  if (requested != Strategy::automatic) {
    choice.run = requested;
    choice.reason = cat("requested (strategy ", to_string(requested), ")");
    return choice;
  }
  choice.estimates = estimate_costs(inputs);
  const std::string estimated =
      cat("estimated before measuring: ", describe_estimates(choice.estimates), " from ",
          inputs.candidates, " candidates, ", inputs.conv_layers, " conv layers (",
          inputs.distinct_problems, " distinct), a ", seconds_text(inputs.build_seconds),
          " build and a ", std::round(inputs.step_seconds * 1e4) / 10, " ms step",
          inputs.per_layer_allowed ? cat(", a find of ", seconds_text(inputs.find_seconds)) : "");
  if (inputs.per_layer_forced()) {
    choice.run = Strategy::per_layer;
    choice.reason = cat("auto: per-layer, the only strategy that searches per-layer mixes (",
                        inputs.algorithms, " algorithms over ", inputs.distinct_problems,
                        " distinct conv problems; the others sweep uniform configs); ", estimated);
    return choice;
  }
  const auto cheapest =
      *std::min_element(choice.estimates.begin(), choice.estimates.end(),
                        [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  for (Strategy preferred :
       {Strategy::per_layer, Strategy::exhaustive, Strategy::pruned, Strategy::halving})
    for (const StrategyEstimate& e : choice.estimates)
      if (e.strategy == preferred && e.seconds <= kStrategyTieFactor * cheapest.seconds) {
        choice.run = preferred;
        choice.reason =
            preferred == cheapest.strategy
                ? cat("auto: ", to_string(preferred), " has the cheapest estimate; ", estimated)
                : cat("auto: ", to_string(preferred), " is within ", kStrategyTieFactor,
                      "x of the cheapest (", to_string(cheapest.strategy),
                      "), and ties go to per-layer, then exhaustive, then pruned; ", estimated);
        return choice;
      }
  fail(ErrorKind::runtime, "auto strategy: no estimate within ", kStrategyTieFactor,
       "x of the cheapest");
}

std::string estimates_to_json(const std::vector<StrategyEstimate>& estimates) {
  nlohmann::json out = nlohmann::json::array();
  for (const StrategyEstimate& e : estimates)
    out.push_back({{"strategy", to_string(e.strategy)},
                   {"seconds", e.seconds},
                   {"measurements", e.measurements}});
  return out.dump();
}

std::vector<StrategyEstimate> estimates_from_json(const std::string& text,
                                                  const std::string& source) {
  std::vector<StrategyEstimate> out;
  try {
    for (const auto& e : nlohmann::json::parse(text))
      out.push_back({parse_strategy(e.at("strategy").get<std::string>()),
                     e.at("seconds").get<double>(), e.at("measurements").get<size_t>()});
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorKind::input, source, ": strategy estimates: ", e.what());
  } catch (const Error& e) {
    fail(ErrorKind::input, source, ": strategy estimates: ", e.what());
  }
  return out;
}

}  // namespace tunescope::tuner
