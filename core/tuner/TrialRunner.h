// The tuner's one trial runner: every measurement the tuner makes, of a whole config or
// of one conv layer's algorithm (the per-layer find), goes through it. A trial verifies
// its numerics against a reference with one error norm (compare_numerics: the relative
// L2 error per tensor, MeasureOptions' tolerances) BEFORE it is timed, warms up, is timed
// adaptively (time_adaptively: until the 95% interval of its median is within
// +-delta/2, between a minimum and a maximum of steps and a time cap), and ends with a
// disposition (ok, invalid, failed) and a reason. The same guard wraps every trial:
// nothing it throws escapes, the memory cap (MeasureOptions::memory_limit_bytes) and the
// time limit (time_limit_seconds) apply, and with `isolate` it runs in a forked child
// (IsolatedTrial.h).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tuner/Measurement.h"
#include "core/tuner/SearchSpace.h"

namespace tunescope::tuner {

// Measures `config` applied onto `base` (data, seed, SGD settings come from base),
// checked against `reference`, in a child process when options.isolate is set.
TrialResult measure(const SessionOptions& base, const RunConfig& config,
                    const NumericsSample& reference, const MeasureOptions& options);

// Whether the interleaved rounds so far (one step time per config per round, paired by
// index) settle the choice; measure_interleaved stops at the first true. A member
// dropped from the race (RoundsDrop) or never timed (wrong numerics) has fewer rounds
// than those still racing.
using RoundsSettled = std::function<bool(const std::vector<std::vector<double>>& round_seconds)>;
// The members (indices) to drop from the race after the rounds so far: no longer timed,
// their result ok with the rounds they ran and stop StopRule::raced_out.
using RoundsDrop =
    std::function<std::vector<size_t>(const std::vector<std::vector<double>>& round_seconds)>;
// The rounds each rank runs at least (measure_interleaved): max(options.steps, 6), the
// sign-flip test's smallest two-sided p with n rounds being 2^(1-n); with
// options.rounds_ranks ranks racing the same leaders, pooling their rounds, its share.
int64_t minimum_rounds(const MeasureOptions& options);
// The rounds that run at most: options.max_steps, at least the minimum (members run as
// worker processes, a trial a round, stop at twice the minimum).
int64_t maximum_rounds(const MeasureOptions& options);
// Told after every round (`round_seconds` as above), the first included: the rounds'
// progress, for a tune's progress bar and events.
using RoundRan = std::function<void(const std::vector<std::vector<double>>& round_seconds)>;
// Measures `configs` (each checked against its reference) in interleaved rounds: each
// round times one step of each member still racing, round-robin, so slow drift of the
// machine hits all alike: the final word among the leaders. At least minimum_rounds, at
// most maximum_rounds, at most options.max_timing_seconds per config, fewer once `settled`
// says so; `drop` (optional) is asked after each round from the minimum on, `ran`
// (optional) after every round. A member whose numerics differ is invalid and never
// timed; the others race on. The time and memory limits cover all of them. Each result
// carries its round times in step_seconds, stop StopRule::interleaved (raced_out when
// dropped), reason kRemeasureReason.
std::vector<TrialResult> measure_interleaved(const SessionOptions& base,
                                             const std::vector<RunConfig>& configs,
                                             const std::vector<const NumericsSample*>& references,
                                             const MeasureOptions& options,
                                             const RoundsSettled& settled,
                                             const RoundsDrop& drop = {}, const RoundRan& ran = {});

// One conv layer's problem run alone by one algorithm (the per-layer find's trial).
struct LayerTrial {
  std::string backend;
  ConvProblem problem;  // its layout set
  std::string algorithm;
  int threads = 1;
  // The config the trial stands for: the layer's algorithm in the config of its layout
  // and threads (what its record names).
  RunConfig config;
};
// The reference a layer trial is checked against: the CPU's `direct` on the same inputs,
// its output (forward), input gradient (backward data) and filter gradient (backward
// filter) as the sample's three tensors, in full.
NumericsSample layer_reference(const ConvProblem& problem);
// Runs forward + backward data + backward filter of the layer once (checked against
// `reference`: an invalid trial's reason starts "wrong results"), then times them
// together, run by run, until a run confirms the fastest (fastest_confirmed, at
// options.delta) after at least options.steps runs, or at options.max_steps runs or
// max_timing_seconds, under the same limits and isolation as a whole config. An ok
// result's figures are of those runs (median_step_ms: the three passes together).
TrialResult measure_layer(const LayerTrial& trial, const NumericsSample& reference,
                          const MeasureOptions& options);

// A tune's trial runner: `base` and the options every trial of the tune uses, and the
// references its candidates are checked against, made once each (with batch norm, a
// split changes the maths, so a split candidate is checked against the reference run
// with the same split).
class TrialRunner {
 public:
  // `reference`: the first two batches of the reference config (Tuner::run measures it).
  TrialRunner(SessionOptions base, MeasureOptions options, NumericsSample reference,
              bool has_batch_norm);

  const SessionOptions& base() const { return base_; }
  const MeasureOptions& options() const { return options_; }
  // The reference `config` must reproduce. Throws what building the split reference throws.
  const NumericsSample& reference_for(const RunConfig& config);
  // One candidate with `options` (the tune's, or a round's variant of them); never
  // throws: a split reference that fails fails the candidate.
  TrialResult measure(const RunConfig& config, const MeasureOptions& options);
  TrialResult measure(const RunConfig& config) { return measure(config, options_); }
  // The leaders in interleaved rounds (measure_interleaved) with the tune's options;
  // `share_sessions`: MeasureOptions::share_sessions.
  std::vector<TrialResult> measure_interleaved(const std::vector<RunConfig>& configs,
                                               const RoundsSettled& settled,
                                               const RoundsDrop& drop = {},
                                               const RoundRan& ran = {},
                                               bool share_sessions = false);

 private:
  SessionOptions base_;
  MeasureOptions options_;
  NumericsSample reference_;
  bool has_batch_norm_;
  std::map<std::pair<int, int>, NumericsSample> split_references_;  // (replicas, micro-batches) ->
};

}  // namespace tunescope::tuner
