// What the per-layer strategy races: each thread count's picks at every thread count,
// uniform configs of the algorithms the find cannot tell from the pick on any layer and
// of the one each thread count's find prices fastest, and the baseline in the same
// interleaved rounds (never swept alone).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "TestAlgorithms.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/TuneContext.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

TuneOptions two_thread_counts() {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.knobs.set(knobs::threads, std::vector<int>{1, 2});
  o.algorithms = {"direct", "gemm", test_support::kSlow};
  o.strategy = Strategy::per_layer;
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.measure.max_steps = 12;
  o.find.repetitions = 2;
  return o;
}

bool holds(const std::vector<Candidate>& list, const RunConfig& config) {
  return std::any_of(list.begin(), list.end(),
                     [&](const Candidate& c) { return c.config == config; });
}

TEST(PerLayerCandidates, EveryThreadCountsPicksRaceAtEveryThreadCount) {
  TuneOptions o = two_thread_counts();
  size_t checked = 0;
  o.filter = [&](std::vector<Candidate> list, TuneContext& context) {
    const SearchSpace& space = context.space();
    std::map<int, std::vector<const LayerFind*>> by_threads;  // in layer order
    for (const LayerFind& f : context.report().finds) by_threads[f.threads].push_back(&f);
    EXPECT_EQ(by_threads.size(), 2u);
    for (const auto& [threads, finds] : by_threads) {
      EXPECT_EQ(finds.size(), 2u);  // conv1, conv2
      for (const auto& [picked_at, picking] : by_threads) {
        std::vector<std::string> picks;
        for (const LayerFind* f : picking) picks.push_back(f->best);
        // The picks of the find at `picked_at` threads, raced at `threads`.
        EXPECT_TRUE(holds(list, space.per_layer(Layout::NCHW, threads, picks).config))
            << "picks of " << picked_at << " threads not raced at " << threads;
        ++checked;
      }
      // Uniform configs: every algorithm that is the pick or close on every layer; never
      // the slow one (20 ms per pass is never within the find's close margin).
      for (const std::string& algorithm : space.algorithms()) {
        const bool close_everywhere = std::all_of(finds.begin(), finds.end(), [&](const auto* f) {
          return f->best == algorithm ||
                 std::find(f->close.begin(), f->close.end(), algorithm) != f->close.end();
        });
        const RunConfig uniform = space.global(Layout::NCHW, threads, algorithm).config;
        if (close_everywhere) {
          EXPECT_TRUE(holds(list, uniform)) << uniform.label();
        }
        if (algorithm == test_support::kSlow) {
          EXPECT_FALSE(holds(list, uniform)) << uniform.label();
        }
      }
      // And the uniform config each thread count's find prices fastest (its timings
      // summed over the layers), close on every layer or not, at this thread count.
      for (const auto& [priced_at, pricing] : by_threads) {
        std::string fastest;
        double least = 0;
        for (const std::string& algorithm : space.algorithms()) {
          double sum = 0;
          bool everywhere = true;
          for (const LayerFind* f : pricing) {
            const auto t = std::find_if(f->timings.begin(), f->timings.end(), [&](const auto& x) {
              return x.algorithm == algorithm && x.skip_reason.empty();
            });
            everywhere = everywhere && t != f->timings.end();
            if (t != f->timings.end()) sum += t->score_ms();
          }
          if (everywhere && (fastest.empty() || sum < least)) {
            fastest = algorithm;
            least = sum;
          }
        }
        EXPECT_FALSE(fastest.empty());
        EXPECT_NE(fastest, test_support::kSlow);
        EXPECT_TRUE(holds(list, space.global(Layout::NCHW, threads, fastest).config))
            << fastest << ", priced fastest at " << priced_at << " threads";
      }
    }
    return list;
  };
  const TuneReport report = Tuner(o).run();
  EXPECT_EQ(checked, 4u);
  EXPECT_TRUE(report.settled_in_rounds);
  EXPECT_EQ(report.winner().status, TrialStatus::ok);
}

TEST(PerLayerCandidates, TheBaselineIsRacedInTheRoundsNotSweptAlone) {
  TuneOptions o = two_thread_counts();
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.algorithms = {"direct", "gemm"};
  const TuneReport report = Tuner(o).run();
  const RunConfig baseline = reference_config(o.base);
  const auto rows = std::count_if(report.trials.begin(), report.trials.end(),
                                  [&](const TrialResult& t) { return t.config == baseline; });
  EXPECT_EQ(rows, 1) << "the baseline measured once, in the rounds";
  ASSERT_TRUE(report.baseline_trial());
  const TrialResult& base = *report.baseline_trial();
  EXPECT_EQ(base.config, baseline);
  EXPECT_EQ(base.status, TrialStatus::ok) << base.reason;
  EXPECT_EQ(base.reason.rfind(kRemeasureReason, 0), 0u) << base.reason;
  EXPECT_TRUE(base.figures.stop == StopRule::interleaved ||
              base.figures.stop == StopRule::raced_out);
  EXPECT_GE(base.figures.steps, 5);  // the first look for drops (separation_test)
  EXPECT_TRUE(report.settled_in_rounds);
}

}  // namespace
}  // namespace tunescope::tuner
