// Each ok trial carries the concurrency of its timed steps, as the profiler's metrics
// compute it on the trial's own trace, and the results DB keeps it. A single lane never
// has two kernels in flight. Whether two lanes overlap depends on the machine and its
// load (on a busy 2-core machine lenet5's lanes often do not), so for the multi-lane
// candidate only the agreement with the metrics on its trace is asserted.
#include <gtest/gtest.h>

#include <algorithm>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Tuner.h"
#include "profiler/Metrics.h"

namespace tunescope::tuner {
namespace {

TEST(TunerConcurrency, OkTrialsCarryTheirTracesConcurrencyIntoTheResultsDb) {
  const test_support::TempResultsDb file("tuner-concurrency.sqlite");
  ResultsDb db(file.path);
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct"};
  o.knobs.set(knobs::threads, std::vector<int>{2});
  o.knobs.set(knobs::streams, std::vector<int>{1, 2});
  o.knobs.set(knobs::cpu_binding, std::vector<CpuBinding>{CpuBinding::off});  // streams alone
  o.measure.warmup = 1;
  o.measure.steps = 3;
  o.racing = false;  // both go on to the interleaved rounds
  const TuneReport report = Tuner(o, &db).run();

  ASSERT_EQ(report.trials.size(), 2u);  // the baseline (1 stream) and its 2-stream variant
  size_t with_trace = 0;
  for (const TrialResult& t : report.trials) {
    ASSERT_EQ(t.status, TrialStatus::ok) << t.reason;
    ASSERT_TRUE(t.concurrency) << t.config.label();
    if (t.trace) {  // the baseline and the winner keep theirs
      ++with_trace;
      const profiler::Concurrency expected = profiler::concurrency(*t.trace);
      EXPECT_DOUBLE_EQ(t.concurrency->concurrent_share, expected.concurrent_share)
          << t.config.label();
      EXPECT_DOUBLE_EQ(t.concurrency->mean_in_flight, expected.mean_in_flight) << t.config.label();
    }
    if (t.config.concurrency().lanes() == 1) {
      EXPECT_EQ(t.concurrency->concurrent_share, 0) << t.config.label();
      EXPECT_DOUBLE_EQ(t.concurrency->mean_in_flight, 1) << t.config.label();
    }
  }
  EXPECT_EQ(with_trace, 2u);  // both re-measured interleaved, the baseline among them
  // Every ok row has its figures; the last two (the interleaved pair) are the report's.
  const auto rows = db.trials();
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& r : rows) EXPECT_TRUE(r.concurrency) << r.config_json;
  for (const TrialResult& t : report.trials) {
    const std::string config = to_json_text(t.config);
    const auto row = std::find_if(rows.rbegin(), rows.rend(),
                                  [&](const TrialRecord& r) { return r.config_json == config; });
    ASSERT_NE(row, rows.rend());
    EXPECT_EQ(row->concurrency, t.concurrency);
  }
}

}  // namespace
}  // namespace tunescope::tuner
