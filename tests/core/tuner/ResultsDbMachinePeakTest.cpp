// The machine-peak cache of the results DB: figures round-trip, a re-measurement
// replaces its row, an older file without the table reads as empty and gains it, and a
// peak without figures is refused.
#include <gtest/gtest.h>

#include "TempResultsDb.h"
#include "core/base/Error.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {
namespace {

using test_support::TempResultsDb;

profiler::MachinePeak peak(const std::string& isa, int threads, double gflops) {
  return {
      "Test CPU 9000",       isa, threads, gflops, 21.5, 166.2, "2 cores x 2 FMA units (assumed)",
      "2026-12-04T21:00:00Z"};
}

void expect_same(const profiler::MachinePeak& a, const profiler::MachinePeak& b) {
  EXPECT_EQ(a.cpu, b.cpu);
  EXPECT_EQ(a.isa, b.isa);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_DOUBLE_EQ(a.fma_gflops, b.fma_gflops);
  EXPECT_DOUBLE_EQ(a.bandwidth_gbs, b.bandwidth_gbs);
  EXPECT_DOUBLE_EQ(a.theoretical_gflops, b.theoretical_gflops);
  EXPECT_EQ(a.theoretical_basis, b.theoretical_basis);
  EXPECT_EQ(a.measured_at, b.measured_at);
}

TEST(ResultsDbMachinePeak, RoundTripsAndReplaces) {
  TempResultsDb file("machine-peak-round-trip.db");
  {
    ResultsDb db(file.path);
    EXPECT_TRUE(db.machine_peaks("Test CPU 9000").empty());
    db.store_machine_peak(peak("avx2", 2, 120.5));
    db.store_machine_peak(peak("avx512", 2, 150.25));
    db.store_machine_peak(peak("avx512", 1, 75));
    db.store_machine_peak(peak("avx512", 2, 151));  // re-measured: replaces its row
  }
  const ResultsDb db(file.path, ResultsDb::Access::read_only);
  const auto peaks = db.machine_peaks("Test CPU 9000");
  ASSERT_EQ(peaks.size(), 3u);
  expect_same(peaks[0], peak("avx512", 1, 75));
  expect_same(peaks[1], peak("avx2", 2, 120.5));
  expect_same(peaks[2], peak("avx512", 2, 151));
  EXPECT_TRUE(db.machine_peaks("Other CPU").empty());
  EXPECT_EQ(profiler::machine_peak_for(peaks, "Test CPU 9000", 2)->isa, "avx512");
}

TEST(ResultsDbMachinePeak, AnOlderFileReadsEmptyAndGainsTheTable) {
  TempResultsDb file("machine-peak-older.db");
  { ResultsDb db(file.path); }
  test_support::run_sql(file.path, "DROP TABLE machine_peaks");
  {
    const ResultsDb read_only(file.path, ResultsDb::Access::read_only);
    EXPECT_TRUE(read_only.machine_peaks("Test CPU 9000").empty());
  }
  ResultsDb db(file.path);
  db.store_machine_peak(peak("scalar", 1, 9));
  EXPECT_EQ(db.machine_peaks("Test CPU 9000").size(), 1u);
}

TEST(ResultsDbMachinePeak, RefusesAPeakWithoutFigures) {
  TempResultsDb file("machine-peak-refuse.db");
  ResultsDb db(file.path);
  EXPECT_THROW(db.store_machine_peak(peak("avx2", 2, 0)), Error);
  EXPECT_THROW(db.store_machine_peak(peak("avx2", 0, 10)), Error);
  EXPECT_TRUE(db.machine_peaks("Test CPU 9000").empty());
}

}  // namespace
}  // namespace tunescope::tuner
