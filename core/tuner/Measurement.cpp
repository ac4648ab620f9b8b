// Candidate measurement: numerics check, warm-up, individually timed traced steps, and
// the conversion of anything a candidate throws into a failed disposition.
#include "core/tuner/Measurement.h"

#include <map>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <new>
#include <optional>

#include "core/base/AllocationCap.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/IsolatedTrial.h"
#include "profiler/Metrics.h"

namespace tunescope::tuner {

namespace {

using Clock = std::chrono::steady_clock;

// One live session of a candidate, from its first (checked) step to its timed steps.
// Every step it runs counts towards `limit`, which throws once the trial is over time.
class CandidateRun {
 public:
  CandidateRun(const SessionOptions& base, const RunConfig& config, TrialTimeLimit& limit)
      : config_(config), limit_(limit), options_(base) {
    apply_run_config(config, options_);
    session_ = std::make_unique<TrainingSession>(options_);
  }

  // The first step against the reference's; when it differs, the next batch at the same
  // initial weights (a session of its own with frozen weights) against the reference's
  // next batch: a ReLU tie flipped by reordering is an accident of one batch, a defect
  // repeats (MeasureOptions::gradient_tolerance).
  std::string check(const NumericsSample& reference, const MeasureOptions& options) {
    const std::string first =
        compare_numerics(reference, first_step_numerics(*session_, options.samples_per_parameter), options);
    limit_.step_done();
    if (first.empty()) return first;
    if (!reference.next_batch) return cat("first step: ", first);
    // The frozen session replaces the candidate's while it runs, so that a memory cap
    // (MeasureOptions::memory_limit_bytes) still sees one session at a time.
    session_.reset();
    std::string second;
    {
      TrainingSession frozen(frozen_weights(options_));
      first_step_numerics(frozen, options.samples_per_parameter);  // the first batch again
      limit_.step_done();
      second = compare_numerics(*reference.next_batch, first_step_numerics(frozen, options.samples_per_parameter),
                                options);
      limit_.step_done();
    }
    if (!second.empty()) return cat("first step: ", first, "; next batch at the same weights: ", second);
    // Valid: build the candidate again and rerun its first step, so that its warm-up and
    // timed steps start where they would have.
    session_ = std::make_unique<TrainingSession>(options_);
    session_->train_steps(1);
    limit_.step_done();
    return {};
  }
  void warm_up(int64_t steps) {
    if (steps > 0) session_->train_steps(steps, [&](int64_t, int64_t, const StepStats&) { limit_.step_done(); });
  }
  void start_tracing() { session_->tracer().start(); }
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  // One call of `count` steps timed step by step from the progress callback: an
  // asynchronous update overlaps the next step only within one train_steps call, so
  // timing steps one call each would drain the pipeline after every step.
  // The steps run inside a `candidate` range named by the config's label (an NVTX range
  // too), so a trace or an `nsys profile` of a tune shows which candidate ran when.
  void time_steps(int64_t count) {
    profiler::Tracer& tracer = session_->tracer();
    const profiler::RangeScope candidate(&tracer, tracer.intern(config_.label()), profiler::RangeCategory::candidate);
    auto last = Clock::now();
    session_->train_steps(count, [&](int64_t, int64_t, const StepStats&) {
      const auto now = Clock::now();
      step_seconds_.push_back(std::chrono::duration<double>(now - last).count());
      last = now;
      limit_.step_done();
    });
  }
  // Times steps in chunks until the stopping rule, racing or the time cap says stop
  // (docs/TUNER-MEASUREMENT.md). A progress callback cannot end a train_steps call, so the
  // steps run in chunks, each one call: the first of at least the minimum, then each about
  // what the interval's width says is still needed (its half-width shrinks as 1/sqrt(n)),
  // at most as many as are timed already, so that few chunk boundaries (where an
  // asynchronous update's pipeline drains) fall among the steps.
  StopRule time_adaptively(const MeasureOptions& options) {
    const StoppingRule rule{options.delta, static_cast<size_t>(options.steps), static_cast<size_t>(options.max_steps)};
    int64_t chunk = options.steps;
    for (;;) {
      time_steps(chunk);
      if (const auto stop = should_stop(step_seconds_, rule)) return *stop;
      const QuantileEstimate now = estimate_quantile(step_seconds_);
      if (options.race_against && slower_with_confidence(now, *options.race_against, options.delta))
        return StopRule::raced_out;
      double timed = 0;
      for (double s : step_seconds_) timed += s;
      // The timing cap, and half of what --trial-timeout leaves: a candidate that times
      // fine must not fail for having been timed long.
      const double seconds_left = std::min(options.max_timing_seconds - timed, limit_.seconds_left() / 2);
      const auto n = static_cast<int64_t>(step_seconds_.size());
      const double step = std::max(now.estimate, 1e-9);
      const int64_t floor_chunk = std::max<int64_t>(2, n / 4);
      if (seconds_left < step * static_cast<double>(floor_chunk)) return StopRule::time_cap;
      // Unbounded so far: up to the first count that has an interval, then doubling.
      int64_t wanted = n < kMinStepsForInterval ? kMinStepsForInterval - n : n;
      if (now.bounded()) {
        const double ratio = now.relative_half_width() / (options.delta / 2);
        wanted = static_cast<int64_t>(std::ceil(static_cast<double>(n) * (ratio * ratio - 1)));
      }
      const auto affordable = static_cast<int64_t>(std::min(seconds_left / step, 1e12));
      chunk = std::clamp<int64_t>(wanted, floor_chunk, n);
      chunk = std::min({chunk, affordable, options.max_steps - n});
    }
  }
  TrialResult finish(const MeasureOptions& options, StopRule stop) {
    profiler::Tracer& tracer = session_->tracer();
    tracer.stop();
    std::map<std::string, std::string> extra = session_->trace_metadata_extra();
    extra["candidate"] = config_.label();
    profiler::TraceMetadata metadata{session_->backend().device_description(), session_->backend().name(),
                                     to_json_text(config_), std::move(extra)};
    auto trace = std::make_shared<profiler::Trace>(tracer.collect(std::move(metadata)));
    TrialResult result;
    result.config = config_;
    result.status = TrialStatus::ok;
    result.figures = figures_of(step_seconds_, config_.batch, stop);
    result.step_seconds = step_seconds_;
    const profiler::Concurrency overlap = profiler::concurrency(*trace);
    result.concurrency = ConcurrencyFigures{overlap.concurrent_share, overlap.mean_in_flight};
    for (const auto& row : profiler::kernel_table(*trace, {}, options.top_kernels))
      result.kernels.push_back({row.name, row.calls, static_cast<double>(row.total_ns) / 1e6, row.share_pct});
    result.trace = std::move(trace);
    return result;
  }

 private:
  RunConfig config_;
  TrialTimeLimit& limit_;
  SessionOptions options_;
  std::unique_ptr<TrainingSession> session_;
  std::vector<double> step_seconds_;
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

// Entries at evenly spaced logical indices, so NCHW and NHWC tensors sample alike.
std::vector<float> sample_logical(const Tensor& tensor, size_t count) {
  if (!tensor.on_host()) return sample_logical(to_host(tensor), count);
  const Shape4 s = tensor.shape();
  const auto total = static_cast<size_t>(s.count());
  count = std::min(count, total);
  std::vector<float> values;
  values.reserve(count);
  for (size_t j = 0; j < count; ++j) {
    auto index = static_cast<int64_t>(j * total / count);
    const int64_t w = index % s.w;
    index /= s.w;
    const int64_t h = index % s.h;
    index /= s.h;
    const int64_t c = index % s.c;
    values.push_back(tensor.at(index / s.c, c, h, w));
  }
  return values;
}

}  // namespace

double relative_l2_error(const std::vector<float>& reference, const std::vector<float>& values) {
  double diff = 0, norm = 0;
  for (size_t j = 0; j < reference.size(); ++j) {
    const double d = static_cast<double>(values.at(j)) - reference[j];
    diff += d * d;
    norm += static_cast<double>(reference[j]) * reference[j];
  }
  if (std::isnan(diff)) return INFINITY;
  // An all-zero reference: any difference is infinitely wrong, none is exact.
  return norm > 0 ? std::sqrt(diff / norm) : (diff > 0 ? INFINITY : 0.0);
}

std::string to_string(TrialStatus status) {
  switch (status) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::invalid: return "invalid";
    case TrialStatus::failed: return "failed";
    case TrialStatus::skipped: return "skipped";
    case TrialStatus::pruned: return "pruned";
  }
  return "?";
}

TrialStatus parse_trial_status(const std::string& text) {
  for (TrialStatus s : {TrialStatus::ok, TrialStatus::invalid, TrialStatus::failed, TrialStatus::skipped,
                        TrialStatus::pruned})
    if (to_string(s) == text) return s;
  fail(ErrorKind::input, "unknown trial status '", text, "'");
}

NumericsSample first_step_numerics(TrainingSession& session, size_t samples_per_parameter) {
  NumericsSample sample;
  sample.loss = session.train_steps(1).stats.mean_loss();
  // The update does not clear gradients: they still hold this step's values (of the
  // whole batch: replica 0's gradients are the all-reduced ones). The first step is the
  // same with and without async update, which only changes when an update runs.
  for (const Parameter* p : session.network().parameters())
    sample.gradients.push_back({p->name, sample_logical(p->grad, samples_per_parameter)});
  return sample;
}

std::string compare_numerics(const NumericsSample& reference, const NumericsSample& candidate,
                             const MeasureOptions& options) {
  const double loss_error = std::abs(candidate.loss - reference.loss) / std::max(1.0, std::abs(reference.loss));
  if (!(loss_error <= options.loss_tolerance))
    return cat("loss ", candidate.loss, " differs from the reference's ", reference.loss,
               ": relative error ", loss_error, " > tolerance ", options.loss_tolerance);
  if (candidate.gradients.size() != reference.gradients.size())
    return cat(candidate.gradients.size(), " parameters, the reference has ", reference.gradients.size());
  // Matched by name: a fused build of the model orders some parameters differently.
  std::map<std::string, size_t> candidate_index;
  for (size_t i = 0; i < candidate.gradients.size(); ++i) candidate_index[candidate.gradients[i].parameter] = i;
  for (size_t i = 0; i < reference.gradients.size(); ++i) {
    const auto& ref = reference.gradients[i];
    const auto found = candidate_index.find(ref.parameter);
    if (found == candidate_index.end()) return cat("the reference's parameter ", ref.parameter, " is missing");
    const auto& got = candidate.gradients[found->second];
    if (ref.values.size() != got.values.size())
      return cat("parameter ", got.parameter, ": ", got.values.size(), " sampled entries, the reference has ",
                 ref.values.size());
    const double error = relative_l2_error(ref.values, got.values);
    if (!(error <= options.gradient_tolerance))
      return cat("gradient of ", ref.parameter, ": relative L2 error ", error,
                 " (||g - ref|| / ||ref|| over ", ref.values.size(), " sampled entries) > tolerance ",
                 options.gradient_tolerance);
  }
  return {};
}

std::string reference_conv_algorithm(const std::string& backend) {
  return Registry::instance().default_conv_algorithm(backend);
}

RunConfig reference_config(const SessionOptions& base) {
  RunConfig config = run_config_of(base);
  knobs::layout.set(config.knobs, Layout::NCHW);
  config.conv = ConvChoice{};
  config.conv.default_algorithm = reference_conv_algorithm(base.backend);
  knobs::set_concurrency(config.knobs, Concurrency{});  // one lane, the whole batch at once
  return config;
}

bool has_reference_shape(const RunConfig& config) {
  return config.layout() == Layout::NCHW && config.conv.per_layer.empty() && config.concurrency() == Concurrency{};
}

NumericsSample reference_numerics(const SessionOptions& base, const MeasureOptions& options) {
  SessionOptions reference = base;
  apply_run_config(reference_config(base), reference);
  return two_batch_numerics(frozen_weights(reference), options.samples_per_parameter);
}

SessionOptions frozen_weights(SessionOptions options) {
  // SessionOptions requires a positive rate. 1e-30 x a gradient is below half an ulp of
  // any weight above ~1e-22 in magnitude, so such weights stay bit-identical; a weight
  // initialised to exactly 0 (a batch-norm beta) moves to ~1e-30, far below the rounding
  // of anything it is added to.
  options.sgd.learning_rate = 1e-30f;
  return options;
}

void add_next_batch(TrainingSession& frozen, NumericsSample& sample, size_t samples_per_parameter) {
  try {
    sample.next_batch = std::make_shared<const NumericsSample>(first_step_numerics(frozen, samples_per_parameter));
  } catch (const Error&) {
    sample.next_batch = nullptr;
  }
}

NumericsSample two_batch_numerics(const SessionOptions& options, size_t samples_per_parameter) {
  TrainingSession session(options);
  NumericsSample sample = first_step_numerics(session, samples_per_parameter);
  add_next_batch(session, sample, samples_per_parameter);
  return sample;
}

TimingFigures figures_of(std::vector<double> step_seconds, int64_t batch, StopRule stop) {
  TimingFigures figures;
  figures.stop = stop;
  if (step_seconds.empty()) return figures;
  std::sort(step_seconds.begin(), step_seconds.end());
  const QuantileEstimate median = estimate_quantile(step_seconds, 0.5);
  figures.steps = static_cast<int64_t>(step_seconds.size());
  figures.median_step_ms = median.estimate * 1e3;
  figures.min_step_ms = step_seconds.front() * 1e3;
  const auto examples = static_cast<double>(batch);
  figures.median_eps = median.estimate > 0 ? examples / median.estimate : 0;
  figures.spread = median.estimate > 0
                       ? (quantile_of_sorted(step_seconds, 0.9) - quantile_of_sorted(step_seconds, 0.1)) / median.estimate
                       : 0;
  if (median.bounded() && median.low > 0) {  // a zero step time has no rate
    figures.eps_low = examples / median.high;
    figures.eps_high = examples / median.low;
  }
  return figures;
}

QuantileEstimate TimingFigures::step_interval(int64_t batch) const {
  QuantileEstimate e;
  e.n = static_cast<size_t>(steps);
  const auto examples = static_cast<double>(batch);
  if (median_eps > 0) e.estimate = examples / median_eps;
  if (has_interval()) {
    e.low = examples / eps_high;
    e.high = examples / eps_low;
    e.has_interval = true;
  }
  return e;
}

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TrialResult measure_here(const SessionOptions& base, const RunConfig& config, const NumericsSample& reference,
                         const MeasureOptions& options, StepCounter* steps) {
  const auto start = Clock::now();
  TrialResult result = disposition(config, TrialStatus::failed, "");
  std::string mismatch;
  bool checked = false;
  const auto failure = failure_of([&] {
    const ScopedAllocationCap cap(options.memory_limit_bytes);
    TrialTimeLimit limit(options.time_limit_seconds, 1, steps);
    CandidateRun run(base, config, limit);
    if (options.check_numerics) {
      mismatch = run.check(reference, options);
      checked = true;
      if (!mismatch.empty()) return;  // a fast wrong candidate is never timed
    }
    run.warm_up(options.warmup);
    run.start_tracing();
    result = run.finish(options, run.time_adaptively(options));
  });
  if (failure) result = disposition(config, TrialStatus::failed, *failure);
  else if (!mismatch.empty()) result = disposition(config, TrialStatus::invalid, mismatch);
  result.numerics_checked = checked;
  result.seconds = seconds_since(start);
  return result;
}

// Rounds at least: the sign test's smallest two-sided p with n rounds is 2^(1-n), below
// 0.05 only from 6 rounds on.
constexpr int64_t kMinimumRounds = 6;

std::vector<TrialResult> interleave_here(const SessionOptions& base, const std::vector<RunConfig>& configs,
                                         const std::vector<const NumericsSample*>& references,
                                         const MeasureOptions& options, const RoundsSettled& settled,
                                         StepCounter* steps) {
  const auto start = Clock::now();
  const auto count = static_cast<int>(configs.size());
  std::vector<TrialResult> results;
  std::string mismatch;
  const auto failure = failure_of([&] {
    const ScopedAllocationCap cap(options.memory_limit_bytes * configs.size());  // all live at once
    TrialTimeLimit limit(options.time_limit_seconds, count, steps);
    std::vector<std::unique_ptr<CandidateRun>> runs;
    for (const RunConfig& config : configs) runs.push_back(std::make_unique<CandidateRun>(base, config, limit));
    for (size_t i = 0; i < runs.size(); ++i)
      if (mismatch = runs[i]->check(*references[i], options); !mismatch.empty()) return;
    for (auto& run : runs) run->warm_up(options.warmup);
    for (auto& run : runs) run->start_tracing();
    // Round-robin single steps: each includes draining its own pipeline, alike for all.
    const int64_t minimum = std::max(options.steps, kMinimumRounds);
    const int64_t maximum = std::max(options.max_steps, minimum);
    const double time_cap = options.max_timing_seconds * static_cast<double>(runs.size());
    double timed = 0;
    std::vector<std::vector<double>> rounds(runs.size());
    for (int64_t round = 0; round < maximum; ++round) {
      double this_round = 0;
      for (size_t i = 0; i < runs.size(); ++i) {
        runs[i]->time_steps(1);
        rounds[i].push_back(runs[i]->step_seconds().back());
        this_round += rounds[i].back();
      }
      timed += this_round;
      // Also well before --trial-timeout: rounds that time fine must not fail for being many.
      const bool out_of_time = timed >= time_cap || limit.seconds_left() < 4 * this_round;
      if (round + 1 >= minimum && (out_of_time || (settled && settled(rounds)))) break;
    }
    for (auto& run : runs) results.push_back(run->finish(options, StopRule::interleaved));
  });
  // All were measured fine alone; a problem now is reported on all, not guessed at.
  const std::string why = failure ? *failure : mismatch;
  if (!why.empty()) {
    const TrialStatus status = failure ? TrialStatus::failed : TrialStatus::invalid;
    results.clear();
    for (const RunConfig& config : configs) results.push_back(disposition(config, status, cat(kRemeasureReason, ": ", why)));
  } else {
    for (TrialResult& result : results) {
      result.reason = cat(kRemeasureReason, " of ", configs.size(), " configs, ", result.figures.steps, " rounds");
      result.numerics_checked = true;
    }
  }
  for (TrialResult& result : results) result.seconds = seconds_since(start);
  return results;
}

}  // namespace

TrialResult measure(const SessionOptions& base, const RunConfig& config, const NumericsSample& reference,
                    const MeasureOptions& options) {
  if (!options.isolate) return measure_here(base, config, reference, options, nullptr);
  const auto start = Clock::now();
  ChildOutcome child = run_in_child(base.backend, {options.time_limit_seconds, 1}, [&](StepCounter& steps) {
    return std::vector{measure_here(base, config, reference, options, &steps)};
  });
  TrialResult result = child.results.empty() ? disposition(config, TrialStatus::failed, child.failure)
                                             : std::move(child.results.front());
  result.seconds = seconds_since(start);  // the child's start and the result's way back included
  return result;
}

std::vector<TrialResult> measure_interleaved(const SessionOptions& base, const std::vector<RunConfig>& configs,
                                             const std::vector<const NumericsSample*>& references,
                                             const MeasureOptions& options, const RoundsSettled& settled) {
  if (references.size() != configs.size())
    fail(ErrorKind::runtime, "measure_interleaved: ", configs.size(), " configs but ", references.size(), " references");
  if (!options.isolate) return interleave_here(base, configs, references, options, settled, nullptr);
  const auto start = Clock::now();
  const auto count = static_cast<int>(configs.size());
  ChildOutcome child = run_in_child(base.backend, {options.time_limit_seconds, count}, [&](StepCounter& steps) {
    return interleave_here(base, configs, references, options, settled, &steps);
  });
  std::vector<TrialResult> results = std::move(child.results);
  if (results.size() != configs.size()) {
    results.clear();
    for (const RunConfig& config : configs)
      results.push_back(disposition(config, TrialStatus::failed, cat(kRemeasureReason, ": ", child.failure)));
  }
  for (TrialResult& result : results) result.seconds = seconds_since(start);
  return results;
}

}  // namespace tunescope::tuner
