// The turn order of interleaved rounds (TurnOrder.h): by thread count, the bound before
// the unbound of a count, stable among members alike; and the rounds take their turns in
// it (each member's first turn, from its trace's candidate ranges on one clock).
#include "core/tuner/TurnOrder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "TestAlgorithms.h"
#include "core/base/CpuAffinity.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {
namespace {

using test_support::config_with;

RunConfig with_threads(RunConfig config, int threads, CpuBinding binding) {
  knobs::threads.set(config.knobs, threads);
  knobs::cpu_binding.set(config.knobs, binding);
  return config;
}

TEST(TurnOrder, ByThreadCountThenTheBoundBeforeTheUnbound) {
  const SessionOptions base = test_support::tiny_session();
  const RunConfig direct = config_with(base, Layout::NCHW, "direct");
  const RunConfig gemm = config_with(base, Layout::NHWC, "gemm");
  const std::vector<RunConfig> configs{
      with_threads(direct, 2, CpuBinding::off),    // 0: two threads, unbound
      with_threads(direct, 1, CpuBinding::off),    // 1: one thread
      with_threads(direct, 2, CpuBinding::cores),  // 2: two threads, bound
      with_threads(gemm, 1, CpuBinding::off),      // 3: one thread, after 1 (stable)
      with_threads(gemm, 2, CpuBinding::off),      // 4: unbound, after 0 (stable)
      with_threads(direct, 4, CpuBinding::off),    // 5: four threads
      with_threads(gemm, 2, CpuBinding::cores),    // 6: bound, after 2 (stable)
  };
  EXPECT_EQ(turn_order(configs), (std::vector<size_t>{1, 3, 2, 6, 0, 4, 5}));
  EXPECT_TRUE(turn_order({}).empty());
}

TEST(TurnOrder, ThreadsZeroCountsAsTheMachinesHardwareThreads) {
  const int hardware = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const RunConfig direct = config_with(test_support::tiny_session(), Layout::NCHW, "direct");
  const std::vector<RunConfig> configs{with_threads(direct, 0, CpuBinding::off),
                                       with_threads(direct, hardware + 1, CpuBinding::off),
                                       with_threads(direct, hardware, CpuBinding::cores)};
  // The bound member of as many threads first, then threads=0 (unbound), then more.
  EXPECT_EQ(turn_order(configs), (std::vector<size_t>{2, 0, 1}));
}

TEST(TurnOrder, RoundsTurnsAreTheTurnOrderOnlyWhereOrdered) {
  const RunConfig direct = config_with(test_support::tiny_session(), Layout::NCHW, "direct");
  const std::vector<RunConfig> configs{with_threads(direct, 2, CpuBinding::off),
                                       with_threads(direct, 1, CpuBinding::off),
                                       with_threads(direct, 2, CpuBinding::cores)};
  EXPECT_EQ(rounds_turns(configs, true), (std::vector<size_t>{1, 2, 0}));
  EXPECT_EQ(rounds_turns(configs, true), turn_order(configs));
  EXPECT_EQ(rounds_turns(configs, false), (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(rounds_turns({}, false).empty());
}

// The start of each member's first candidate range (its first turn), on the steady clock
// every session's tracer shares.
std::vector<size_t> first_turns(const std::vector<TrialResult>& results) {
  std::vector<std::pair<int64_t, size_t>> starts;
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].status, TrialStatus::ok) << results[i].reason;
    if (!results[i].trace) continue;
    int64_t first = INT64_MAX;
    for (const auto& range : results[i].trace->ranges)
      if (range.category == profiler::RangeCategory::candidate)
        first = std::min(first, range.start_ns);
    starts.emplace_back(first, i);
  }
  std::sort(starts.begin(), starts.end());
  std::vector<size_t> order;
  for (const auto& start : starts) order.push_back(start.second);
  return order;
}

TEST(TurnOrder, TheRoundsTakeTheirTurnsInIt) {
  const SessionOptions base = test_support::tiny_session();
  MeasureOptions o;
  o.warmup = 1;
  o.steps = 2;
  o.max_steps = 2;
  const NumericsSample reference = reference_numerics(base, o);
  const RunConfig direct = config_with(base, Layout::NCHW, "direct");
  // Bound members need two CPUs of this process's own; unbound ones run anywhere.
  const CpuBinding second = allowed_cpus().size() >= 2 ? CpuBinding::cores : CpuBinding::off;
  const std::vector<RunConfig> configs{with_threads(direct, 2, CpuBinding::off),
                                       with_threads(direct, 1, CpuBinding::off),
                                       with_threads(direct, 2, second)};
  const std::vector<const NumericsSample*> references(configs.size(), &reference);
  o.max_steps = 3;
  EXPECT_EQ(first_turns(measure_interleaved(base, configs, references, o, {})),
            turn_order(configs));
  EXPECT_EQ(turn_order(configs).front(), 1u) << "the one-thread member first";
  o.order_turns = false;
  EXPECT_EQ(first_turns(measure_interleaved(base, configs, references, o, {})),
            (std::vector<size_t>{0, 1, 2}))
      << "in the order given";
}

}  // namespace
}  // namespace tunescope::tuner
