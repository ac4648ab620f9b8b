#include "profiler/Trace.h"

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>
#include <tuple>

namespace tunescope::profiler {

namespace {
constexpr std::array kActivityKindNames{"kernel", "memcpy", "memset", "sync", "overhead"};
constexpr std::array kRangeCategoryNames{"run", "candidate", "iteration", "layer", "phase"};
constexpr std::array kFlowKindNames{"event", "host", "launch"};

template <typename Enum, size_t N>
Enum parse_name(const std::array<const char*, N>& names, const std::string& text,
                const char* what) {
  for (size_t i = 0; i < N; ++i)
    if (text == names[i]) return static_cast<Enum>(i);
  throw std::invalid_argument("unknown " + std::string(what) + " '" + text + "'");
}
}  // namespace

std::string to_string(ActivityKind kind) {
  return kActivityKindNames.at(static_cast<size_t>(kind));
}
std::string to_string(RangeCategory category) {
  return kRangeCategoryNames.at(static_cast<size_t>(category));
}
ActivityKind parse_activity_kind(const std::string& text) {
  return parse_name<ActivityKind>(kActivityKindNames, text, "activity kind");
}
RangeCategory parse_range_category(const std::string& text) {
  return parse_name<RangeCategory>(kRangeCategoryNames, text, "range category");
}

std::string to_string(FlowKind kind) { return kFlowKindNames.at(static_cast<size_t>(kind)); }
FlowKind parse_flow_kind(const std::string& text) {
  return parse_name<FlowKind>(kFlowKindNames, text, "flow kind");
}

void sort_by_start(Trace& trace) {
  // The ends are compared swapped so that a longer record sorts first at the same start.
  const auto activity_order = [](const Activity& a, const Activity& b) {
    return std::tie(a.start_ns, b.end_ns, a.rank, a.device, a.stream) <
           std::tie(b.start_ns, a.end_ns, b.rank, b.device, b.stream);
  };
  const auto range_order = [](const Range& a, const Range& b) {
    return std::tie(a.start_ns, b.end_ns, a.rank, a.device, a.lane) <
           std::tie(b.start_ns, a.end_ns, b.rank, b.device, b.lane);
  };
  // Traces read from files usually come sorted: checking is much cheaper than sorting.
  if (!std::is_sorted(trace.activities.begin(), trace.activities.end(), activity_order))
    std::stable_sort(trace.activities.begin(), trace.activities.end(), activity_order);
  if (!std::is_sorted(trace.ranges.begin(), trace.ranges.end(), range_order))
    std::stable_sort(trace.ranges.begin(), trace.ranges.end(), range_order);
  const auto flow_order = [](const Flow& a, const Flow& b) {
    return std::tie(a.to.ns, a.to.rank, a.to.device, a.to.stream, a.from.ns, a.from.rank,
                    a.from.device, a.from.stream,
                    a.kind) < std::tie(b.to.ns, b.to.rank, b.to.device, b.to.stream, b.from.ns,
                                       b.from.rank, b.from.device, b.from.stream, b.kind);
  };
  if (!std::is_sorted(trace.flows.begin(), trace.flows.end(), flow_order))
    std::stable_sort(trace.flows.begin(), trace.flows.end(), flow_order);
}

bool has_ranks(const Trace& trace) {
  return std::any_of(trace.activities.begin(), trace.activities.end(),
                     [](const Activity& a) { return a.rank != 0; }) ||
         std::any_of(trace.ranges.begin(), trace.ranges.end(),
                     [](const Range& r) { return r.rank != 0; });
}

std::vector<int> ranks_of(const Trace& trace) {
  std::set<int> ranks{0};
  if (!trace.activities.empty() || !trace.ranges.empty()) ranks.clear();
  for (const Activity& a : trace.activities) ranks.insert(a.rank);
  for (const Range& r : trace.ranges) ranks.insert(r.rank);
  return {ranks.begin(), ranks.end()};
}

}  // namespace tunescope::profiler
