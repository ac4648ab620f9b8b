// The executor's unwind guard (submit_finally) as the trainer uses it for phases that
// span several tasks of a lane: after a task throws, the lane skips the rest of its
// queue but still closes the phase it opened, so the trace keeps the (truncated) phase
// and an NVTX tool sees every pushed range popped on its thread; a phase whose opening
// task was skipped is not closed either.
#include "core/engine/Executor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "profiler/Tracer.h"

namespace tunescope {
namespace {

using namespace std::chrono_literals;
using profiler::RangeCategory;
using profiler::Tracer;

// What Trainer::submit_phase submits: open on one task, close in the lane's unwind guard.
void submit_phase(Executor& executor, Tracer& tracer, Tracer::OpenRange& open, int lane,
                  bool begin) {
  if (begin)
    executor.submit(lane, [&](const ExecContext&) {
      open = tracer.begin_range("forward", RangeCategory::phase);
    });
  else
    executor.submit_finally(lane, [&](const ExecContext& exec) {
      tracer.end_range("forward", RangeCategory::phase, exec.device, exec.lane, open);
    });
}

// A phase on lane 0 whose second task throws: the third is skipped, the phase closes.
void run_failing_phase(Tracer& tracer, bool& skipped_task_ran) {
  Tracer::OpenRange open;  // before the executor: its lanes use it until they stop
  Executor executor(2, 1, &tracer);
  submit_phase(executor, tracer, open, 0, true);
  executor.submit(0, [](const ExecContext&) { throw std::runtime_error("layer conv2 failed"); });
  executor.submit(0, [&](const ExecContext&) { skipped_task_ran = true; });
  submit_phase(executor, tracer, open, 0, false);
  EXPECT_THROW(executor.synchronize(), std::runtime_error);
  EXPECT_FALSE(open.opened());
}

TEST(ExecutorUnwind, AFailedTaskSkipsTheLaneButItsPhaseIsStillClosed) {
  Tracer tracer;
  tracer.start();
  bool skipped_task_ran = false;
  run_failing_phase(tracer, skipped_task_ran);
  tracer.stop();
  EXPECT_FALSE(skipped_task_ran);
  const profiler::Trace trace = tracer.collect({});
  ASSERT_EQ(trace.ranges.size(), 1u);
  EXPECT_EQ(trace.ranges[0].name, "forward");
  EXPECT_EQ(trace.ranges[0].category, RangeCategory::phase);
  EXPECT_EQ(trace.ranges[0].lane, 0);
}

TEST(ExecutorUnwind, APhaseWhoseOpeningWasSkippedIsNotClosed) {
  Tracer tracer;
  tracer.start();
  Tracer::OpenRange open;
  std::atomic<bool> closer_ran{false};
  Executor executor(1, 1, &tracer);
  executor.submit(0, [](const ExecContext&) { throw std::runtime_error("input upload failed"); });
  submit_phase(executor, tracer, open, 0, true);
  executor.submit_finally(0, [&](const ExecContext& exec) {
    closer_ran = true;
    tracer.end_range("forward", RangeCategory::phase, exec.device, exec.lane, open);
  });
  EXPECT_THROW(executor.synchronize(), std::runtime_error);
  tracer.stop();
  EXPECT_TRUE(closer_ran);
  EXPECT_TRUE(tracer.collect({}).ranges.empty());
  // The executor is usable afterwards, and plain tasks run again.
  std::atomic<bool> ran{false};
  executor.submit(0, [&](const ExecContext&) { ran = true; });
  executor.synchronize();
  EXPECT_TRUE(ran);
}

TEST(ExecutorUnwind, DestructionRunsQueuedFinallyTasksAndDropsTheRest) {
  std::atomic<bool> closed{false}, dropped_ran{false};
  {
    Event late;  // recorded on lane 1 behind a slow task: lane 0 is still blocked at teardown
    Executor executor(2, 1, nullptr);
    executor.submit(1, [](const ExecContext&) { std::this_thread::sleep_for(50ms); });
    executor.record(1, late);
    executor.wait(0, late);
    executor.submit(0, [&](const ExecContext&) { dropped_ran = true; });
    executor.submit_finally(0, [&](const ExecContext&) { closed = true; });
  }
  EXPECT_TRUE(closed);
  EXPECT_FALSE(dropped_ran);
}

#ifdef TUNESCOPE_NVTX_RECORDER_PATH
constexpr const char* kRecorderPath = TUNESCOPE_NVTX_RECORDER_PATH;
#else
constexpr const char* kRecorderPath = "";
#endif
constexpr const char* kChildVariable = "TUNESCOPE_EXECUTOR_UNWIND_CHILD";

// The body run in a child process with the NVTX recorder loaded (NVTX binds its tool at
// the first NVTX call of a process, so this process cannot load it any more).
TEST(ExecutorUnwindNvtx, ChildRunsAFailingPhase) {
  if (!std::getenv(kChildVariable))
    GTEST_SKIP() << "runs only as the child of NvtxToolSeesThePhasePopped";
  Tracer tracer;
  tracer.start();
  bool skipped_task_ran = false;
  run_failing_phase(tracer, skipped_task_ran);
  tracer.stop();
}

TEST(ExecutorUnwindNvtx, NvtxToolSeesThePhasePopped) {
  if (*kRecorderPath == '\0')
    GTEST_SKIP() << "NVTX 3 headers were not found at configure time: no NVTX ranges";
  if (std::getenv(kChildVariable)) GTEST_SKIP() << "the child runs ChildRunsAFailingPhase only";
  const std::filesystem::path record =
      std::filesystem::temp_directory_path() /
      ("tunescope-unwind-nvtx-" + std::to_string(::getpid()) + ".tsv");
  std::filesystem::remove(record);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command =
      std::string("NVTX_INJECTION64_PATH='") + kRecorderPath + "' TUNESCOPE_NVTX_RECORD='" +
      record.string() + "' " + kChildVariable + "=1 '" + self +
      "' --gtest_filter=ExecutorUnwindNvtx.ChildRunsAFailingPhase > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(record);
  ASSERT_TRUE(in) << "the NVTX tool was not loaded: no " << record;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::filesystem::remove(record);
  ASSERT_EQ(lines.size(), 1u) << "one range, no unclosed one, no unbalanced pop";
  EXPECT_EQ(lines[0].substr(0, 6), "range\t") << lines[0];
  EXPECT_NE(lines[0].find("\ttunescope\tphase\tforward"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace tunescope
