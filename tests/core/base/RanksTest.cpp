// The rank interface without MPI: trace file names per rank, the launcher's environment,
// the clock offset's ping-pong and the host all-reduce, on ranks that are threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "core/base/ClockOffset.h"
#include "core/base/Error.h"
#include "core/base/ExecContext.h"
#include "core/base/Ranks.h"
#include "core/base/Tensor.h"
#include "core/base/ThreadPool.h"
#include "profiler/Clock.h"
#include "tests/core/LoopbackRanks.h"

namespace tunescope {
namespace {

class LauncherEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) unsetenv(v);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(LauncherEnvironment, ReadsTheRankCountOfEachLauncher) {
  EXPECT_EQ(launcher_ranks().size, 0);
  setenv("PMI_SIZE", "3", 1);
  EXPECT_EQ(launcher_ranks().size, 3);
  EXPECT_EQ(launcher_ranks().variable, "PMI_SIZE");
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);  // OpenMPI's own variable wins
  EXPECT_EQ(launcher_ranks().size, 2);
  setenv("OMPI_COMM_WORLD_SIZE", "two", 1);
  EXPECT_THROW(launcher_ranks(), Error);
}

TEST_F(LauncherEnvironment, SeveralRanksWithoutARuntimeSayMpiIsMissing) {
  if (rank_runtime()) GTEST_SKIP() << "this test program links a rank runtime";
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  int argc = 1;
  char name[] = "tunescope";
  char* args[] = {name, nullptr};
  char** argv = args;
  try {
    RankWorld world(argc, argv);
    FAIL() << "a 2-rank start without MPI was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("without MPI"), std::string::npos) << e.what();
  }
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);  // one rank is just a process
  RankWorld single(argc, argv);
  EXPECT_EQ(single.communicator(), nullptr);
}

TEST(ClockOffset, FindsAKnownOffsetWithinItsUncertainty) {
  // Rank 1's clock runs 5 ms behind rank 0's: rank 0's time = rank 1's + 5 ms.
  constexpr int64_t kShift = 5'000'000;
  std::vector<ClockOffset> found(3);
  test_support::run_ranks(3, [&](Communicator& c) {
    const int64_t shift = c.rank() == 1 ? kShift : c.rank() == 2 ? -kShift / 2 : 0;
    found[static_cast<size_t>(c.rank())] =
        measure_clock_offset(c, 20, [shift] { return profiler::now_ns() - shift; });
  });
  EXPECT_EQ(found[0].offset_ns, 0);
  EXPECT_EQ(found[0].uncertainty_ns, 0);
  EXPECT_GT(found[1].uncertainty_ns, 0);
  EXPECT_NEAR(found[1].offset_ns, kShift, found[1].uncertainty_ns);
  EXPECT_NEAR(found[2].offset_ns, -kShift / 2, found[2].uncertainty_ns);
}

TEST(HostRankReducer, SumsEveryRanksTensorsInPlace) {
  std::vector<std::vector<float>> results(2);
  test_support::run_ranks(2, [&](Communicator& c) {
    Tensor a({1, 3, 1, 1}, Layout::NCHW), b({2, 1, 1, 1}, Layout::NCHW);
    for (int i = 0; i < 3; ++i) a.data()[i] = static_cast<float>(c.rank() * 10 + i);
    for (int i = 0; i < 2; ++i) b.data()[i] = static_cast<float>(100 * (c.rank() + 1) + i);
    ThreadPool pool(1);
    ExecContext exec{pool};
    Tensor* tensors[] = {&a, &b};
    make_host_rank_reducer(c)->allreduce_sum(exec, tensors, "allreduce.bucket0");
    auto& out = results[static_cast<size_t>(c.rank())];
    out.assign(a.data(), a.data() + 3);
    out.insert(out.end(), b.data(), b.data() + 2);
  });
  const std::vector<float> expected = {10, 12, 14, 300, 302};
  EXPECT_EQ(results[0], expected);
  EXPECT_EQ(results[1], expected);
}

}  // namespace
}  // namespace tunescope
