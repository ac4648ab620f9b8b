// The executor's dependencies in the trace: an event waited on across lanes and the
// host's waits before it submits become flows whose ends bracket the kernels they link.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/engine/Executor.h"
#include "profiler/Tracer.h"

namespace tunescope {
namespace {

using namespace std::chrono_literals;
using profiler::ActivityKind;
using profiler::Flow;
using profiler::FlowKind;

void kernel(const ExecContext& exec, const char* name) {
  profiler::KernelScope scope(exec.tracer, name, exec.device, exec.lane);
  std::this_thread::sleep_for(2ms);
}

const profiler::Activity& find(const profiler::Trace& trace, const std::string& name) {
  const auto it = std::find_if(trace.activities.begin(), trace.activities.end(),
                               [&](const profiler::Activity& a) { return a.name == name; });
  if (it == trace.activities.end()) throw std::runtime_error("no activity " + name);
  return *it;
}

TEST(ExecutorFlows, EventWaitsAndHostWaitsBecomeFlowsBetweenTheKernelsTheyOrder) {
  profiler::Tracer tracer;
  tracer.start();
  profiler::Trace trace;
  {
    Executor executor(2, 1, &tracer);
    Event produced;
    executor.submit(0, [](const ExecContext& exec) { kernel(exec, "a"); });
    executor.record(0, produced);
    executor.wait(1, produced);
    executor.submit(1, [](const ExecContext& exec) { kernel(exec, "b"); });
    executor.synchronize();
    // Already complete when waited on: still a dependency of the task after it.
    executor.wait(1, produced);
    executor.submit(1, [](const ExecContext& exec) { kernel(exec, "c"); });
    executor.synchronize();
    tracer.stop();
    trace = tracer.collect({});
  }
  const auto& a = find(trace, "a");
  const auto& b = find(trace, "b");
  const auto& c = find(trace, "c");
  std::vector<Flow> to_b, to_c;
  for (const Flow& f : trace.flows) (f.to.ns <= b.start_ns ? to_b : to_c).push_back(f);

  ASSERT_EQ(to_b.size(), 1u);
  EXPECT_EQ(to_b[0].kind, FlowKind::event);
  EXPECT_EQ(to_b[0].from.stream, 0);
  EXPECT_EQ(to_b[0].to.stream, 1);
  EXPECT_GE(to_b[0].from.ns, a.end_ns);
  EXPECT_LE(to_b[0].from.ns, to_b[0].to.ns);
  EXPECT_LE(to_b[0].to.ns, b.start_ns);

  // Lane 0's end reached c twice: through the event, and through the host's
  // synchronize (lane 1's own end is lane order, not a flow).
  ASSERT_EQ(to_c.size(), 2u);
  for (const Flow& f : to_c) {
    EXPECT_EQ(f.from.stream, 0);
    EXPECT_EQ(f.to.stream, 1);
    EXPECT_GE(f.from.ns, a.end_ns);
    EXPECT_LT(f.from.ns, b.start_ns);
    EXPECT_GE(f.to.ns, b.end_ns);
    EXPECT_LE(f.to.ns, c.start_ns);
  }
  EXPECT_NE(to_c[0].kind, to_c[1].kind);  // one event, one host
}

TEST(ExecutorFlows, NothingIsRecordedWhileTheTracerIsStopped) {
  profiler::Tracer tracer;
  Executor executor(2, 1, &tracer);
  Event produced;
  executor.submit(0, [](const ExecContext& exec) { kernel(exec, "a"); });
  executor.record(0, produced);
  executor.wait(1, produced);
  executor.submit(1, [](const ExecContext& exec) { kernel(exec, "b"); });
  executor.synchronize();
  EXPECT_TRUE(tracer.collect({}).flows.empty());
}

}  // namespace
}  // namespace tunescope
