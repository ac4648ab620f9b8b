// What a trial is checked against and what it measures: numerics samples and their
// comparison, the reference config, and the figures of timed steps. The trials
// themselves run in TrialRunner.cpp.
#include "core/tuner/Measurement.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {

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
  for (TrialStatus s : {TrialStatus::ok, TrialStatus::invalid, TrialStatus::failed,
                        TrialStatus::skipped, TrialStatus::pruned})
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
  const double loss_error =
      std::abs(candidate.loss - reference.loss) / std::max(1.0, std::abs(reference.loss));
  if (!(loss_error <= options.loss_tolerance))
    return cat("loss ", candidate.loss, " differs from the reference's ", reference.loss,
               ": relative error ", loss_error, " > tolerance ", options.loss_tolerance);
  if (candidate.gradients.size() != reference.gradients.size())
    return cat(candidate.gradients.size(), " parameters, the reference has ",
               reference.gradients.size());
  // Matched by name: a fused build of the model orders some parameters differently.
  std::map<std::string, size_t> candidate_index;
  for (size_t i = 0; i < candidate.gradients.size(); ++i)
    candidate_index[candidate.gradients[i].parameter] = i;
  for (size_t i = 0; i < reference.gradients.size(); ++i) {
    const auto& ref = reference.gradients[i];
    const auto found = candidate_index.find(ref.parameter);
    if (found == candidate_index.end())
      return cat("the reference's parameter ", ref.parameter, " is missing");
    const auto& got = candidate.gradients[found->second];
    if (ref.values.size() != got.values.size())
      return cat("parameter ", got.parameter, ": ", got.values.size(),
                 " sampled entries, the reference has ", ref.values.size());
    const double error = relative_l2_error(ref.values, got.values);
    if (!(error <= options.gradient_tolerance))
      return cat(reference.tensor_prefix, ref.parameter, ": relative L2 error ", error,
                 " (||g - ref|| / ||ref|| over ", ref.values.size(),
                 " sampled entries) > tolerance ", options.gradient_tolerance);
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
  return config.layout() == Layout::NCHW && config.conv.per_layer.empty() &&
         config.concurrency() == Concurrency{};
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
    sample.next_batch =
        std::make_shared<const NumericsSample>(first_step_numerics(frozen, samples_per_parameter));
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
  figures.spread =
      median.estimate > 0
          ? (quantile_of_sorted(step_seconds, 0.9) - quantile_of_sorted(step_seconds, 0.1)) /
                median.estimate
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

}  // namespace tunescope::tuner
