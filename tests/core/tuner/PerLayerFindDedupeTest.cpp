// The per-layer find on ResNet-18-small, whose blocks repeat conv problems: each
// distinct (problem, algorithm) runs once (counted by a test algorithm that delegates to
// direct), and every layer's pick follows the find's rule (the fastest timed algorithm
// of its timings), the repeats sharing the first layer's timings and pick. Also the find
// at several thread counts, and auto's probe serving the find.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <memory>
#include <set>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/Models.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/PerLayerFind.h"
#include "core/tuner/StrategyChoice.h"
#include "core/tuner/TuneLayerTimings.h"

namespace tunescope::tuner {
namespace {

constexpr const char* kCounting = "test-counting";
std::map<std::string, int>& forward_calls() {
  static std::map<std::string, int> calls;  // problem key -> forward passes
  return calls;
}

class CountingConv final : public ConvAlgorithm {
 public:
  CountingConv() : direct_(Registry::instance().make_conv_algorithm("cpu", "direct")) {}
  std::string name() const override { return kCounting; }
  std::string unsupported_reason(const ConvProblem& p) const override {
    return direct_->unsupported_reason(p);
  }
  size_t workspace_bytes(const ConvProblem& p) const override {
    return direct_->workspace_bytes(p);
  }
  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    ++forward_calls()[call.problem.key()];
    direct_->forward(call, x, w, y);
  }
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    direct_->backward_data(call, dy, w, dx);
  }
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    direct_->backward_filter(call, x, dy, dw);
  }

 private:
  std::unique_ptr<ConvAlgorithm> direct_;
};

const ConvAlgorithmRegistration registration("cpu", kCounting, [](const KnobValues&) {
  return std::make_unique<CountingConv>();
});

// A space of `model` (batch: the input's n) in one layout over `algorithms`.
SearchSpace one_layout_space(const std::string& model, Shape4 input, Layout layout,
                             std::vector<std::string> algorithms) {
  ModelSpec spec;
  spec.name = model;
  spec.input = input;
  SpaceOptions o;
  o.model = spec.name;
  o.batch = input.n;
  o.knobs.set(knobs::layout, std::vector<Layout>{layout});
  o.algorithms = std::move(algorithms);
  return SearchSpace(o, conv_layers(*build_model(spec)));
}

TEST(PerLayerFind, TimesEachDistinctProblemOnceAndRepeatsShareItsPick) {
  const SearchSpace space = one_layout_space("resnet18-small", {2, 3, 32, 32}, Layout::NCHW,
                                             {"direct", "gemm", kCounting});
  std::set<std::string> distinct;
  for (const ConvLayerInfo& layer : space.layers()) distinct.insert(layer.problem.key());
  ASSERT_LT(distinct.size(), space.layers().size()) << "the net repeats no conv problem";

  forward_calls().clear();
  FindOptions options;
  options.repetitions = 2;
  const std::vector<LayerFind> finds = find_per_layer(space, Layout::NCHW, 1, options);

  ASSERT_EQ(finds.size(), space.layers().size());
  // One checked run plus the repetitions, per distinct problem, and nothing for the repeats.
  EXPECT_EQ(forward_calls().size(), distinct.size());
  for (const auto& [key, calls] : forward_calls()) EXPECT_EQ(calls, 1 + options.repetitions) << key;

  std::map<std::string, const LayerFind*> first;  // problem key -> the layer that was timed
  for (size_t i = 0; i < finds.size(); ++i) {
    const LayerFind& f = finds[i];
    EXPECT_EQ(f.layer, space.layers()[i].name);
    // The pick rule: the timed algorithm with the least sum of its passes' fastest runs,
    // and the close alternatives within kFindCloseMargin of it, closest first.
    const AlgorithmTiming* fastest = nullptr;
    for (const AlgorithmTiming& t : f.timings)
      if (t.skip_reason.empty() && (!fastest || t.score_ms() < fastest->score_ms())) fastest = &t;
    ASSERT_TRUE(fastest) << f.layer;
    EXPECT_EQ(f.best, fastest->algorithm) << f.layer;
    EXPECT_NEAR(
        fastest->score_ms(),
        fastest->passes.fwd_ms + fastest->passes.bwd_data_ms + fastest->passes.bwd_filter_ms,
        1e-12);
    double previous = fastest->score_ms();
    for (const std::string& name : f.close) {
      const auto t = std::find_if(f.timings.begin(), f.timings.end(),
                                  [&](const AlgorithmTiming& x) { return x.algorithm == name; });
      ASSERT_NE(t, f.timings.end()) << name;
      EXPECT_NE(name, f.best);
      EXPECT_LE(t->score_ms(), fastest->score_ms() * (1 + kFindCloseMargin)) << name;
      EXPECT_GE(t->score_ms(), previous) << name;
      previous = t->score_ms();
    }
    for (const AlgorithmTiming& t : f.timings)
      if (t.skip_reason.empty() && t.algorithm != f.best &&
          t.score_ms() <= fastest->score_ms() * (1 + kFindCloseMargin)) {
        EXPECT_NE(std::find(f.close.begin(), f.close.end(), t.algorithm), f.close.end())
            << t.algorithm;
      }

    const std::string key = space.layers()[i].problem.key();
    auto [at, added] = first.emplace(key, &f);
    if (added) {
      EXPECT_TRUE(f.timed_as.empty()) << f.layer;
    } else {
      EXPECT_EQ(f.timed_as, at->second->layer);
      EXPECT_EQ(f.best, at->second->best);
      ASSERT_EQ(f.timings.size(), at->second->timings.size());
      for (size_t t = 0; t < f.timings.size(); ++t)
        EXPECT_EQ(f.timings[t].median_ms, at->second->timings[t].median_ms);
    }
  }
}

// The find at several thread counts (per-layer's, per layout): each count times every
// distinct problem as a find at that count alone would, its finds named by the count;
// only the numerics reference is shared. No count at all is a usage error.
TEST(PerLayerFind, AtSeveralThreadCountsEachCountTimesEveryDistinctProblem) {
  const SearchSpace space =
      one_layout_space("lenet5", {2, 1, 28, 28}, Layout::NHWC, {"direct", kCounting});
  forward_calls().clear();
  FindOptions options;
  options.repetitions = 2;
  const std::vector<std::vector<LayerFind>> finds =
      find_per_layer(space, Layout::NHWC, std::vector<int>{1, 2}, options);
  ASSERT_EQ(finds.size(), 2u);
  for (size_t t = 0; t < 2; ++t) {
    ASSERT_EQ(finds[t].size(), space.layers().size());
    for (const LayerFind& f : finds[t]) {
      EXPECT_EQ(f.threads, static_cast<int>(t + 1)) << f.layer;
      EXPECT_EQ(f.layout, Layout::NHWC);
      EXPECT_FALSE(f.best.empty()) << f.layer;
    }
  }
  EXPECT_EQ(forward_calls().size(), space.layers().size());
  for (const auto& [key, calls] : forward_calls())
    EXPECT_EQ(calls, 2 * (1 + options.repetitions)) << key;
  EXPECT_THROW(find_per_layer(space, Layout::NHWC, std::vector<int>{}, options), Error);
}

// auto's probe where per-layer will run anyway (probe_find at the find's repetitions):
// through one tune's timings (TuneLayerTimings) the find at the probed (layout, threads)
// times nothing the probe timed, with no results DB behind them. A probe at one
// repetition (the estimates alone) leaves the find to time them all.
TEST(PerLayerFind, AProbeAtTheFindsRepetitionsServesTheFind) {
  // lenet5: two distinct conv problems, the probe's least and most FLOPs.
  const SearchSpace space =
      one_layout_space("lenet5", {2, 1, 28, 28}, Layout::NCHW, {"direct", kCounting});
  for (const bool at_find_repetitions : {true, false}) {
    TuneLayerTimings timings(nullptr);
    FindOptions options;
    options.repetitions = 3;
    options.cache = &timings;
    forward_calls().clear();
    const FindProbe probe = probe_find(space, options, {}, at_find_repetitions);
    EXPECT_GT(probe.find_seconds, 0);
    EXPECT_EQ(probe.ms.count(kCounting), 1u);
    std::map<std::string, int> probed = forward_calls();
    forward_calls().clear();
    const std::vector<LayerFind> finds = find_per_layer(space, Layout::NCHW, 1, options);
    ASSERT_EQ(finds.size(), 2u);
    if (at_find_repetitions) {
      for (const auto& [key, calls] : probed) {  // the checked run, then the find's runs
        EXPECT_GE(calls, 1 + kFindMinimumRuns) << key;
        EXPECT_LE(calls, 1 + options.repetitions) << key;
      }
      EXPECT_TRUE(forward_calls().empty()) << "the find timed again what the probe timed";
    } else {
      for (const auto& [key, calls] : probed) EXPECT_EQ(calls, 1 + 1) << key;
      EXPECT_EQ(forward_calls().size(), 2u);
    }
  }
}

// On a quiet machine a find stops once a run confirms the fastest (between the minimum
// and the cap); on a shared one (free cores charged) it times every repetition.
TEST(PerLayerFind, OnASharedMachineTheFindTimesEveryRepetition) {
  const SearchSpace space =
      one_layout_space("lenet5", {2, 1, 28, 28}, Layout::NCHW, {"direct", kCounting});
  FindOptions options;
  options.repetitions = 4;
  for (const double free_cores : {0.0, 1.0}) {
    MeasureOptions limits;
    limits.free_cores = free_cores;
    forward_calls().clear();
    find_per_layer(space, Layout::NCHW, 1, options, limits);
    ASSERT_EQ(forward_calls().size(), 2u);
    for (const auto& [key, calls] : forward_calls()) {  // the checked run, then the timed ones
      if (free_cores > 0) {
        EXPECT_EQ(calls, 1 + options.repetitions) << key;
      } else {
        EXPECT_GE(calls, 1 + kFindMinimumRuns) << key;
        EXPECT_LE(calls, 1 + options.repetitions) << key;
      }
    }
  }
}

}  // namespace
}  // namespace tunescope::tuner
