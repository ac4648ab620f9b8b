// The ground truth of a tuning space, for bench/tuning-truth.sh: every config of
// layouts x algorithms x threads x cpu bindings (what `tune --strategy exhaustive` sweeps with the
// default knob lists; with --layers, every per-layer combination, which per-layer may
// pick), checked against the reference and then timed together in
// interleaved rounds (core/tuner's measure_interleaved) until every config's 95% interval
// of the median step time is within +-delta/2 (default delta 0.02: +-1%) or a cap.
// A config with an algorithm some layer does not support is left out, as the tune skips it.
// With --config-files, the configs in those files (tunescope.config/1, e.g. the tunes'
// picks) join the space, once each. Prints one tab-separated line per config: label,
// median ex/s, the interval's ends, rounds, then batch / the mean step time (what a
// training run pays: an epoch is the sum of its steps; over the same rounds for every
// config, so the ratio of two is paired) and batch / the geometric mean step time (what
// the tune's rounds rank by: exp(mean log step time)).
//
//   bench_tuning_truth --model lenet5 --batch 128 --layouts nchw,nhwc
//                      --algorithms direct,gemm --threads 1,2 [--layers conv1,conv2] [--delta 0.02]
//                      [--max-rounds 400] [--max-seconds 60] [--config-files a.json,b.json]
//                      [--settle-steps 1] [--turn-steps 1] [--dump-rounds rounds.tsv]
//                      [--cold-start] [--turn-order threads] [--wait-input on]
//                      [--share-sessions off]
//                      [--prefetch 2]
//                      [--cpu-bindings off,cores]
// --cpu-bindings: the cpu_binding values crossed with every config (default: what a tune
// tries, KnobSpec::tune_default); as in the tune's space, a one-thread config runs unbound
// only, and a bound config with more threads than this process's CPUs is left out.
// --settle-steps: untimed steps that start each config's turn (MeasureOptions::
// settle_steps; 0 times the first step after another config's turn, to measure what
// settling changes). Every turn settles here: the truth never stops settling
// (MeasureOptions::settle_until_negligible off).
// --turn-steps: timed steps per config per turn (MeasureOptions::turn_steps; a round's
// time is their mean), to measure how much a longer turn narrows the rounds.
// --dump-rounds: every round's step time per config (seconds; a header of the labels,
// then one line per round), to study how the rounds drift and which statistic ranks them.
// The columns are in the order the configs took their turns in each round, so a
// column's index is its member's turn (bench/rounds-distance.py reads it so).
// --turn-order: threads (MeasureOptions::order_turns, TurnOrder.h: by thread count, the
// bound before the unbound; what a tune does) or given (the space's order: layout, then
// algorithms, then threads and binding), to measure what the order changes.
// --wait-input: on (MeasureOptions::wait_for_input: after each turn, wait for the
// config's input thread to prepare its next batches) or off (it builds them in the next
// config's turn). --prefetch: batches the input thread prepares ahead (SessionOptions).
// --share-sessions: off (a session per config: the ground truth) or on (MeasureOptions::
// share_sessions: configs that differ only in conv algorithms take their turns one after
// another in one session, and only a turn after another session's settles; the dump's
// columns stay in the turn order before that grouping), to measure what sharing changes.
// --cold-start: two more columns after the mean and geometric mean, the median ratio of
// each turn's first (settle) step to its timed step and that median's 95% interval
// ("low,high"; TurnSettling.h), what the tuner's rounds weigh to stop settling.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/SpaceBenchOptions.h"
#include "core/base/Error.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Measurement.h"
#include "core/tuner/SearchSpace.h"
#include "core/tuner/StepStatistics.h"
#include "core/tuner/TrialRunner.h"
#include "core/tuner/TurnOrder.h"
#include "core/tuner/TurnSettling.h"

namespace {

using namespace tunescope;

using bench::split;

// Round r's step time of every config on line r + 2, the configs' labels on line 1; the
// columns in `turns` order (indices into `results`, as the rounds ran them).
void write_rounds(const std::string& path, const std::vector<tuner::TrialResult>& results,
                  const std::vector<size_t>& turns) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) fail(ErrorKind::input, "--dump-rounds: cannot write ", path);
  size_t rounds = 0;
  for (size_t k = 0; k < turns.size(); ++k) {
    const tuner::TrialResult& result = results.at(turns[k]);
    std::fprintf(out, "%s%s", k ? "\t" : "", result.config.label().c_str());
    rounds = std::max(rounds, result.step_seconds.size());
  }
  std::fprintf(out, "\n");
  for (size_t r = 0; r < rounds; ++r)
    for (size_t k = 0; k < turns.size(); ++k) {
      const std::vector<double>& s = results.at(turns[k]).step_seconds;
      std::fprintf(out, "%s%.6f%s", k ? "\t" : "", r < s.size() ? s[r] : 0.0,
                   k + 1 == turns.size() ? "\n" : "");
    }
  if (std::fclose(out) != 0) fail(ErrorKind::input, "--dump-rounds: cannot write ", path);
}

}  // namespace

int main(int argc, char** argv) {
  bench::SpaceBenchOptions o;
  o.algorithms = "direct,gemm";
  o.threads = "1";
  std::string layers, config_files, dump_rounds;
  std::string bindings;  // what a tune tries by default
  for (const std::string& value : knobs::cpu_binding.spec().tune_default())
    bindings += (bindings.empty() ? "" : ",") + value;
  int64_t max_rounds = 400;
  int64_t settle_steps = tuner::MeasureOptions{}.settle_steps;
  int64_t turn_steps = tuner::MeasureOptions{}.turn_steps;
  bool cold_start = false;
  std::string turn_order = "threads";
  std::string wait_input = "on";
  std::string share_sessions = "off";
  try {
    for (int i = 1; i < argc; i += 2) {
      const std::string key = argv[i];
      if (key == "--cold-start") {
        cold_start = true;
        --i;  // a flag: no value
        continue;
      }
      if (i + 1 >= argc) fail(ErrorKind::usage, key, " needs a value");
      const std::string value = argv[i + 1];
      if (o.take(key, value)) continue;
      if (key == "--layers")
        layers = value;
      else if (key == "--max-rounds")
        max_rounds = std::stoll(value);
      else if (key == "--cpu-bindings")
        bindings = value;
      else if (key == "--config-files")
        config_files = value;
      else if (key == "--settle-steps")
        settle_steps = std::stoll(value);
      else if (key == "--turn-steps")
        turn_steps = std::stoll(value);
      else if (key == "--dump-rounds")
        dump_rounds = value;
      else if (key == "--turn-order")
        turn_order = value;
      else if (key == "--wait-input")
        wait_input = value;
      else if (key == "--share-sessions")
        share_sessions = value;

      else
        fail(ErrorKind::usage, "unknown option ", key);
    }
    o.check();
    for (const std::string& binding : split(bindings))
      knobs::cpu_binding.spec().checked(binding, "--cpu-bindings");
    if (max_rounds < 6 || max_rounds > 100000) fail(ErrorKind::usage, "--max-rounds 6..100000");
    if (settle_steps < 0 || settle_steps > 100)
      fail(ErrorKind::usage, "--settle-steps 0..100, got ", settle_steps);
    if (turn_steps < 1 || turn_steps > 100)
      fail(ErrorKind::usage, "--turn-steps 1..100, got ", turn_steps);
    if (turn_order != "threads" && turn_order != "given")
      fail(ErrorKind::usage, "--turn-order threads|given, got ", turn_order);
    if (wait_input != "on" && wait_input != "off")
      fail(ErrorKind::usage, "--wait-input on|off, got ", wait_input);
    if (share_sessions != "on" && share_sessions != "off")
      fail(ErrorKind::usage, "--share-sessions on|off, got ", share_sessions);
    const SessionOptions& base = o.base;
    const std::string &layouts = o.layouts, &algorithms = o.algorithms, &threads = o.threads;
    const double delta = o.delta, max_seconds = o.max_seconds;
    // Each layer's algorithm: every combination over the conv layers --layers names (the
    // others run the combination's first algorithm), one algorithm for all without it.
    std::vector<std::vector<std::string>> choices{{}};
    const std::vector<std::string> conv_layers = split(layers);
    for (size_t layer = 0; layer < std::max<size_t>(1, conv_layers.size()); ++layer) {
      std::vector<std::vector<std::string>> longer;
      for (const auto& prefix : choices)
        for (const std::string& algorithm : split(algorithms)) {
          longer.push_back(prefix);
          longer.back().push_back(algorithm);
        }
      choices = std::move(longer);
    }
    // The tune's space crosses each config with the bindings (a lone thread unbound only)
    // and says which cannot run here: an algorithm a layer does not support (onednn:winograd
    // on a 5x5 layer), a bound run with more threads than CPUs. Those are left out.
    tuner::SpaceOptions space_options;
    space_options.model = base.model;
    space_options.batch = base.batch;
    space_options.backend = base.backend;
    space_options.algorithms = split(algorithms);
    space_options.knobs.set_text(knobs::cpu_binding.spec(), split(bindings));
    const tuner::SearchSpace space(space_options,
                                   tuner::conv_layers(TrainingSession(base).network()));
    for (const std::string& name : conv_layers)
      if (std::none_of(space.layers().begin(), space.layers().end(),
                       [&](const tuner::ConvLayerInfo& layer) { return layer.name == name; }))
        fail(ErrorKind::usage, "--layers: ", base.model, " has no conv layer '", name, "'");
    const auto every_layers_algorithm = [&](const std::vector<std::string>& choice) {
      std::vector<std::string> all;
      for (const tuner::ConvLayerInfo& layer : space.layers()) {
        const auto named = std::find(conv_layers.begin(), conv_layers.end(), layer.name);
        all.push_back(named == conv_layers.end()
                          ? choice.front()
                          : choice[static_cast<size_t>(named - conv_layers.begin())]);
      }
      return all;
    };
    std::vector<RunConfig> configs;
    for (const std::string& layout : split(layouts))
      for (const auto& choice : choices)
        for (const std::string& t : split(threads)) {
          SessionOptions options = base;
          knobs::layout.set(options.knobs, parse_layout(layout));
          knobs::threads.set(options.knobs, std::stoi(t));
          // Written as the tuner writes a per-layer pick, so that labels match the tunes'.
          const tuner::Candidate mix =
              space.per_layer(parse_layout(layout), std::stoi(t), every_layers_algorithm(choice));
          if (!mix.runnable()) continue;
          options.conv = mix.config.conv;
          for (const tuner::Candidate& variant : space.with_knobs({run_config_of(options), ""}))
            if (variant.runnable()) configs.push_back(variant.config);
        }
    for (const std::string& file : split(config_files)) {
      RunConfig config = load_run_config(file);
      config.measured.reset();
      if (config.model != base.model || config.batch != base.batch)
        fail(ErrorKind::usage, file, ": a config of ", config.model, " batch ", config.batch,
             ", not of --model ", base.model, " --batch ", base.batch);
      const bool known = std::any_of(configs.begin(), configs.end(), [&](const RunConfig& c) {
        return c.label() == config.label();
      });
      if (!known) configs.push_back(std::move(config));
    }
    tuner::MeasureOptions measure;
    measure.steps = 6;
    measure.max_steps = max_rounds;
    measure.max_timing_seconds = max_seconds;
    measure.delta = delta;
    measure.settle_steps = settle_steps;
    measure.turn_steps = turn_steps;
    measure.order_turns = turn_order == "threads";
    measure.wait_for_input = wait_input == "on";
    measure.share_sessions = share_sessions == "on";
    measure.settle_until_negligible = false;
    const tuner::NumericsSample reference = tuner::reference_numerics(base, measure);
    const std::vector<const tuner::NumericsSample*> references(configs.size(), &reference);
    const auto results = tuner::measure_interleaved(
        base, configs, references, measure, [&](const std::vector<std::vector<double>>& rounds) {
          for (const auto& series : rounds)
            if (tuner::estimate_quantile(series).relative_half_width() > delta / 2) return false;
          return true;
        });
    for (const tuner::TrialResult& r : results)
      if (r.status != tuner::TrialStatus::ok)
        fail(ErrorKind::runtime, r.config.label(), ": ", r.reason);
    if (!dump_rounds.empty())
      write_rounds(dump_rounds, results, tuner::rounds_turns(configs, measure.order_turns));
    for (const tuner::TrialResult& r : results) {
      double sum = 0, logs = 0;
      for (double t : r.step_seconds) {
        sum += t;
        logs += std::log(t);
      }
      const auto n = static_cast<double>(r.step_seconds.size());
      const auto batch = static_cast<double>(base.batch);
      std::printf("%s\t%.2f\t%.2f\t%.2f\t%lld\t%.2f\t%.2f", r.config.label().c_str(),
                  r.figures.median_eps, r.figures.eps_low, r.figures.eps_high,
                  static_cast<long long>(r.figures.steps), batch * n / sum,
                  batch / std::exp(logs / n));
      if (cold_start) {
        const tuner::QuantileEstimate ratio =
            tuner::cold_start_ratio(r.turn_first_seconds, r.step_seconds);
        std::printf("\t%.4f\t%.4f,%.4f", ratio.estimate, ratio.low, ratio.high);
      }
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tuning_truth: %s\n", e.what());
    return 2;
  }
  return 0;
}
