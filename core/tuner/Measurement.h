// What a trial is checked against and what it yields: the measurement options, the
// numerics sample of a first step and its comparison with the reference's (the one
// error norm of every trial), the reference config, and a trial's figures and
// disposition. The trials run in TrialRunner.h: build, verify BEFORE timing, warm up,
// time adaptively; nothing a candidate throws escapes, so one bad candidate never ends
// a sweep.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/RunConfig.h"
#include "core/engine/TrainingSession.h"
#include "core/tuner/StepStatistics.h"
#include "core/tuner/TrialTimeLimit.h"
#include "profiler/Trace.h"

namespace tunescope::tuner {

// pruned: not measured, as predicted clearly slower than the best predicted
// (CandidatePruning.h); its reason holds the prediction.
enum class TrialStatus { ok, invalid, failed, skipped, pruned };
std::string to_string(TrialStatus status);
// Throws Error(input) for an unknown name.
TrialStatus parse_trial_status(const std::string& text);

struct WorkerTrialRequest;
struct TrialResult;
// Runs a trial of a config with workers > 1 as that many processes (WorkerTrial.h); set
// by the front end that can start them (the CLI: `mpirun -np N tunescope worker-trial`).
using WorkerLauncher = std::function<TrialResult(const WorkerTrialRequest& request)>;

struct MeasureOptions {
  int64_t warmup = 2;  // untimed steps after the numerics check
  // Adaptive timing (docs/TUNER-MEASUREMENT.md): steps are timed one by one until the 95%
  // interval of the median step time lies within +-delta/2 of it, with at least `steps`
  // and at most `max_steps` steps, and at most `max_timing_seconds` of timed steps.
  int64_t steps = 5;  // the minimum number of individually timed steps
  double delta = 0.02;
  int64_t max_steps = 200;
  double max_timing_seconds = 10;
  // Interleaved rounds: untimed steps that start each member's turn, in the same
  // train_steps call as its timed step. The first step after another member's turn
  // pays for caches and a thread pool left cold by it (docs/TUNER-MEASUREMENT.md,
  // "Settle steps, and one timed step a turn"); training never takes such a step.
  int64_t settle_steps = 1;
  // A member stops settling once the rounds show its first step of a turn costs no more
  // than delta/2 over the next (cold_start_negligible, TurnSettling.h): settling doubles
  // the rounds' steps, and where the cold start is lost in the step it buys nothing. False:
  // every turn settles (the ground truth of bench_tuning_truth, and to measure it).
  bool settle_until_negligible = true;
  // Interleaved rounds: timed steps per member per turn after the settle steps; a
  // member's round time is their mean. A tune keeps 1: the rounds' noise comes with the
  // turn, so more steps a turn narrow the rounds less than they cost (docs/
  // TUNER-MEASUREMENT.md, "Settle steps, and one timed step a turn"); a bench varies it.
  int64_t turn_steps = 1;
  // Interleaved rounds: members take their turns in turn_order (TurnOrder.h: by thread
  // count, the bound before the unbound), so that an unbound pool never follows a turn
  // that left CPUs idle. False: in the order given (a bench measures what the order does).
  bool order_turns = true;
  // Interleaved rounds: after each turn, wait (untimed) until the member's input thread
  // has prepared the batches its turn took, so that its building runs in no other
  // member's turn (docs/TUNER-MEASUREMENT.md, "Input between the turns"). False: it runs
  // on into the next turn (a bench measures what that costs).
  bool wait_for_input = true;
  // Interleaved rounds: members that differ only in their conv algorithms take their
  // turns one after another in one session (the first such member's, switched with
  // TrainingSession::use_conv), each checked in a session of its own first. Only a turn
  // that follows another session's settles, in a call of its own before the wait for
  // input, so that every timed step is a call's first step after that wait, settled or
  // not (docs/TUNER-MEASUREMENT.md, "One session for the conv mixes").
  bool share_sessions = false;
  // Ranks racing the same leaders in interleaved rounds at once (a distributed tune's
  // final rounds, DistributedTune.h): each runs its share, 1/rounds_ranks, of the
  // minimum number of rounds, and the verdict pools their paired rounds.
  int rounds_ranks = 1;
  // The cores the machine's other processes leave free (0: a quiet machine, or not
  // watched). Every timed step, of a whole config or of one layer, is charged for the CPU
  // it used beyond them (charged_step_seconds, SharedMachine.h): step_seconds and the
  // figures are of the charged times.
  double free_cores = 0;
  // Racing: step time interval of the leader so far (null: no racing). Timing stops
  // early once this candidate is slower than it with confidence (StepStatistics.h).
  std::optional<QuantileEstimate> race_against;
  // Numerics (docs/TUNER-NUMERICS.md). Loss: |loss - ref| <= loss_tolerance * max(1, |ref|).
  // The loss is a continuous function of every kernel's output, so float32 reassociation
  // (gemm, FFT, layout, threads, lanes) moves it by rounding only: measured <= 3.2e-7
  // relative on lenet5 and resnet18-small, so 1e-4 leaves 300x headroom.
  double loss_tolerance = 1e-4;
  // Gradients, per parameter tensor: the relative L2 error of its sample,
  // ||g - ref||_2 / ||ref||_2 <= gradient_tolerance. Normalised by the tensor's norm, not
  // entry by entry and not by its largest entry: tiny entries (sums that cancel, such as a
  // batch-norm beta) carry a large relative error that says nothing about the tensor.
  // Rounding alone (gemm, FFT, layout, threads, lanes) gives <= 5e-6 on resnet18-small.
  // What sets the bound is ReLU ties: a pre-activation within rounding of 0 lands on the
  // other side of the kink in a reordered sum, which switches its gradient on or off. One
  // such flip moves every gradient upstream of it by about 1/sqrt(terms summed per entry);
  // at batches of 8-32 a few occur per step, and correct candidates differed by up to
  // 2.2e-2 on one batch. A flip is an accident of one batch, a defect repeats: a candidate
  // whose first batch differs is checked once more on the next batch at the same initial
  // weights (NumericsSample::next_batch), and is invalid only if that differs too.
  // 3e-2 is 1.35x the largest single-batch flip measured; needing two batches to fail
  // squares the odds of a flip beyond it. A wrong kernel (errors of order 1) or one 5% off
  // in one layer's weight gradient cannot pass; 1e-2 in one tensor is below what a
  // one-step check can tell from a tie flip. See docs/TUNER-NUMERICS.md.
  double gradient_tolerance = 3e-2;
  size_t samples_per_parameter = 256;
  size_t top_kernels = 5;
  // Host memory a candidate may allocate on top of what is held when it starts (0: no
  // cap); beyond it the candidate fails with the reason instead of exhausting the machine.
  size_t memory_limit_bytes = 0;
  // Wall time one candidate may take from build to last timed step (0: no limit);
  // beyond it the candidate fails with the reason. In this process the limit is checked
  // between steps; an isolated candidate's child is killed at the limit.
  double time_limit_seconds = 0;
  // Measure each candidate in a forked child process, so that a crashing or hanging
  // kernel fails that candidate instead of ending the tune (see IsolatedTrial.h).
  bool isolate = false;
  // Check the numerics (one untimed first step, compared with the reference) before the
  // warm-up. Off only for a config that passed the check in an earlier measurement
  // (halving's later rounds): the same config gives the same first step, so a second
  // check would cost a step and tell nothing new.
  bool check_numerics = true;
  // How a candidate with workers > 1 is run (null: such a candidate fails, saying so).
  WorkerLauncher launch_workers;
};

// The loss and gradient samples after the first step of a session.
struct NumericsSample {
  struct Gradient {
    std::string parameter;
    std::vector<float> values;  // evenly spaced logical entries (layout-independent)
  };
  double loss = 0;
  std::vector<Gradient> gradients;
  // The reference's loss and gradients on the next batch at the same initial weights, for
  // a candidate whose first batch differs (see MeasureOptions::gradient_tolerance). Null
  // in a candidate's sample, and where the reference's second step failed: the check is
  // then one batch.
  std::shared_ptr<const NumericsSample> next_batch;
  // What the sampled tensors are, in a mismatch's reason: "gradient of <parameter>"
  // after a training step, "<pass> output" for a conv layer alone (layer_reference).
  std::string tensor_prefix = "gradient of ";
};

// `count` entries of `tensor` at evenly spaced logical indices (all of them when it has
// fewer), so NCHW and NHWC tensors sample alike.
std::vector<float> sample_logical(const Tensor& tensor, size_t count);
// Runs one step of `session` and samples its numerics.
NumericsSample first_step_numerics(TrainingSession& session, size_t samples_per_parameter);
// `options` with the weights frozen: an SGD step so small (learning rate 1e-30) that it
// rounds away against every nonzero weight, so a second step sees the initial weights on
// the next batch, unaffected by how the first step's gradients differed.
SessionOptions frozen_weights(SessionOptions options);
// The numerics of the first two batches of `options` (which must have frozen weights):
// the first step's sample, the second's in next_batch (null when that step throws).
NumericsSample two_batch_numerics(const SessionOptions& options, size_t samples_per_parameter);
// Runs the second step of a frozen session whose first step gave `sample`, and keeps its
// numerics in sample.next_batch; null when the step throws (say the training diverges),
// as only a candidate that already differs would need it.
void add_next_batch(TrainingSession& frozen, NumericsSample& sample, size_t samples_per_parameter);
// ||values - reference||_2 / ||reference||_2 (infinite for a NaN, or for any difference
// from an all-zero reference). Throws std::out_of_range when `values` is shorter.
double relative_l2_error(const std::vector<float>& reference, const std::vector<float>& values);
// Empty when `candidate` matches `reference` within the options' tolerances, else why not:
// which quantity, its observed error and the tolerance.
std::string compare_numerics(const NumericsSample& reference, const NumericsSample& candidate,
                             const MeasureOptions& options);

// The conv algorithm of the reference: the backend's registered default, which is the
// CPU's `direct` reference on cpu and cuDNN's implicit GEMM on cuda (which has no direct).
std::string reference_conv_algorithm(const std::string& backend);
// The reference every candidate is checked against: `base` with nchw and the reference
// conv algorithm on every conv layer, one lane, no batch split, synchronous update; the
// other knobs (fuse among them) as `base` has them.
// (reference_numerics runs it with frozen weights, for its second batch.)
// Throws whatever building or stepping it throws.
RunConfig reference_config(const SessionOptions& base);
// Whether `config` has the shape of reference_config() of some base: nchw, one conv
// algorithm on every layer, one lane, the whole batch at once. Which algorithm is not asked: the
// backend's default is known only where its kernels are registered, and a stored tune needs no
// more, as the tuner measures its reference before any other candidate (stored_baseline,
// StoredTune.h).
bool has_reference_shape(const RunConfig& config);
NumericsSample reference_numerics(const SessionOptions& base, const MeasureOptions& options);

struct KernelShare {
  std::string name;
  size_t calls = 0;
  double total_ms = 0;
  double share_pct = 0;
  bool operator==(const KernelShare&) const = default;
};

struct TimingFigures {
  int64_t steps = 0;
  double median_eps = 0;  // batch / median step time: the estimate every ranking uses
  double median_step_ms = 0;
  double min_step_ms = 0;
  double spread = 0;  // (p90 - p10) / median of the step times
  // The 95% order-statistic interval of median_eps (batch / the interval of the median
  // step time); 0 when unknown (fewer than 6 steps, an older build's row).
  double eps_low = 0;
  double eps_high = 0;
  StopRule stop = StopRule::none;  // why timing stopped
  bool has_interval() const { return eps_low > 0 && eps_high > 0; }
  // The interval of the median step time in seconds (unbounded without one).
  QuantileEstimate step_interval(int64_t batch) const;
};
// Figures of individually timed steps (seconds each). Empty input: all zero.
TimingFigures figures_of(std::vector<double> step_seconds, int64_t batch,
                         StopRule stop = StopRule::none);

// How much the timed steps overlapped (profiler::concurrency over the trial's trace).
struct ConcurrencyFigures {
  double concurrent_share = 0;  // share of busy time with >= 2 kernels in flight, in [0, 1]
  double mean_in_flight = 0;    // time-weighted mean of kernels in flight over busy time
  bool operator==(const ConcurrencyFigures&) const = default;
};

struct TrialResult {
  RunConfig config;
  TrialStatus status = TrialStatus::failed;
  std::string reason;
  TimingFigures figures;
  std::optional<ConcurrencyFigures> concurrency;  // ok trials (none in rows of an older results DB)
  std::vector<KernelShare> kernels;
  std::shared_ptr<const profiler::Trace> trace;  // of the timed steps (ok trials only)
  double seconds = 0;                            // wall time the measurement took
  bool remeasured = false;  // figures come from the final interleaved rounds among the leaders
  bool reused = false;      // taken from the results DB by a resumed tune, not measured now
  bool numerics_checked = false;  // this measurement ran and completed the numerics check
  // The timed steps in the order run (seconds each; the interleaved rounds pair them by
  // index). Not stored in the results DB.
  std::vector<double> step_seconds;
  // Interleaved rounds: the first step of each turn that settled (an untimed settle
  // step, timed for TurnSettling.h), paired with step_seconds by index. Not stored.
  std::vector<double> turn_first_seconds;
  // This process's CPU seconds over each timed step of a whole config, paired with
  // step_seconds (empty where not measured): what a shared machine's charge is of
  // (SharedMachine.h). Not stored.
  std::vector<double> step_cpu_seconds;
  // Single-layer trials (measure_layer): each pass's fastest run in ms, forward,
  // backward data, backward filter (zeros otherwise). A field of the record
  // (TrialRecordFields.h), so an isolated child's trial carries it back.
  std::array<double, 3> layer_pass_ms{};
};

// Every trial of the interleaved re-measurement carries a reason starting with this, so
// the results DB tells those rows from the sweep's (a resumed tune reuses only the latter).
inline constexpr const char* kRemeasureReason = "interleaved re-measurement";
// The reason of a candidate raced out of the sweep starts so (sweep_race_reason).
inline constexpr const char* kSweepRaceReason = "raced out of the sweep at ";

}  // namespace tunescope::tuner
