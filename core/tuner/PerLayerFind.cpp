// Per-layer algorithm timing outside the network (see PerLayerFind.h): which layers to
// time and how the picks follow; each timing is a trial of the trial runner.
#include "core/tuner/PerLayerFind.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {

double AlgorithmTiming::score_ms() const {
  const double passes_ms = passes.fwd_ms + passes.bwd_data_ms + passes.bwd_filter_ms;
  return passes_ms > 0 ? passes_ms : median_ms;
}

namespace {

// One layer's find at one thread count; `reference` made on first need (a layer served
// from options.cache needs none) and kept for the layer's other thread counts.
LayerFind find_layer(const SearchSpace& space, const ConvLayerInfo& layer,
                     const ConvProblem& problem, Layout layout, int threads,
                     const FindOptions& options, const MeasureOptions& measure,
                     std::optional<NumericsSample>& reference) {
  const std::string& backend = space.options().backend;
  LayerFind find{layer.name, layout, threads, {}, {}, {}, {}};
  double best_ms = INFINITY;
  for (const std::string& name : space.algorithms()) {
    AlgorithmTiming timing{name, 0, space.unsupported_reason(layer, layout, name), {}, false};
    const int repetitions = std::max(1, options.repetitions);
    std::optional<AlgorithmTiming> cached;
    if (timing.skip_reason.empty() && options.cache)
      cached = options.cache->lookup(problem, threads, name, repetitions);
    if (cached) {
      timing = std::move(*cached);
      timing.reused = true;
    } else if (timing.skip_reason.empty()) {
      if (!reference) reference = layer_reference(problem);
      LayerTrial trial{backend, problem, name, threads, space.global(layout, threads, name).config};
      // The trial's config: the layer's algorithm over the reference's on the others.
      trial.config.conv.default_algorithm = reference_conv_algorithm(backend);
      trial.config.conv.per_layer = {{layer.name, name}};
      const TrialResult result = measure_layer(trial, *reference, measure);
      if (result.status == TrialStatus::ok) {
        timing.median_ms = result.figures.median_step_ms;
        timing.passes = {result.layer_pass_ms[0], result.layer_pass_ms[1], result.layer_pass_ms[2]};
        if (options.cache && timing.passes.fwd_ms > 0)
          options.cache->store(problem, threads, repetitions, timing);
      } else if (result.status == TrialStatus::invalid) {
        timing.skip_reason = result.reason;
      } else {
        timing.skip_reason = cat("failed: ", result.reason);
      }
    }
    if (timing.skip_reason.empty() && timing.score_ms() < best_ms) {
      best_ms = timing.score_ms();
      find.best = name;
    }
    find.timings.push_back(std::move(timing));
  }
  if (find.best.empty())
    fail(ErrorKind::runtime, "per-layer find: no algorithm passed for layer ", layer.name, " (",
         problem.key(), ")");
  std::vector<const AlgorithmTiming*> close;
  for (const AlgorithmTiming& t : find.timings)
    if (t.skip_reason.empty() && t.algorithm != find.best &&
        t.score_ms() <= best_ms * (1 + kFindCloseMargin))
      close.push_back(&t);
  std::stable_sort(close.begin(), close.end(),
                   [](const auto* a, const auto* b) { return a->score_ms() < b->score_ms(); });
  for (const AlgorithmTiming* t : close) find.close.push_back(t->algorithm);
  return find;
}

}  // namespace

std::vector<std::vector<LayerFind>> find_per_layer(const SearchSpace& space, Layout layout,
                                                   const std::vector<int>& thread_counts,
                                                   const FindOptions& options,
                                                   const MeasureOptions& limits) {
  if (thread_counts.empty()) fail(ErrorKind::usage, "per-layer find: no thread count");
  // The find's own schedule: timed runs until one confirms the fastest, at most
  // options.repetitions, no warm-up beyond the checked first run, no racing. On a
  // machine shared with other processes (free cores charged) all of them: two runs that
  // agree there may share one stretch of the scheduler's drift.
  MeasureOptions measure = limits;
  measure.max_steps = std::max(1, options.repetitions);
  measure.steps = limits.free_cores > 0 ? measure.max_steps
                                        : std::min<int64_t>(kFindMinimumRuns, measure.max_steps);
  measure.warmup = 0;
  measure.race_against.reset();
  measure.check_numerics = true;
  // Each problem's reference, made on first need and kept for the other thread counts.
  std::map<std::string, std::optional<NumericsSample>> references;
  std::vector<std::vector<LayerFind>> out;
  for (int threads : thread_counts) {
    std::vector<LayerFind> finds;
    std::map<std::string, size_t> timed;  // problem key -> the find of the first layer with it
    for (const ConvLayerInfo& layer : space.layers()) {
      ConvProblem problem = layer.problem;
      problem.layout = layout;
      if (auto same = timed.find(problem.key()); same != timed.end()) {
        LayerFind find = finds[same->second];
        find.layer = layer.name;
        find.timed_as = finds[same->second].layer;
        finds.push_back(std::move(find));
        continue;
      }
      timed.emplace(problem.key(), finds.size());
      finds.push_back(find_layer(space, layer, problem, layout, threads, options, measure,
                                 references[problem.key()]));
    }
    if (options.cache) options.cache->flush();
    out.push_back(std::move(finds));
  }
  return out;
}

std::vector<LayerFind> find_per_layer(const SearchSpace& space, Layout layout, int threads,
                                      const FindOptions& options, const MeasureOptions& limits) {
  return std::move(
      find_per_layer(space, layout, std::vector<int>{threads}, options, limits).front());
}

}  // namespace tunescope::tuner
