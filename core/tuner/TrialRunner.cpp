// The trial runner (TrialRunner.h): one guarded, verified, adaptively timed trial of a
// whole config, of interleaved leaders, or of one conv layer's algorithm.
#include "core/tuner/TrialRunner.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <new>
#include <optional>
#include <span>

#include "core/base/AlignedBuffer.h"
#include "core/base/AllocationCap.h"
#include "core/base/Backend.h"
#include "core/base/CpuLoad.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/IsolatedTrial.h"
#include "core/tuner/SharedMachine.h"
#include "core/tuner/TurnOrder.h"
#include "core/tuner/TurnSettling.h"
#include "core/tuner/WorkerTrial.h"
#include "profiler/Metrics.h"
#include "profiler/TraceSlice.h"

namespace tunescope::tuner {

namespace {

using Clock = std::chrono::steady_clock;

// Times steps in chunks (`time_steps(count)` times `count` more, appending to
// `step_seconds`) until the stopping rule, racing or the time cap says stop
// (docs/TUNER-MEASUREMENT.md). A progress callback cannot end a train_steps call, so the
// steps run in chunks, each one call: the first of at least the minimum, then each about
// what the interval's width says is still needed (its half-width shrinks as 1/sqrt(n)),
// at most as many as are timed already, so that few chunk boundaries (where an
// asynchronous update's pipeline drains) fall among the steps.
StopRule time_adaptively(const MeasureOptions& options, const std::vector<double>& step_seconds,
                         const TrialTimeLimit& limit,
                         const std::function<void(int64_t)>& time_steps) {
  const StoppingRule rule{options.delta, static_cast<size_t>(options.steps),
                          static_cast<size_t>(options.max_steps)};
  int64_t chunk = options.steps;
  for (;;) {
    time_steps(chunk);
    if (const auto stop = should_stop(step_seconds, rule)) return *stop;
    const QuantileEstimate now = estimate_quantile(step_seconds);
    if (options.race_against && slower_with_confidence(now, *options.race_against, options.delta))
      return StopRule::raced_out;
    double timed = 0;
    for (double s : step_seconds) timed += s;
    // The next chunk must fit the timing cap at the median step, and half of what
    // --trial-timeout leaves at the slowest step so far: a candidate that times fine must
    // not fail for having been timed long, even when a loaded machine slows some steps.
    const auto n = static_cast<int64_t>(step_seconds.size());
    const double step = std::max(now.estimate, 1e-9);
    const double slowest =
        std::max(*std::max_element(step_seconds.begin(), step_seconds.end()), step);
    const double affordable_steps =
        std::min((options.max_timing_seconds - timed) / step, limit.seconds_left() / 2 / slowest);
    const int64_t floor_chunk = std::max<int64_t>(2, n / 4);
    if (affordable_steps < static_cast<double>(floor_chunk)) return StopRule::time_cap;
    // Unbounded so far: up to the first count that has an interval, then doubling.
    int64_t wanted = n < kMinStepsForInterval ? kMinStepsForInterval - n : n;
    if (now.bounded()) {
      const double ratio = now.relative_half_width() / (options.delta / 2);
      wanted = static_cast<int64_t>(std::ceil(static_cast<double>(n) * (ratio * ratio - 1)));
    }
    const auto affordable = static_cast<int64_t>(std::min(affordable_steps, 1e12));
    chunk = std::clamp<int64_t>(wanted, floor_chunk, n);
    chunk = std::min({chunk, affordable, options.max_steps - n});
  }
}

// On ranks (a worker trial, WorkerTrial.h) every decision that changes which collectives
// run next (the numerics check's branch, when timing stops) must be the same on every
// rank, or one rank waits in a collective the others never join: rank 0's holds.
bool as_rank0_says(Communicator* ranks, bool value) {
  if (!ranks || ranks->size() <= 1) return value;
  std::byte flag{static_cast<unsigned char>(value ? 1 : 0)};
  ranks->broadcast(std::span(&flag, 1), 0);
  return flag != std::byte{0};
}

// One live session of a candidate, from its first (checked) step to its timed steps.
// Every step it runs counts towards `limit`, which throws once the trial is over time.
class CandidateRun {
 public:
  CandidateRun(const SessionOptions& base, const RunConfig& config, TrialTimeLimit& limit)
      : config_(config), limit_(limit), options_(base) {
    apply_run_config(config, options_);
    session_ = std::make_shared<TrainingSession>(options_);
  }

  const RunConfig& config() const { return config_; }
  const TrainingSession* session() const { return session_.get(); }
  // From now on this candidate takes its turns in `leader`'s session, which switches to
  // its conv algorithms at the start of each of its turns (MeasureOptions::
  // share_sessions); its own session is let go. Both must have passed their checks.
  void share_session_of(CandidateRun& leader) {
    session_ = leader.session_;
    shared_trace_ = leader.shared_trace_;
    shared_ = leader.shared_ = true;
  }

  // The first step against the reference's; when it differs, the next batch at the same
  // initial weights (a session of its own with frozen weights) against the reference's
  // next batch: a ReLU tie flipped by reordering is an accident of one batch, a defect
  // repeats (MeasureOptions::gradient_tolerance).
  std::string check(const NumericsSample& reference, const MeasureOptions& options) {
    std::string first = compare_numerics(
        reference, first_step_numerics(*session_, options.samples_per_parameter), options);
    limit_.step_done();
    if (as_rank0_says(options_.ranks, first.empty())) return {};
    if (first.empty()) first = "differs on rank 0";
    if (!reference.next_batch) return cat("first step: ", first);
    // The frozen session replaces the candidate's while it runs, so that a memory cap
    // (MeasureOptions::memory_limit_bytes) still sees one session at a time.
    session_.reset();
    std::string second;
    {
      TrainingSession frozen(frozen_weights(options_));
      first_step_numerics(frozen, options.samples_per_parameter);  // the first batch again
      limit_.step_done();
      second =
          compare_numerics(*reference.next_batch,
                           first_step_numerics(frozen, options.samples_per_parameter), options);
      limit_.step_done();
    }
    if (!as_rank0_says(options_.ranks, second.empty())) {
      if (second.empty()) second = "differs on rank 0";
      return cat("first step: ", first, "; next batch at the same weights: ", second);
    }
    // Valid: build the candidate again and rerun its first step, so that its warm-up and
    // timed steps start where they would have.
    session_ = std::make_shared<TrainingSession>(options_);
    session_->train_steps(1);
    limit_.step_done();
    return {};
  }
  void warm_up(int64_t steps) {
    if (steps > 0)
      session_->train_steps(steps, [&](int64_t, int64_t, const StepStats&) { limit_.step_done(); });
  }
  void start_tracing() { session_->tracer().start(); }
  // The first step of each call that settled: what the cold start costs (TurnSettling.h).
  const std::vector<double>& turn_first_seconds() const { return turn_first_seconds_; }
  // One call of `count` steps timed step by step from the progress callback: an
  // asynchronous update overlaps the next step only within one train_steps call, so
  // timing steps one call each would drain the pipeline after every step.
  // The steps run inside a `candidate` range named by the config's label (an NVTX range
  // too), so a trace or an `nsys profile` of a tune shows which candidate ran when.
  // `settle` untimed steps first, in the same call (the interleaved rounds' turns), or
  // with `settle_apart` in a call of their own followed by the wait for input
  // (MeasureOptions::share_sessions).
  // Each step's time is charged for the CPU it used beyond `free_cores` (SharedMachine.h;
  // 0: wall time; a bound run: wall time, free_cores_charged), so that every ranking, race
  // and test of the tune sees the same time. Returns the call's mean timed step (a
  // member's round time in interleaved rounds; 0 when it timed none). `wait_input`: then
  // waits, untimed, for the input thread to prepare the batches this call took
  // (MeasureOptions::wait_for_input).
  double time_steps(int64_t count, int64_t settle, double free_cores, bool wait_input = false,
                    bool settle_apart = false) {
    if (shared_) session_->use_conv(config_.conv);  // it ran another member's since
    profiler::Tracer& tracer = session_->tracer();
    const profiler::RangeScope candidate(&tracer, tracer.intern(config_.label()),
                                         profiler::RangeCategory::candidate);
    const double charged_against = free_cores_charged(config_, free_cores);
    const size_t before = step_seconds_.size();
    if (settle_apart && settle > 0) {
      run_call(0, settle, charged_against);
      if (wait_input) session_->train_loader().wait_prefetched();
      settle = 0;
    }
    run_call(count, settle, charged_against);
    if (wait_input) session_->train_loader().wait_prefetched();
    // Ranks time with rank 0's step times, so that they stop timing together.
    if (Communicator* ranks = options_.ranks; ranks && ranks->size() > 1)
      ranks->broadcast(std::as_writable_bytes(std::span(step_seconds_).subspan(before)), 0);
    if (step_seconds_.size() == before) return 0;
    double sum = 0;
    for (size_t i = before; i < step_seconds_.size(); ++i) sum += step_seconds_[i];
    return sum / static_cast<double>(step_seconds_.size() - before);
  }
  StopRule time_adaptively(const MeasureOptions& options) {
    return tuner::time_adaptively(options, step_seconds_, limit_,
                                  [&](int64_t count) { time_steps(count, 0, options.free_cores); });
  }
  // The figures and step_seconds are of every timed step.
  TrialResult finish(const MeasureOptions& options, StopRule stop) {
    return finish(options, stop, step_seconds_);
  }
  // The same of `seconds` instead (interleaved rounds: the member's round times).
  TrialResult finish(const MeasureOptions& options, StopRule stop,
                     const std::vector<double>& seconds) {
    // A shared session's trace is collected once, by the first of its members to finish.
    std::shared_ptr<const profiler::Trace>& collected = *shared_trace_;
    if (!collected) {
      profiler::Tracer& tracer = session_->tracer();
      tracer.stop();
      profiler::TraceMetadata metadata{session_->backend().device_description(),
                                       session_->backend().name(),
                                       to_json_text(config_),
                                       {{"candidate", config_.label()}}};
      collected = std::make_shared<profiler::Trace>(tracer.collect(std::move(metadata)));
    }
    // Of a shared session, this member's turns only.
    std::shared_ptr<const profiler::Trace> trace = collected;
    if (shared_) {
      auto own = std::make_shared<profiler::Trace>(
          profiler::within_ranges(*collected, config_.label(), profiler::RangeCategory::candidate));
      own->metadata.config = to_json_text(config_);
      own->metadata.extra["candidate"] = config_.label();
      trace = std::move(own);
    }
    TrialResult result;
    result.config = config_;
    result.status = TrialStatus::ok;
    result.figures = figures_of(seconds, config_.batch, stop);
    result.step_seconds = seconds;
    result.turn_first_seconds = turn_first_seconds_;
    result.step_cpu_seconds = step_cpu_seconds_;
    const profiler::Concurrency overlap = profiler::concurrency(*trace);
    result.concurrency = ConcurrencyFigures{overlap.concurrent_share, overlap.mean_in_flight};
    for (const auto& row : profiler::kernel_table(*trace, {}, options.top_kernels))
      result.kernels.push_back(
          {row.name, row.calls, static_cast<double>(row.total_ns) / 1e6, row.share_pct});
    result.trace = std::move(trace);
    return result;
  }

 private:
  RunConfig config_;
  TrialTimeLimit& limit_;
  SessionOptions options_;
  // One train_steps call of `settle` untimed steps and then `count` timed ones; the first
  // settle step's time goes to turn_first_seconds_.
  void run_call(int64_t count, int64_t settle, double charged_against) {
    auto last = Clock::now();
    double last_cpu = process_cpu_seconds();
    session_->train_steps(settle + count, [&](int64_t step, int64_t, const StepStats&) {
      const auto now = Clock::now();
      const double cpu = process_cpu_seconds();
      const double seconds = charged_step_seconds(std::chrono::duration<double>(now - last).count(),
                                                  cpu - last_cpu, charged_against);
      if (step > settle) {
        step_seconds_.push_back(seconds);
        step_cpu_seconds_.push_back(cpu - last_cpu);
      }
      if (step == 1 && settle > 0) turn_first_seconds_.push_back(seconds);
      last = now;
      last_cpu = cpu;
      limit_.step_done();
    });
  }

  std::shared_ptr<TrainingSession> session_;
  bool shared_ = false;  // session_ is also another member's
  // The trace of session_, once collected (shared with the members sharing session_).
  std::shared_ptr<std::shared_ptr<const profiler::Trace>> shared_trace_ =
      std::make_shared<std::shared_ptr<const profiler::Trace>>();
  std::vector<double> step_seconds_;
  std::vector<double> turn_first_seconds_;
  std::vector<double> step_cpu_seconds_;  // this process's CPU over each timed step
};

// Runs `body`, turning every exception into a failed result naming the candidate: one
// bad candidate (bad_alloc, NaN loss, a throwing kernel) must not end the sweep.
template <typename Body>
std::optional<std::string> failure_of(Body&& body) {
  try {
    body();
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return std::string("allocation failed (std::bad_alloc)");
  } catch (const std::exception& e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("unknown exception");
  }
}

TrialResult disposition(const RunConfig& config, TrialStatus status, std::string reason) {
  TrialResult result;
  result.config = config;
  result.status = status;
  result.reason = std::move(reason);
  return result;
}
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What a trial's body tells its guard besides its result.
struct TrialState {
  std::string mismatch;  // set: the numerics differ from the reference's (invalid)
  bool checked = false;  // the numerics check ran to its end
};
using TrialBody = std::function<TrialResult(TrialTimeLimit& limit, TrialState& state)>;

// One trial in this process under its limits: the memory cap and the time limit around
// `body`, anything it throws turned into a failed disposition, a mismatch into invalid.
TrialResult guarded_here(const RunConfig& config, const MeasureOptions& options, StepCounter* steps,
                         const TrialBody& body) {
  const auto start = Clock::now();
  TrialResult result = disposition(config, TrialStatus::failed, "");
  TrialState state;
  const auto failure = failure_of([&] {
    const ScopedAllocationCap cap(options.memory_limit_bytes);
    TrialTimeLimit limit(options.time_limit_seconds, 1, steps);
    result = body(limit, state);
  });
  if (failure)
    result = disposition(config, TrialStatus::failed, *failure);
  else if (!state.mismatch.empty())
    result = disposition(config, TrialStatus::invalid, state.mismatch);
  result.numerics_checked = state.checked;
  result.seconds = seconds_since(start);
  return result;
}

// One trial under its guard, in a child process when options.isolate is set.
TrialResult guarded(const std::string& backend, const RunConfig& config,
                    const MeasureOptions& options, const TrialBody& body) {
  if (!options.isolate) return guarded_here(config, options, nullptr, body);
  const auto start = Clock::now();
  ChildOutcome child = run_in_child(
      backend, {options.time_limit_seconds, 1},
      [&](StepCounter& steps) { return std::vector{guarded_here(config, options, &steps, body)}; });
  TrialResult result = child.results.empty()
                           ? disposition(config, TrialStatus::failed, child.failure)
                           : std::move(child.results.front());
  result.seconds = seconds_since(start);  // the child's start and the result's way back included
  return result;
}

// Inputs, filters and output gradients of one layer, filled with a fixed pseudo-random
// pattern, in `memory` (the backend's): the reference and every algorithm see the same.
struct LayerTensors {
  Tensor x, w, dy;
  explicit LayerTensors(const ConvProblem& p, MemorySpace& memory = host_memory())
      : x(p.input, p.layout), w(p.filter(), p.layout), dy(p.output(), p.layout) {
    uint32_t state = 12345;
    for (Tensor* t : {&x, &w, &dy}) {
      for (int64_t i = 0; i < t->size(); ++i) {
        state = state * 1664525u + 1013904223u;
        t->data()[i] = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
      }
      if (&memory != &t->memory()) *t = to_memory(*t, memory);
    }
  }
};

struct LayerOutputs {
  Tensor y, dx, dw;
  LayerOutputs(const ConvProblem& p, MemorySpace& memory = host_memory())
      : y(p.output(), p.layout, memory),
        dx(p.input, p.layout, memory),
        dw(p.filter(), p.layout, memory) {}
  // The three tensors in full as a numerics sample (loss 0), compared like a step's gradients.
  NumericsSample sample() const {
    NumericsSample s;
    s.tensor_prefix = "";
    const auto all = static_cast<size_t>(-1);
    s.gradients = {{"forward output y", sample_logical(y, all)},
                   {"backward-data output dx", sample_logical(dx, all)},
                   {"backward-filter output dw", sample_logical(dw, all)}};
    return s;
  }
};

// Rounds at least: the sign-flip test's smallest two-sided p with n rounds is 2^(1-n), below
// 0.05 only from 6 rounds on.
constexpr int64_t kMinimumRounds = 6;

}  // namespace

int64_t minimum_rounds(const MeasureOptions& options) {
  const int64_t ranks = std::max(options.rounds_ranks, 1);
  return (std::max(options.steps, kMinimumRounds) + ranks - 1) / ranks;
}

int64_t maximum_rounds(const MeasureOptions& options) {
  return std::max(options.max_steps, minimum_rounds(options));
}

namespace {

// The first round after which the rounds look for drops: the separation test's first
// look, before the minimum (race_drops), on one rank; with partners, the minimum (their
// rounds join the looks from there: RoundsPartners).
int64_t first_drop_look(const MeasureOptions& options) {
  const int64_t minimum = minimum_rounds(options);
  return options.rounds_ranks > 1
             ? minimum
             : std::min(minimum, static_cast<int64_t>(kEarliestSeparationLook));
}

// Whether two configs differ in nothing but their conv algorithms.
bool differ_only_in_conv(const RunConfig& a, const RunConfig& b) {
  return a.model == b.model && a.batch == b.batch && a.knobs == b.knobs;
}

// Each racing member takes its turns in the session of the first racing member (in turn
// order) that differs from it only in conv algorithms (MeasureOptions::share_sessions).
// Returns the turn order with each session's members one after another, in the order the
// sessions first take a turn: only the first of them settles.
std::vector<size_t> share_sessions(const std::vector<std::unique_ptr<CandidateRun>>& runs,
                                   const std::vector<size_t>& racing) {
  std::vector<std::vector<size_t>> groups;  // by leader, the leader first
  for (size_t i : racing) {
    const auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return differ_only_in_conv(runs[g.front()]->config(), runs[i]->config());
    });
    if (group == groups.end()) {
      groups.push_back({i});
    } else {
      runs[i]->share_session_of(*runs[group->front()]);
      group->push_back(i);
    }
  }
  std::vector<size_t> order;
  for (const auto& group : groups) order.insert(order.end(), group.begin(), group.end());
  return order;
}

std::vector<TrialResult> interleave_here(const SessionOptions& base,
                                         const std::vector<RunConfig>& configs,
                                         const std::vector<const NumericsSample*>& references,
                                         const MeasureOptions& options,
                                         const RoundsSettled& settled, const RoundsDrop& drop,
                                         const RoundRan& ran, StepCounter* steps) {
  const auto start = Clock::now();
  const auto count = static_cast<int>(configs.size());
  std::vector<TrialResult> results;
  std::vector<std::string> mismatch(configs.size());  // non-empty: invalid, never timed
  std::vector<bool> dropped(configs.size(), false);
  const auto failure = failure_of([&] {
    const ScopedAllocationCap cap(options.memory_limit_bytes * configs.size());  // all live at once
    TrialTimeLimit limit(options.time_limit_seconds, count, steps);
    std::vector<std::unique_ptr<CandidateRun>> runs;
    for (const RunConfig& config : configs)
      runs.push_back(std::make_unique<CandidateRun>(base, config, limit));
    std::vector<size_t> racing;  // the members still timed, in turn order
    const std::vector<size_t> order = rounds_turns(configs, options.order_turns);
    for (size_t i : order) {
      mismatch[i] = runs[i]->check(*references[i], options);
      if (mismatch[i].empty())
        racing.push_back(i);
      else
        runs[i].reset();  // a wrong member's session is not kept alive
    }
    // No warm-up steps: the check's step warmed each session up. Each turn starts with
    // options.settle_steps untimed steps: the first step after another member's turn
    // pays for what that member left cold, by an amount that differs by config.
    if (options.share_sessions) racing = share_sessions(runs, racing);
    for (size_t i : racing) runs[i]->start_tracing();
    // Round-robin turns, each draining its own pipeline, alike for all: one timed step a
    // turn unless options.turn_steps says more (a bench's knob: more steps a turn narrow
    // the rounds less than they cost, docs/TUNER-MEASUREMENT.md).
    const int64_t minimum = minimum_rounds(options);
    const int64_t first_look = first_drop_look(options);
    const int64_t maximum = maximum_rounds(options);
    const double time_cap = options.max_timing_seconds * static_cast<double>(runs.size());
    double timed = 0;
    std::vector<std::vector<double>> rounds(runs.size());
    std::vector<int64_t> settle(runs.size(), std::max<int64_t>(options.settle_steps, 0));
    // The round times of the turns that settled first, paired with their first steps.
    std::vector<std::vector<double>> settled_rounds(runs.size());
    std::vector<bool> behind(runs.size(), false);  // far_behind after the last round
    const TrainingSession* previous = nullptr;     // the session of the turn before
    for (int64_t round = 0; round < maximum && !racing.empty(); ++round) {
      double this_round = 0;
      for (size_t i : racing) {
        const bool same_session = options.share_sessions && runs[i]->session() == previous;
        previous = runs[i]->session();
        const int64_t settle_now =
            (behind[i] && options.settle_until_negligible) || same_session ? int64_t{0} : settle[i];
        // The cap counts the settle steps too: it bounds what the rounds cost.
        const auto turn_start = Clock::now();
        rounds[i].push_back(runs[i]->time_steps(std::max<int64_t>(options.turn_steps, 1),
                                                settle_now, options.free_cores,
                                                options.wait_for_input, options.share_sessions));
        this_round += seconds_since(turn_start);
        if (settle_now > 0) settled_rounds[i].push_back(rounds[i].back());
        // Settling stops for good once it is shown to buy less than delta/2.
        if (settle[i] > 0 && options.settle_until_negligible &&
            cold_start_negligible(runs[i]->turn_first_seconds(), settled_rounds[i], options.delta))
          settle[i] = 0;
      }
      behind = far_behind(rounds, racing);
      timed += this_round;
      if (ran) ran(rounds);
      if (round + 1 < first_look) continue;
      if (round + 1 >= minimum) {
        // Also well before --trial-timeout: rounds that time fine must not fail for being
        // many.
        const bool out_of_time = timed >= time_cap || limit.seconds_left() < 4 * this_round;
        if (out_of_time || (settled && settled(rounds))) break;
      }
      if (drop)  // after `settled`: a member dropped now has fewer rounds at the next look
        for (size_t i : drop(rounds))
          if (i < dropped.size() && !dropped[i] && mismatch[i].empty()) {
            dropped[i] = true;
            racing.erase(std::remove(racing.begin(), racing.end(), i), racing.end());
          }
      if (racing.size() <= 1) break;
    }
    for (size_t i = 0; i < runs.size(); ++i)
      results.push_back(
          mismatch[i].empty()
              ? runs[i]->finish(options, dropped[i] ? StopRule::raced_out : StopRule::interleaved,
                                rounds[i])
              : disposition(configs[i], TrialStatus::invalid,
                            cat(kRemeasureReason, ": ", mismatch[i])));
  });
  if (failure) {  // a problem while all ran is reported on all, not guessed at
    results.clear();
    for (const RunConfig& config : configs)
      results.push_back(
          disposition(config, TrialStatus::failed, cat(kRemeasureReason, ": ", *failure)));
  } else {
    for (TrialResult& result : results) {
      if (result.status == TrialStatus::ok)
        result.reason = cat(kRemeasureReason, " of ", configs.size(), " configs, ",
                            result.figures.steps, " rounds");
      result.numerics_checked = true;
    }
  }
  for (TrialResult& result : results) result.seconds = seconds_since(start);
  return results;
}

// A candidate with workers > 1, from a single process: its ranks are processes of their
// own, started by the front end's launcher (WorkerTrial.h).
TrialResult measure_as_workers(const SessionOptions& base, const RunConfig& config,
                               const NumericsSample& reference, const MeasureOptions& options) {
  const auto start = Clock::now();
  TrialResult result;
  if (!options.launch_workers) {
    result = disposition(config, TrialStatus::failed,
                         cat("workers=", workers_of(config),
                             ": this tune cannot start worker processes (no launcher: "
                             "`tunescope tune` starts them with mpirun)"));
  } else {
    WorkerTrialRequest request{base, config, reference, options};
    request.base.ranks = nullptr;
    request.options.launch_workers = nullptr;
    if (const auto failure = failure_of([&] { result = options.launch_workers(request); }))
      result = disposition(config, TrialStatus::failed, *failure);
    result.config = config;
  }
  result.seconds = seconds_since(start);
  return result;
}

// Members run as worker processes cannot share one process's rounds of single steps, so
// with any such member each round is one short trial of every member still racing
// (options.steps steps, each member in its own process or processes again), round-robin
// as interleave_here's single steps are, the round's time being that trial's median step:
// slow drift of the machine still hits all alike, at the price of a build per round.
std::vector<TrialResult> interleave_trials(const SessionOptions& base,
                                           const std::vector<RunConfig>& configs,
                                           const std::vector<const NumericsSample*>& references,
                                           const MeasureOptions& options,
                                           const RoundsSettled& settled, const RoundsDrop& drop,
                                           const RoundRan& ran) {
  const auto start = Clock::now();
  const size_t count = configs.size();
  std::vector<TrialResult> last(count);     // each member's latest ok trial (trace, kernels)
  std::vector<std::string> refused(count);  // non-empty: invalid or failed, out of the race
  std::vector<TrialStatus> refused_as(count, TrialStatus::failed);
  std::vector<bool> dropped(count, false);
  std::vector<std::vector<double>> rounds(count);
  std::vector<size_t> racing(count);
  for (size_t i = 0; i < count; ++i) racing[i] = i;
  MeasureOptions round_options = options;
  round_options.race_against.reset();
  round_options.max_steps = round_options.steps;  // a fixed count: one round's sample
  const int64_t minimum = minimum_rounds(options);
  const int64_t first_look = first_drop_look(options);
  const int64_t maximum = std::min(maximum_rounds(options), 2 * minimum);
  const double time_cap = options.max_timing_seconds * static_cast<double>(count);
  double timed = 0;
  for (int64_t round = 0; round < maximum && !racing.empty(); ++round) {
    round_options.check_numerics = round == 0 && options.check_numerics;
    for (size_t i : std::vector<size_t>(racing)) {
      TrialResult trial = measure(base, configs[i], *references[i], round_options);
      if (trial.status != TrialStatus::ok) {
        refused[i] = trial.reason;
        refused_as[i] = trial.status;
        racing.erase(std::remove(racing.begin(), racing.end(), i), racing.end());
        continue;
      }
      rounds[i].push_back(trial.figures.median_step_ms / 1e3);
      for (double s : trial.step_seconds) timed += s;
      last[i] = std::move(trial);
    }
    if (ran) ran(rounds);
    if (round + 1 < first_look) continue;
    if (round + 1 >= minimum && (timed >= time_cap || (settled && settled(rounds)))) break;
    if (drop)
      for (size_t i : drop(rounds))
        if (i < count && !dropped[i] && refused[i].empty()) {
          dropped[i] = true;
          racing.erase(std::remove(racing.begin(), racing.end(), i), racing.end());
        }
    if (racing.size() <= 1) break;
  }
  std::vector<TrialResult> results;
  for (size_t i = 0; i < count; ++i) {
    if (!refused[i].empty()) {
      results.push_back(
          disposition(configs[i], refused_as[i], cat(kRemeasureReason, ": ", refused[i])));
    } else {
      TrialResult result = std::move(last[i]);
      result.figures = figures_of(rounds[i], configs[i].batch,
                                  dropped[i] ? StopRule::raced_out : StopRule::interleaved);
      result.step_seconds = rounds[i];
      result.reason = cat(kRemeasureReason, " of ", count, " configs, ", rounds[i].size(),
                          " rounds of whole trials");
      results.push_back(std::move(result));
    }
    results.back().numerics_checked = true;
    results.back().seconds = seconds_since(start);
  }
  return results;
}

}  // namespace

TrialResult measure(const SessionOptions& base, const RunConfig& config,
                    const NumericsSample& reference, const MeasureOptions& options) {
  if (workers_of(config) > 1 && base.rank_count() == 1)
    return measure_as_workers(base, config, reference, options);
  return guarded(base.backend, config, options, [&](TrialTimeLimit& limit, TrialState& state) {
    CandidateRun run(base, config, limit);
    if (options.check_numerics) {
      state.mismatch = run.check(reference, options);
      state.checked = true;
      if (!state.mismatch.empty()) return TrialResult{};  // a fast wrong candidate is never timed
    }
    run.warm_up(options.warmup);
    run.start_tracing();
    return run.finish(options, run.time_adaptively(options));
  });
}

NumericsSample layer_reference(const ConvProblem& problem) {
  const LayerTensors in(problem);
  LayerOutputs reference(problem);
  ThreadPool pool(1);
  const ExecContext exec{pool, nullptr, 0, 0};
  auto direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  AlignedBuffer workspace(direct->workspace_bytes(problem));
  const ConvCall call{problem, exec, workspace.data(), workspace.bytes()};
  direct->forward(call, in.x, in.w, reference.y);
  direct->backward_data(call, in.dy, in.w, reference.dx);
  direct->backward_filter(call, in.x, in.dy, reference.dw);
  return reference.sample();
}

TrialResult measure_layer(const LayerTrial& trial, const NumericsSample& reference,
                          const MeasureOptions& options) {
  return guarded(
      trial.backend, trial.config, options, [&](TrialTimeLimit& limit, TrialState& state) {
        const ConvProblem& problem = trial.problem;
        const std::unique_ptr<Backend> backend = Registry::instance().make_backend(trial.backend);
        MemorySpace& memory = backend->memory();
        ThreadPool pool(trial.threads);
        const ExecContext exec{pool, nullptr, 0, 0, backend->lane_stream(0, 0)};
        const LayerTensors in(problem, memory);
        auto algorithm = Registry::instance().make_conv_algorithm(trial.backend, trial.algorithm);
        AlignedBuffer workspace(algorithm->workspace_bytes(problem), memory);
        const ConvCall call{problem, exec, workspace.data(), workspace.bytes()};
        LayerOutputs got(problem, memory);
        // Each pass timed to its end (device kernels too); the fastest of each is kept for
        // the step-time predictor, which adds only the passes a layer runs.
        std::array<double, 3> fastest_ms;
        fastest_ms.fill(INFINITY);
        auto run_all = [&] {
          const auto timed = [&](size_t pass, auto&& run) {
            const auto start = Clock::now();
            run();
            backend->finish_stream(exec.stream);
            fastest_ms[pass] = std::min(fastest_ms[pass], seconds_since(start) * 1e3);
          };
          timed(0, [&] { algorithm->forward(call, in.x, in.w, got.y); });
          timed(1, [&] { algorithm->backward_data(call, in.dy, in.w, got.dx); });
          timed(2, [&] { algorithm->backward_filter(call, in.x, in.dy, got.dw); });
          limit.step_done();
        };
        run_all();  // first run: plans, caches, page faults; also the one checked
        fastest_ms.fill(INFINITY);
        if (options.check_numerics) {
          if (std::string why = compare_numerics(reference, got.sample(), options); !why.empty())
            state.mismatch = cat("wrong results vs direct: ", why);
          state.checked = true;
          if (!state.mismatch.empty()) return TrialResult{};
        }
        // Run by run until one confirms the fastest (fastest_confirmed), from options.steps
        // to options.max_steps runs: the find ranks by the fastest run, and on a quiet
        // machine two runs agree where five only cost more.
        std::vector<double> seconds;
        double timed = 0;
        StopRule stop = StopRule::max_steps;
        const auto minimum = static_cast<size_t>(std::max<int64_t>(1, options.steps));
        const auto maximum =
            static_cast<size_t>(std::max<int64_t>(options.steps, options.max_steps));
        while (seconds.size() < maximum) {
          const auto start = Clock::now();
          const double cpu = process_cpu_seconds();
          run_all();
          seconds.push_back(charged_step_seconds(seconds_since(start), process_cpu_seconds() - cpu,
                                                 options.free_cores));
          timed += seconds.back();
          if (seconds.size() >= minimum && fastest_confirmed(seconds, options.delta)) {
            stop = StopRule::converged;
            break;
          }
          if (timed >= options.max_timing_seconds || limit.seconds_left() < 2 * seconds.back()) {
            stop = StopRule::time_cap;
            break;
          }
        }
        TrialResult result = disposition(trial.config, TrialStatus::ok, "");
        result.figures = figures_of(seconds, problem.input.n, stop);
        result.step_seconds = std::move(seconds);
        result.layer_pass_ms = fastest_ms;
        return result;
      });
}

std::vector<TrialResult> measure_interleaved(const SessionOptions& base,
                                             const std::vector<RunConfig>& configs,
                                             const std::vector<const NumericsSample*>& references,
                                             const MeasureOptions& options,
                                             const RoundsSettled& settled, const RoundsDrop& drop,
                                             const RoundRan& ran) {
  if (references.size() != configs.size())
    fail(ErrorKind::runtime, "measure_interleaved: ", configs.size(), " configs but ",
         references.size(), " references");
  if (std::any_of(configs.begin(), configs.end(),
                  [&](const RunConfig& c) { return workers_of(c) > 1 && base.rank_count() == 1; }))
    return interleave_trials(base, configs, references, options, settled, drop, ran);
  if (!options.isolate)
    return interleave_here(base, configs, references, options, settled, drop, ran, nullptr);
  const auto start = Clock::now();
  const auto count = static_cast<int>(configs.size());
  ChildOutcome child =
      run_in_child(base.backend, {options.time_limit_seconds, count}, [&](StepCounter& steps) {
        return interleave_here(base, configs, references, options, settled, drop, ran, &steps);
      });
  std::vector<TrialResult> results = std::move(child.results);
  if (results.size() != configs.size()) {
    results.clear();
    for (const RunConfig& config : configs)
      results.push_back(
          disposition(config, TrialStatus::failed, cat(kRemeasureReason, ": ", child.failure)));
  }
  for (TrialResult& result : results) result.seconds = seconds_since(start);
  return results;
}

TrialRunner::TrialRunner(SessionOptions base, MeasureOptions options, NumericsSample reference,
                         bool has_batch_norm)
    : base_(std::move(base)),
      options_(std::move(options)),
      reference_(std::move(reference)),
      has_batch_norm_(has_batch_norm) {}

const NumericsSample& TrialRunner::reference_for(const RunConfig& config) {
  // Batch norm normalises over what one replica sees, so a split changes the maths (as
  // in real data-parallel training): such candidates are checked against the reference
  // run with the same split. Without batch norm a split must reproduce the whole batch.
  // Workers split the batch as replicas do (rank r's rows, then its replicas'), so
  // N workers of R replicas each are checked against N x R replicas in one process.
  const Concurrency c = config.concurrency();
  const int replicas = c.replicas * workers_of(config);
  if (!has_batch_norm_ || replicas * c.micro_batches == 1) return reference_;
  const auto key = std::pair(replicas, c.micro_batches);
  auto it = split_references_.find(key);
  if (it == split_references_.end()) {
    SessionOptions split = base_;
    apply_run_config(reference_config(base_), split);
    knobs::replicas.set(split.knobs, replicas);
    knobs::micro_batches.set(split.knobs, c.micro_batches);
    it =
        split_references_
            .emplace(key, two_batch_numerics(frozen_weights(split), options_.samples_per_parameter))
            .first;
  }
  return it->second;
}

TrialResult TrialRunner::measure(const RunConfig& config, const MeasureOptions& options) {
  const NumericsSample* reference = nullptr;
  try {
    reference = &reference_for(config);
  } catch (const std::exception& e) {
    return disposition(config, TrialStatus::failed,
                       cat("the reference with the same split failed: ", e.what()));
  }
  return tuner::measure(base_, config, *reference, options);
}

std::vector<TrialResult> TrialRunner::measure_interleaved(const std::vector<RunConfig>& configs,
                                                          const RoundsSettled& settled,
                                                          const RoundsDrop& drop,
                                                          const RoundRan& ran,
                                                          bool share_sessions) {
  std::vector<const NumericsSample*> references;
  try {
    for (const RunConfig& config : configs) references.push_back(&reference_for(config));
  } catch (const std::exception&) {  // every one of them was checked against it in the sweep
    fail(ErrorKind::runtime, "the reference of a leader's split failed when it had run before");
  }
  MeasureOptions options = options_;
  options.race_against.reset();
  options.share_sessions = share_sessions;
  return tuner::measure_interleaved(base_, configs, references, options, settled, drop, ran);
}

}  // namespace tunescope::tuner
