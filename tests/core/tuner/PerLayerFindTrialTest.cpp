// The per-layer find runs its timings as trials of the one trial runner: a wrong
// algorithm is refused with the whole-config error norm (relative L2 per tensor), and
// isolation and the time limit apply to the find as they do to whole configs, so a
// crashing or hanging algorithm fails its own timing instead of the tune.
#include <gtest/gtest.h>

#include "TestAlgorithms.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/PerLayerFind.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {
namespace {

SearchSpace tiny_space(std::vector<std::string> algorithms) {
  const SessionOptions base = test_support::tiny_session();
  TrainingSession session(base);
  SpaceOptions o;
  o.model = base.model;
  o.batch = base.batch;
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = std::move(algorithms);
  return SearchSpace(o, conv_layers(session.network()));
}

const AlgorithmTiming& timing_of(const LayerFind& find, const std::string& algorithm) {
  for (const AlgorithmTiming& t : find.timings)
    if (t.algorithm == algorithm) return t;
  throw std::runtime_error("no timing of " + algorithm);
}

TEST(PerLayerFindTrial, WrongAlgorithmIsRefusedWithTheWholeConfigErrorNorm) {
  FindOptions find;
  find.repetitions = 2;
  const std::vector<LayerFind> finds =
      find_per_layer(tiny_space({test_support::kWrong, "direct"}), Layout::NCHW, 1, find);
  ASSERT_FALSE(finds.empty());
  for (const LayerFind& f : finds) {
    EXPECT_EQ(f.best, "direct") << f.layer;
    const std::string& why = timing_of(f, test_support::kWrong).skip_reason;
    // The forward output is scaled by 1.5: a relative L2 error of 0.5 in "forward output y".
    EXPECT_NE(why.find("wrong results"), std::string::npos) << why;
    EXPECT_NE(why.find("forward output y: relative L2 error 0.5"), std::string::npos) << why;
    EXPECT_NE(why.find("tolerance 0.03"), std::string::npos) << why;
  }
}

TEST(PerLayerFindTrial, IsolationAndTimeLimitCoverTheFind) {
  MeasureOptions limits;
  limits.isolate = true;
  limits.time_limit_seconds = 2;
  FindOptions find;
  find.repetitions = 2;
  const std::vector<LayerFind> finds =
      find_per_layer(tiny_space({test_support::kSegfault, test_support::kHang, "direct"}),
                     Layout::NCHW, 1, find, limits);
  ASSERT_FALSE(finds.empty());
  for (const LayerFind& f : finds) {
    EXPECT_EQ(f.best, "direct") << f.layer;
    EXPECT_GT(timing_of(f, "direct").median_ms, 0) << f.layer;
    const std::string& crashed = timing_of(f, test_support::kSegfault).skip_reason;
    EXPECT_NE(crashed.find("SIGSEGV"), std::string::npos) << crashed;
    const std::string& hung = timing_of(f, test_support::kHang).skip_reason;
    EXPECT_NE(hung.find("time limit of 2 s"), std::string::npos) << hung;
  }
}

TEST(PerLayerFindTrial, LayerTrialRecordsTheStepsItTimedAndItsStopRule) {
  const SearchSpace space = tiny_space({"direct"});
  ConvProblem problem = space.layers().front().problem;
  problem.layout = Layout::NCHW;
  LayerTrial trial{"cpu", problem, "gemm", 1, space.global(Layout::NCHW, 1, "direct").config};
  MeasureOptions o;
  o.steps = o.max_steps = 3;
  const TrialResult r = measure_layer(trial, layer_reference(problem), o);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_TRUE(r.numerics_checked);
  EXPECT_EQ(r.figures.steps, 3);
  EXPECT_EQ(r.step_seconds.size(), 3u);
  EXPECT_TRUE(r.figures.stop == StopRule::max_steps || r.figures.stop == StopRule::converged);
}

// The runs stop at the first one that confirms the fastest (fastest_confirmed) from the
// minimum on, else at the maximum: the recorded runs and stop rule say which, and agree.
TEST(PerLayerFindTrial, LayerTrialStopsAtTheFirstRunThatConfirmsTheFastest) {
  const SearchSpace space = tiny_space({"direct"});
  ConvProblem problem = space.layers().front().problem;
  problem.layout = Layout::NCHW;
  LayerTrial trial{"cpu", problem, "direct", 1, space.global(Layout::NCHW, 1, "direct").config};
  for (const double delta : {0.5, 1e-9}) {
    MeasureOptions o;
    o.steps = 2;
    o.max_steps = 6;
    o.delta = delta;
    const TrialResult r = measure_layer(trial, layer_reference(problem), o);
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    const std::vector<double>& runs = r.step_seconds;
    ASSERT_GE(runs.size(), 2u);
    ASSERT_LE(runs.size(), 6u);
    for (size_t n = 2; n < runs.size(); ++n)
      EXPECT_FALSE(fastest_confirmed({runs.begin(), runs.begin() + static_cast<long>(n)}, delta))
          << "went on after run " << n << " had confirmed the fastest";
    if (r.figures.stop == StopRule::converged) {
      EXPECT_TRUE(fastest_confirmed(runs, delta));
    } else {
      EXPECT_EQ(r.figures.stop, StopRule::max_steps);
      EXPECT_EQ(runs.size(), 6u);
    }
    // +-25 %: runs of a tiny layer agree that well; +-5e-10 %: only by chance.
    if (delta == 0.5) {
      EXPECT_EQ(r.figures.stop, StopRule::converged);
    }
  }
}

}  // namespace
}  // namespace tunescope::tuner
