// How well StepTimePredictor (core/tuner) predicts a config's step time: for a space of
// layouts x uniform algorithms x thread counts plus per-layer mixes (per layout and
// thread count: the find's per-layer pick, and the runnable algorithms dealt round the
// layers), it runs the per-layer find once per (layout, threads), measures the reference
// config (nchw, direct, the first thread count) traced as a tune does, predicts every
// config from those two, then measures every config in interleaved rounds and compares.
// Prints one tab-separated line per config (label, predicted ms, measured ms, its 95%
// interval, error), then the median and max |pred - meas| / meas and Spearman's rank
// correlation of predicted and measured step times.
//
//   bench_step_prediction --model lenet5 --batch 128 [--data fake] [--layouts nchw,nhwc]
//                         [--algorithms direct,gemm,...] [--threads 1,2] [--rounds 30]
//                         [--delta 0.04] [--max-seconds 30]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "bench/SpaceBenchOptions.h"
#include "core/base/Error.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "core/tuner/Measurement.h"
#include "core/tuner/PerLayerFind.h"
#include "core/tuner/SearchSpace.h"
#include "core/tuner/StepStatistics.h"
#include "core/tuner/StepTimePredictor.h"
#include "core/tuner/TrialRunner.h"

namespace {

using namespace tunescope;
using namespace tunescope::tuner;

using bench::split;

std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> rank(values.size());
  for (size_t i = 0; i < order.size();) {  // ties share their mean rank
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = (static_cast<double>(i + j) / 2) + 1;
    i = j + 1;
  }
  return rank;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return cov / std::sqrt(va * vb);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  bench::SpaceBenchOptions o;
  o.delta = 0.04;
  o.max_seconds = 30;
  o.threads = "1,2";
  int64_t rounds = 30;
  try {
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string key = argv[i], value = argv[i + 1];
      if (o.take(key, value)) continue;
      if (key == "--rounds")
        rounds = std::stoll(value);
      else
        fail(ErrorKind::usage, "unknown option ", key);
    }
    o.check();
    if (rounds < 6 || rounds > 100000) fail(ErrorKind::usage, "--rounds 6..100000");
    SessionOptions& base = o.base;
    const std::string &layouts = o.layouts, &algorithms = o.algorithms, &threads = o.threads;
    const double delta = o.delta, max_seconds = o.max_seconds;

    KnobLists lists;
    lists.set_text(knobs::layout.spec(), split(layouts));
    lists.set_text(knobs::threads.spec(), split(threads));
    lists.check();
    const std::vector<int> thread_counts = lists.get(knobs::threads);
    knobs::threads.set(base.knobs, thread_counts.front());  // the reference's, as in a tune

    // The conv layers, from the reference network.
    SessionOptions ref_options = base;
    apply_run_config(reference_config(base), ref_options);
    std::vector<ConvLayerInfo> layers;
    {
      TrainingSession session(ref_options);
      layers = conv_layers(session.network());
    }
    const SearchSpace space({base.model, base.batch, base.backend, split(algorithms), false, lists},
                            layers);

    const auto find_start = std::chrono::steady_clock::now();
    std::vector<LayerFind> finds;
    std::vector<RunConfig> configs;
    auto add = [&](const Candidate& c) {
      if (c.runnable() && std::find(configs.begin(), configs.end(), c.config) == configs.end())
        configs.push_back(c.config);
    };
    add({reference_config(base), {}});
    for (const Candidate& c : space.enumerate()) add(c);
    for (Layout layout : lists.get(knobs::layout))
      for (int t : thread_counts) {
        std::vector<LayerFind> found = find_per_layer(space, layout, t);
        std::vector<std::string> picks, dealt;
        for (const LayerFind& f : found) picks.push_back(f.best);
        add(space.per_layer(layout, t, picks));
        // The algorithms that passed on each layer, dealt round the layers.
        for (size_t i = 0; i < found.size(); ++i) {
          std::vector<std::string> passed;
          for (const AlgorithmTiming& a : found[i].timings)
            if (a.skip_reason.empty()) passed.push_back(a.algorithm);
          dealt.push_back(passed[i % passed.size()]);
        }
        add(space.per_layer(layout, t, dealt));
        finds.insert(finds.end(), found.begin(), found.end());
      }
    const double find_seconds = seconds_since(find_start);

    MeasureOptions measure_options;
    measure_options.steps = 6;
    measure_options.max_steps = rounds;
    measure_options.max_timing_seconds = max_seconds;
    measure_options.delta = delta;
    const NumericsSample reference = reference_numerics(base, measure_options);
    const TrialResult traced = measure(base, reference_config(base), reference, measure_options);
    if (traced.status != TrialStatus::ok || !traced.trace)
      fail(ErrorKind::runtime, "the reference config: ", traced.reason);
    std::vector<std::string> layer_names;
    for (const ConvLayerInfo& l : layers) layer_names.push_back(l.name);
    const StepTimePredictor predictor(
        profile_reference(*traced.trace, layer_names, reference_conv_algorithm(base.backend),
                          Layout::NCHW, thread_counts.front()),
        finds);
    const ReferenceProfile& ref = predictor.reference();
    std::printf(
        "# reference: %s, %lld traced steps, step %.2f ms = conv %.2f + other kernels %.2f + idle "
        "%.2f\n",
        reference_config(base).label().c_str(), static_cast<long long>(ref.steps), ref.step_ms,
        ref.conv_ms, ref.non_conv_ms, ref.idle_ms);
    std::printf("# find: %zu layer finds over %zu (layout, threads) pairs in %.1f s\n",
                finds.size(), lists.get(knobs::layout).size() * thread_counts.size(), find_seconds);

    const std::vector<const NumericsSample*> references(configs.size(), &reference);
    const auto results =
        measure_interleaved(base, configs, references, measure_options,
                            [&](const std::vector<std::vector<double>>& seconds) {
                              for (const auto& series : seconds)
                                if (estimate_quantile(series).relative_half_width() > delta / 2)
                                  return false;
                              return true;
                            });
    std::vector<double> predicted, measured, errors;
    std::printf("config\tpredicted_ms\tmeasured_ms\tmeasured_low\tmeasured_high\trounds\terror\n");
    for (const TrialResult& r : results) {
      const StepPrediction p = predictor.predict(r.config);
      if (r.status != TrialStatus::ok) {
        std::printf("%s\t%s\t%s\n", r.config.label().c_str(), to_string(r.status).c_str(),
                    r.reason.c_str());
        continue;
      }
      if (!p.predicted()) {
        std::printf("%s\tunpredictable: %s\n", r.config.label().c_str(), p.unpredictable.c_str());
        continue;
      }
      const double ms = r.figures.median_step_ms;
      const QuantileEstimate ci = r.figures.step_interval(r.config.batch);
      const double error = (p.step_ms - ms) / ms;
      predicted.push_back(p.step_ms);
      measured.push_back(ms);
      errors.push_back(std::abs(error));
      std::printf("%s\t%.2f\t%.2f\t%.2f\t%.2f\t%lld\t%+.1f%%\n", r.config.label().c_str(),
                  p.step_ms, ms, ci.low * 1e3, ci.high * 1e3,
                  static_cast<long long>(r.figures.steps), error * 100);
    }
    if (errors.empty()) fail(ErrorKind::runtime, "no config was both predicted and measured");
    std::vector<double> sorted = errors;
    std::sort(sorted.begin(), sorted.end());
    const double median_error =
        sorted.size() % 2 ? sorted[sorted.size() / 2]
                          : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf(
        "# %zu configs: |pred - meas| / meas median %.1f%%, max %.1f%%; Spearman rank correlation "
        "%.3f\n",
        errors.size(), median_error * 100, sorted.back() * 100, spearman(predicted, measured));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_step_prediction: %s\n", e.what());
    return 2;
  }
  return 0;
}
