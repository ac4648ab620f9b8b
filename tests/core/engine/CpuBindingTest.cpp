// The cpu_binding knob: one descriptor (RunKnobs.cpp) plus the executor code that reads it.
// Its text, bounds and config round trip follow from the descriptor; the binding itself is
// read back from the OS, and a run records it in its trace metadata.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/CpuAffinity.h"
#include "core/base/Knob.h"
#include "core/engine/Executor.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "profiler/LaneCpus.h"
#include "tests/core/ExpectError.h"
#include "tests/core/engine/OneStepTraining.h"

namespace tunescope {
namespace {

TEST(CpuBindingKnob, ParsesPrintsAndRefusesOtherValues) {
  const KnobSpec& spec = knobs::cpu_binding.spec();
  EXPECT_EQ(spec.flag(), "--cpu-binding");
  EXPECT_EQ(spec.describe_values(), "off, cores");
  EXPECT_EQ(knobs::cpu_binding.get(KnobValues{}), CpuBinding::off);  // the OS places threads
  for (CpuBinding b : {CpuBinding::off, CpuBinding::cores}) {
    const std::string text = knobs::cpu_binding.encode(b);
    EXPECT_EQ(spec.checked(text, spec.flag()), text);
    EXPECT_EQ(knobs::cpu_binding.decode(text), b);
  }
  test_support::expect_error(ErrorKind::usage, [&] { spec.checked("pinned", spec.flag()); },
                             {"--cpu-binding", "pinned", "off, cores"});
}

TEST(CpuBindingKnob, ConfigFilesWriteItOnlyWhenSetAndRoundTripIt) {
  RunConfig c;
  c.batch = 16;
  c.conv.default_algorithm = "direct";
  knobs::threads.set(c.knobs, 2);
  EXPECT_FALSE(nlohmann::json::parse(to_json_text(c)).contains("cpu_binding"));
  knobs::cpu_binding.set(c.knobs, CpuBinding::cores);
  EXPECT_EQ(nlohmann::json::parse(to_json_text(c)).at("cpu_binding"), "cores");
  EXPECT_EQ(run_config_from_json_text(to_json_text(c), "<text>"), c);
  EXPECT_NE(c.label().find(" bind=cores"), std::string::npos) << c.label();
  nlohmann::json json = nlohmann::json::parse(to_json_text(c));
  json["cpu_binding"] = "all";
  test_support::expect_error(ErrorKind::input,
                             [&] { run_config_from_json_text(json.dump(), "tuned.json"); },
                             {"tuned.json", "cpu_binding", "all"});
}

// What a task sees of its own thread: the CPUs the OS lets it run on.
std::vector<int> my_cpus() { return thread_cpus(pthread_self()); }

TEST(CpuBindingExecutor, EachLaneThreadAndWorkerRunsOnItsOwnAllowedCpu) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, has " << cpus.size();
  {
    Executor executor(2, 1, nullptr, nullptr, {}, 0, CpuBinding::cores);
    EXPECT_EQ(executor.lane_cpus(), (std::vector<std::vector<int>>{{cpus[0]}, {cpus[1]}}));
    std::vector<int> seen[2];
    int ran_on[2] = {-1, -1};
    for (int lane : {0, 1})
      executor.submit(lane, [&, lane](const ExecContext&) {
        seen[lane] = my_cpus();
        ran_on[lane] = sched_getcpu();
      });
    executor.synchronize();
    for (int lane : {0, 1}) {
      EXPECT_EQ(seen[lane], std::vector<int>{cpus[static_cast<size_t>(lane)]}) << lane;
      EXPECT_EQ(ran_on[lane], cpus[static_cast<size_t>(lane)]) << lane;
    }
  }
  {
    Executor executor(1, 2, nullptr, nullptr, {}, 0, CpuBinding::cores);  // lane thread + worker
    std::vector<int> lane_thread, worker;
    executor.submit(0, [&](const ExecContext& exec) {
      lane_thread = my_cpus();
      worker = thread_cpus(exec.pool.worker_handles().at(0));
    });
    executor.synchronize();
    EXPECT_EQ(lane_thread, std::vector<int>{cpus[0]});
    EXPECT_EQ(worker, std::vector<int>{cpus[1]});
    EXPECT_EQ(executor.lane_cpus(), (std::vector<std::vector<int>>{{cpus[0], cpus[1]}}));
  }
}

TEST(CpuBindingExecutor, UnboundThreadsKeepTheWholeSet) {
  Executor executor(2, 1, nullptr);
  EXPECT_TRUE(executor.lane_cpus().empty());
  std::vector<int> seen;
  executor.submit(1, [&](const ExecContext&) { seen = my_cpus(); });
  executor.synchronize();
  EXPECT_EQ(seen, allowed_cpus());
}

TEST(CpuBindingExecutor, MoreThreadsThanAllowedCpusIsRefusedBeforeBinding) {
  const int cpus = static_cast<int>(allowed_cpus().size());
  test_support::expect_error(
      ErrorKind::usage,
      [&] { Executor executor(cpus + 1, 1, nullptr, nullptr, {}, 0, CpuBinding::cores); },
      {"cpu_binding: cores", std::to_string(cpus + 1) + " threads",
       "only " + std::to_string(cpus) + " CPUs", "use off"});
  test_support::expect_error(
      ErrorKind::usage,
      [&] { Executor executor(1, cpus + 1, nullptr, nullptr, {}, 0, CpuBinding::cores); },
      {"(1 lanes x " + std::to_string(cpus + 1) + " threads)"});
}

TEST(CpuBindingSession, ATwoLaneRunRecordsItsLanesCpusInTheTraceMetadata) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs, has " << cpus.size();
  SessionOptions options = test_support::lenet_fake_options("direct");
  knobs::streams.set(options.knobs, 2);
  knobs::threads_per_lane.set(options.knobs, 1);
  knobs::cpu_binding.set(options.knobs, CpuBinding::cores);
  TrainingSession bound(options);
  bound.train_steps(1);
  EXPECT_EQ(bound.trace_metadata_extra().at(profiler::kLaneCpusKey),
            std::to_string(cpus[0]) + ";" + std::to_string(cpus[1]));
  knobs::cpu_binding.set(options.knobs, CpuBinding::off);
  TrainingSession unbound(options);
  EXPECT_EQ(unbound.trace_metadata_extra().count(profiler::kLaneCpusKey), 0u);
}

}  // namespace
}  // namespace tunescope
