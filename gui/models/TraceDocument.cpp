// Builds the timeline rows of a trace: lanes by (device, stream), range rows by
// nesting depth, computed once so painting only binary-searches.
#include "models/TraceDocument.h"

#include <stdexcept>

#include <algorithm>
#include <limits>
#include <map>


namespace tunescope::gui {

using profiler::Activity;
using profiler::Range;

void LaneSeries::add(int64_t startNs, int64_t endNs, uint32_t index) {
  starts.push_back(startNs);
  ends.push_back(endNs);
  indices.push_back(index);
  maxDurationNs = std::max(maxDurationNs, endNs - startNs);
}

TraceDocument::TraceDocument(profiler::Trace trace, QString filePath)
    : trace_(std::move(trace)), filePath_(std::move(filePath)) {
  // The reader sorts; a trace built in memory might not be, and lanes need it.
  if (!std::is_sorted(trace_.activities.begin(), trace_.activities.end(),
                      [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; }) ||
      !std::is_sorted(trace_.ranges.begin(), trace_.ranges.end(),
                      [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; }))
    profiler::sort_by_start(trace_);
  buildLanes();
  buildRangeRows();
  summary_ = profiler::summarize(trace_);
  try {
    passRates_ = profiler::kernel_pass_rates(trace_, profiler::conv_layers_of(trace_.metadata));
  } catch (const std::invalid_argument&) {
    // A damaged conv-layer entry costs the GFLOP/s column, not the timeline.
  }

  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const Activity& a : trace_.activities) lo = std::min(lo, a.start_ns), hi = std::max(hi, a.end_ns);
  for (const Range& r : trace_.ranges) lo = std::min(lo, r.start_ns), hi = std::max(hi, r.end_ns);
  if (lo <= hi) extent_ = {lo, std::max(hi, lo + 1)};
}

std::shared_ptr<const TraceDocument> TraceDocument::load(const QString& filePath,
                                                         const profiler::TraceReadOptions& options) {
  profiler::Trace trace = profiler::read_trace_file(filePath.toStdString(), options);
  if (options.cancel && options.cancel->load())
    throw profiler::TraceReadCancelled(filePath.toStdString() + ": loading cancelled");
  return std::make_shared<const TraceDocument>(std::move(trace), filePath);
}

void TraceDocument::buildLanes() {
  const bool gpu = trace_.metadata.backend == "cuda";
  std::map<profiler::LaneKey, size_t> slot;
  for (uint32_t i = 0; i < trace_.activities.size(); ++i) {
    const Activity& a = trace_.activities[i];
    const profiler::LaneKey key{a.device, a.stream};
    auto [it, inserted] = slot.try_emplace(key, lanes_.size());
    if (inserted) {
      ActivityLane lane;
      lane.key = key;
      lane.label = gpu ? QStringLiteral("GPU %1 · stream %2").arg(a.device).arg(a.stream)
                       : QStringLiteral("CPU %1 · lane %2").arg(a.device).arg(a.stream);
      lanes_.push_back(std::move(lane));
    }
    lanes_[it->second].series.add(a.start_ns, a.end_ns, i);
  }
  std::sort(lanes_.begin(), lanes_.end(),
            [](const ActivityLane& a, const ActivityLane& b) { return a.key < b.key; });
}

void TraceDocument::buildRangeRows() {
  // Ranges come sorted by start with enclosing ones first, so a stack of open ends
  // per device gives each range its nesting depth.
  std::map<int, std::vector<int64_t>> open;
  std::map<std::pair<int, int>, size_t> slot;
  std::map<std::pair<int, int>, std::map<profiler::RangeCategory, size_t>> categories;
  for (uint32_t i = 0; i < trace_.ranges.size(); ++i) {
    const Range& r = trace_.ranges[i];
    std::vector<int64_t>& stack = open[r.device];
    while (!stack.empty() && stack.back() <= r.start_ns) stack.pop_back();
    const int depth = static_cast<int>(stack.size());
    stack.push_back(r.end_ns);
    auto [it, inserted] = slot.try_emplace({r.device, depth}, rangeRows_.size());
    if (inserted) {
      RangeRow row;
      row.device = r.device;
      row.depth = depth;
      rangeRows_.push_back(std::move(row));
    }
    rangeRows_[it->second].series.add(r.start_ns, r.end_ns, i);
    ++categories[{r.device, depth}][r.category];
  }
  for (RangeRow& row : rangeRows_) {
    const auto& counts = categories[{row.device, row.depth}];
    const auto top = std::max_element(counts.begin(), counts.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    row.label = QString::fromStdString(profiler::to_string(top->first));
  }
  std::sort(rangeRows_.begin(), rangeRows_.end(), [](const RangeRow& a, const RangeRow& b) {
    return std::pair(a.device, a.depth) < std::pair(b.device, b.depth);
  });
}

std::vector<uint32_t> TraceDocument::instancesOf(const std::string& name) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < trace_.activities.size(); ++i)
    if (trace_.activities[i].name == name) out.push_back(i);
  return out;
}

}  // namespace tunescope::gui
