// One tune's find timings in memory over the DB's store (TuneLayerTimings.h): a timing
// of enough repetitions is served from memory, a shorter one or a miss goes to the
// store, and stores and flushes reach the store as well.
#include "core/tuner/TuneLayerTimings.h"

#include <gtest/gtest.h>

#include <vector>

namespace tunescope::tuner {
namespace {

// A store that records what reaches it and answers every lookup with `answer`.
class RecordingStore final : public LayerTimingCache {
 public:
  std::optional<AlgorithmTiming> lookup(const ConvProblem&, int, const std::string& algorithm,
                                        int repetitions) override {
    lookups.push_back(repetitions);
    if (!answer) return std::nullopt;
    AlgorithmTiming t = *answer;
    t.algorithm = algorithm;
    return t;
  }
  void store(const ConvProblem&, int, int repetitions, const AlgorithmTiming&) override {
    stores.push_back(repetitions);
  }
  void flush() override { ++flushes; }
  std::optional<AlgorithmTiming> answer;
  std::vector<int> lookups, stores;
  int flushes = 0;
};

ConvProblem problem(Layout layout) {
  ConvProblem p;
  p.input = {8, 3, 16, 16};
  p.out_channels = 4;
  p.kernel_h = p.kernel_w = 3;
  p.layout = layout;
  return p;
}

TEST(TuneLayerTimings, ServesItsOwnTimingsOfEnoughRepetitionsAndPassesTheRestOn) {
  RecordingStore db;
  TuneLayerTimings timings(&db);
  AlgorithmTiming gemm{"gemm", 1.5, "", {0.5, 0.5, 0.5}, false};
  timings.store(problem(Layout::NCHW), 1, 5, gemm);
  EXPECT_EQ(db.stores, (std::vector<int>{5}));

  const auto hit = timings.lookup(problem(Layout::NCHW), 1, "gemm", 5);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->median_ms, 1.5);
  EXPECT_TRUE(db.lookups.empty()) << "served from memory";
  // More repetitions than kept, another thread count, layout or algorithm: the store's.
  EXPECT_FALSE(timings.lookup(problem(Layout::NCHW), 1, "gemm", 6));
  EXPECT_FALSE(timings.lookup(problem(Layout::NCHW), 2, "gemm", 5));
  EXPECT_FALSE(timings.lookup(problem(Layout::NHWC), 1, "gemm", 5));
  EXPECT_FALSE(timings.lookup(problem(Layout::NCHW), 1, "direct", 5));
  EXPECT_EQ(db.lookups.size(), 4u);
  db.answer = AlgorithmTiming{"", 2.0, "", {}, true};
  const auto from_db = timings.lookup(problem(Layout::NCHW), 1, "direct", 5);
  ASSERT_TRUE(from_db);
  EXPECT_EQ(from_db->median_ms, 2.0);
  // A later timing of fewer repetitions does not replace the longer one.
  timings.store(problem(Layout::NCHW), 1, 1, AlgorithmTiming{"gemm", 9.0, "", {}, false});
  EXPECT_EQ(timings.lookup(problem(Layout::NCHW), 1, "gemm", 5)->median_ms, 1.5);
  timings.flush();
  EXPECT_EQ(db.flushes, 1);

  TuneLayerTimings alone(nullptr);  // no DB: memory only
  EXPECT_FALSE(alone.lookup(problem(Layout::NCHW), 1, "gemm", 1));
  alone.store(problem(Layout::NCHW), 1, 3, gemm);
  EXPECT_TRUE(alone.lookup(problem(Layout::NCHW), 1, "gemm", 3));
  alone.flush();
}

}  // namespace
}  // namespace tunescope::tuner
