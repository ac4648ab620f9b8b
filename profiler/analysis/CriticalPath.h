// The critical path of each training step and what bounds it, after HTA's critical-path
// and idle-time analyses (github.com/facebookresearch/HolisticTraceAnalysis), computed
// on the dependency graph so that it applies to recorded and to replayed times alike.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/Trace.h"
#include "profiler/analysis/DependencyGraph.h"

namespace tunescope::profiler::analysis {

// What a stretch of the critical path was spent on.
enum class Bound {
  compute,          // kernels
  copies,           // memcpy, memset
  synchronisation,  // sync activities, waits for another lane's event, the host's final wait
  launch_overhead,  // host API calls, launch latency
  data_wait,        // the host between steps (loading the batch, submitting) before the path starts
  idle,             // a lane waiting for nothing recorded (scheduling, wake-up)
  communication,    // collectives between ranks (is_communication), their wait for the others
                    // included
};
inline constexpr size_t kBoundCount = 7;
const char* to_string(Bound bound);

// A step: an iteration range (ProfilerStep#N, train_step); eval steps are left out.
// A trace without iteration ranges is one step from its first to its last activity.
struct Step {
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<size_t> nodes;  // graph nodes starting within the step, in order
  size_t anchor = SIZE_MAX;   // the node the step waits for: the last to end within it
  int64_t duration_ns() const { return end_ns - start_ns; }
};
std::vector<Step> find_steps(const Trace& trace, const DependencyGraph& graph);

// Node times to analyse: the recorded ones or a replay's.
struct Timing {
  const std::vector<int64_t>& start_ns;
  const std::vector<int64_t>& end_ns;
};

struct CriticalPath {
  int64_t start_ns = 0, end_ns = 0;             // the step's window in this timing
  std::vector<size_t> nodes;                    // in time order
  std::array<int64_t, kBoundCount> bound_ns{};  // sums to end_ns - start_ns when no edge overlaps
};

// The chain of binding predecessors (each node's predecessor released last) back from
// the step's anchor, within the window [start_ns, end_ns] (the step's own window, or the
// replayed one, see replayed_window).
CriticalPath critical_path(const DependencyGraph& graph, const Trace& trace, const Timing& timing,
                           const Step& step, int64_t start_ns, int64_t end_ns);

// HTA's idle-time breakdown of one lane in a step: gaps before each node, by what
// released the node: the host (a host wait or launch edge), another lane's work (an
// event edge: HTA's kernel wait), or its own lane (other: scheduling, wake-up).
struct LaneIdle {
  int device = 0, stream = 0;
  int64_t busy_ns = 0, host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;
};
std::vector<LaneIdle> idle_breakdown(const DependencyGraph& graph, const Trace& trace,
                                     const Step& step);

// A step's window under a replay: both ends move as the anchors of this step and of the
// one before moved (the host's time between steps is kept).
struct Window {
  int64_t start_ns = 0, end_ns = 0;
};
std::vector<Window> replayed_windows(const std::vector<Step>& steps, const DependencyGraph& graph,
                                     const std::vector<int64_t>& replayed_end_ns);

}  // namespace tunescope::profiler::analysis
