// The allocation cap: a candidate that needs more host memory than the cap allows is a
// failed trial with the reason (not a crash, not an ended sweep), the cap is lifted
// after it, and a tune under the cap records the failures in the results DB.
#include <gtest/gtest.h>

#include <filesystem>

#include "TestAlgorithms.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/AllocationCap.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/TrialRunner.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

TEST(AllocationCap, BufferBeyondTheCapThrowsAndTheCapIsScoped) {
  const size_t held = allocated_bytes();
  {
    const AlignedBuffer one(1 << 20);
    EXPECT_GE(allocated_bytes(), held + (1 << 20));
  }
  EXPECT_EQ(allocated_bytes(), held);  // freeing gives the bytes back
  {
    const ScopedAllocationCap cap(64 << 10);
    const AlignedBuffer fits(32 << 10);
    try {
      const AlignedBuffer too_big(64 << 10);
      FAIL() << "allocated past the cap";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::runtime);
      EXPECT_NE(std::string(e.what()).find("allocation cap"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(allocation_cap(), 0u);
  const AlignedBuffer after(1 << 20);  // no cap any more
}

TEST(AllocationCap, CandidateOverTheCapIsAFailedTrialWithTheReason) {
  const SessionOptions base = test_support::tiny_session();
  MeasureOptions options;
  options.warmup = 0;
  options.steps = 1;
  const NumericsSample reference = reference_numerics(base, options);
  RunConfig config = reference_config(base);
  config.conv.default_algorithm = "gemm";

  options.memory_limit_bytes = 16 << 10;  // far less than lenet5's weights and activations
  const TrialResult capped = measure(base, config, reference, options);
  EXPECT_EQ(capped.status, TrialStatus::failed);
  EXPECT_NE(capped.reason.find("allocation cap"), std::string::npos) << capped.reason;

  options.memory_limit_bytes = size_t{1} << 30;  // ample: the same candidate runs
  EXPECT_EQ(measure(base, config, reference, options).status, TrialStatus::ok);
}

TEST(AllocationCap, TuneUnderACapRecordsTheFailedTrials) {
  const auto path = std::filesystem::temp_directory_path() / "tunescope-allocation-cap.sqlite";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct", "gemm"};
  o.measure.warmup = 0;
  o.measure.steps = 1;
  o.measure.memory_limit_bytes = 16 << 10;
  {
    ResultsDb db(path);
    // Every candidate fails, so the tune is an error naming the reason...
    try {
      Tuner(o, &db).run();
      FAIL() << "a tune with no successful candidate succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::runtime);
      EXPECT_NE(std::string(e.what()).find("allocation cap"), std::string::npos) << e.what();
    }
    // ...and each was recorded as failed with it.
    const auto rows = db.trials();
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& r : rows) {
      EXPECT_EQ(r.status, TrialStatus::failed);
      EXPECT_NE(r.reason.find("allocation cap"), std::string::npos) << r.reason;
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace
}  // namespace tunescope::tuner
