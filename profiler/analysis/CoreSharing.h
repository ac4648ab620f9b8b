// Lanes that shared a core: on a CPU a lane is a thread, and when the OS runs two lanes'
// threads on one core (another process holds the other, or the scheduler put both on
// one), work whose dependencies were met waits until the other lane's work ends. No flow
// records that wait: the trace shows it in two ways.
//
// - A step whose lanes shared one core all along runs their kernels one at a time: the
//   kernels of different lanes on a device barely overlap (a thread preempted inside a
//   kernel shows a short overlap), where lanes with a core each overlap for most of the
//   shorter lane's work. Each kernel of such a step waited for the device's kernel before
//   it, whatever its lane.
// - In any other step, a single wait: a kernel that started long after its release, right
//   after a kernel of another lane on its device ended.
//
// The replay (Replay.h) then keeps those waits: a lane's work that grows delays the other
// lane's work that waited for its core.
#pragma once

#include <cstddef>
#include <vector>

#include "profiler/Trace.h"
#include "profiler/analysis/CriticalPath.h"
#include "profiler/analysis/DependencyGraph.h"

namespace tunescope::profiler::analysis {

// Per device of a step: true when its lanes' kernels ran one at a time, i.e. the time two
// or more of them ran at once is under a quarter of the most it could have been (the busy
// time of all its lanes less the busiest lane's).
bool shared_one_core(const DependencyGraph& graph, const std::vector<size_t>& device_kernels);

struct CoreWaitsFound {
  size_t edges = 0;           // core edges added
  size_t one_core_steps = 0;  // steps where some device's lanes shared one core
  // Step devices left alone: the trace says their lanes ran on CPUs of their own
  // (profiler/LaneCpus.h, the engine's cpu_binding), so none waited for another's core.
  size_t bound_apart_steps = 0;
};
// Adds `core` edges to `graph` (after every recorded edge: the releases read them) and
// counts them in graph.core_edges. In a step whose device shared one core: from each kernel to the
// next kernel of the device, where the next is on another lane and started after it ended. In the
// other steps, to each kernel N that waited for a core: among the kernels of other lanes of N's
// device ending after N's release (the last of its predecessors) and at or before N's start, X is
// the last to end, and N started within the second half of its wait (start - X's end < (start -
// release) / 2): the wait ended with X, not with a wake-up of N's own. A root (no predecessor)
// keeps its start. A step's device whose lanes the trace's metadata shows bound to
// distinct CPUs gets no core edge.
CoreWaitsFound add_core_edges(DependencyGraph& graph, const Trace& trace,
                              const std::vector<Step>& steps);

}  // namespace tunescope::profiler::analysis
