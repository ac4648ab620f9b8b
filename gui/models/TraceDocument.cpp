// Builds the timeline rows of a trace: lanes by (rank, device, stream), range rows by
// (rank, device, lane, nesting depth), tracks and their rank and device groups, launch flows;
// computed once so painting only binary-searches.
#include "models/TraceDocument.h"

#include <stdexcept>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "profiler/ChromeEventOutput.h"
#include "profiler/TraceFileOutput.h"

namespace tunescope::gui {

using profiler::Activity;
using profiler::Range;

void LaneSeries::reserve(size_t count) {
  starts.reserve(count);
  ends.reserve(count);
  indices.reserve(count);
}

void LaneSeries::add(int64_t startNs, int64_t endNs, uint32_t index) {
  starts.push_back(startNs);
  ends.push_back(endNs);
  indices.push_back(index);
  maxDurationNs = std::max(maxDurationNs, endNs - startNs);
}

TraceDocument::TraceDocument(profiler::Trace trace, QString filePath)
    : trace_(std::move(trace)), filePath_(std::move(filePath)) {
  // The reader sorts; a trace built in memory might not be, and lanes need it.
  if (!std::is_sorted(
          trace_.activities.begin(), trace_.activities.end(),
          [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; }) ||
      !std::is_sorted(trace_.ranges.begin(), trace_.ranges.end(),
                      [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; }))
    profiler::sort_by_start(trace_);
  ranked_ = profiler::has_ranks(trace_);
  buildLanes();
  buildRangeRows();
  buildTracks();
  buildFlows();
  summary_ = profiler::summarize(trace_);
  try {
    passRates_ = profiler::kernel_pass_rates(trace_, profiler::conv_layers_of(trace_.metadata));
  } catch (const std::invalid_argument&) {
    // A damaged conv-layer entry costs the GFLOP/s column, not the timeline.
  }

  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const Activity& a : trace_.activities)
    lo = std::min(lo, a.start_ns), hi = std::max(hi, a.end_ns);
  for (const Range& r : trace_.ranges) lo = std::min(lo, r.start_ns), hi = std::max(hi, r.end_ns);
  if (lo <= hi) extent_ = {lo, std::max(hi, lo + 1)};
}

std::shared_ptr<const TraceDocument> TraceDocument::load(
    const QString& filePath, const profiler::TraceReadOptions& options) {
  profiler::Trace trace = profiler::read_trace_file(filePath.toStdString(), options);
  if (options.cancel && options.cancel->load())
    throw profiler::TraceReadCancelled(filePath.toStdString() + ": loading cancelled");
  return std::make_shared<const TraceDocument>(std::move(trace), filePath);
}

void TraceDocument::buildLanes() {
  const bool gpu = trace_.metadata.backend == "cuda";
  // Two passes, so each lane's arrays are sized once: grown by doubling, a lane of
  // millions of activities would hold its old and new arrays at once. Consecutive
  // activities mostly share a lane, so the last lookup is remembered.
  std::map<profiler::LaneKey, size_t> slot;
  std::vector<size_t> counts;
  auto slotOf = [&, lastKey = profiler::LaneKey{}, last = size_t{0},
                 any = false](const Activity& a) mutable {
    const profiler::LaneKey key{a.device, a.stream, a.rank};
    if (!any || !(key == lastKey)) {
      auto [it, inserted] = slot.try_emplace(key, lanes_.size());
      if (inserted) {
        ActivityLane lane;
        lane.key = key;
        lane.label = gpu ? QStringLiteral("GPU %1 · stream %2").arg(a.device).arg(a.stream)
                         : QStringLiteral("CPU %1 · lane %2").arg(a.device).arg(a.stream);
        lanes_.push_back(std::move(lane));
        counts.push_back(0);
      }
      lastKey = key, last = it->second, any = true;
    }
    return last;
  };
  for (const Activity& a : trace_.activities) ++counts[slotOf(a)];
  for (size_t i = 0; i < lanes_.size(); ++i) lanes_[i].series.reserve(counts[i]);
  for (uint32_t i = 0; i < trace_.activities.size(); ++i) {
    const Activity& a = trace_.activities[i];
    lanes_[slotOf(a)].series.add(a.start_ns, a.end_ns, i);
  }
  std::sort(lanes_.begin(), lanes_.end(),
            [](const ActivityLane& a, const ActivityLane& b) { return a.key < b.key; });
}

void TraceDocument::buildRangeRows() {
  // Ranges come sorted by start with enclosing ones first, so a stack of open ends
  // per (rank, device, lane) gives each range its nesting depth within its lane.
  std::map<profiler::LaneKey, std::vector<int64_t>> open;
  // (rank, device, lane, depth)
  std::map<std::tuple<int, int, int, int>, std::vector<uint32_t>> byRow;
  for (uint32_t i = 0; i < trace_.ranges.size(); ++i) {
    const Range& r = trace_.ranges[i];
    std::vector<int64_t>& stack = open[{r.device, r.lane, r.rank}];
    while (!stack.empty() && stack.back() <= r.start_ns) stack.pop_back();
    const int depth = static_cast<int>(stack.size());
    stack.push_back(r.end_ns);
    byRow[{r.rank, r.device, r.lane, depth}].push_back(i);
  }
  rangeRowOf_.assign(trace_.ranges.size(), 0);
  for (const auto& [key, indices] : byRow) {
    RangeRow row;
    std::tie(row.rank, row.device, row.lane, row.depth) = key;
    std::map<profiler::RangeCategory, size_t> categories;
    for (uint32_t i : indices) {
      const Range& r = trace_.ranges[i];
      row.series.add(r.start_ns, r.end_ns, i);
      ++categories[r.category];
      rangeRowOf_[i] = rangeRows_.size();
    }
    // The category most ranges of the row have names it.
    const auto top =
        std::max_element(categories.begin(), categories.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    row.label = QString::fromStdString(profiler::to_string(top->first));
    rangeRows_.push_back(std::move(row));
  }
}

void TraceDocument::buildTracks() {
  const bool gpu = trace_.metadata.backend == "cuda";
  std::map<profiler::LaneKey, Track> byKey;
  auto track = [&](profiler::LaneKey key) -> Track& {
    auto [it, inserted] = byKey.try_emplace(key);
    if (inserted) {
      it->second.key = key;
      it->second.label = gpu ? QStringLiteral("GPU %1 · stream %2").arg(key.device).arg(key.lane)
                             : QStringLiteral("CPU %1 · lane %2").arg(key.device).arg(key.lane);
    }
    return it->second;
  };
  // Rows come in (rank, device, lane, depth) order, so each track's rows are outermost
  // first.
  for (size_t i = 0; i < rangeRows_.size(); ++i)
    track({rangeRows_[i].device, rangeRows_[i].lane, rangeRows_[i].rank}).rangeRows.push_back(i);
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Track& t = track(lanes_[i].key);
    t.activityLane = i;
    t.label = lanes_[i].label;
  }
  // Keys come in (rank, device, lane) order: a new rank opens its group, a new device
  // (or rank) its device group.
  std::optional<size_t> rankGroup;
  for (auto& [key, t] : byKey) {
    if (ranked_ && (!rankGroup || groups_[*rankGroup].rank != key.rank)) {
      TrackGroup group;
      group.rank = key.rank;
      group.label = group.key = QStringLiteral("rank %1").arg(key.rank);
      rankGroup = groups_.size();
      groups_.push_back(std::move(group));
    }
    if (groups_.empty() || groups_.back().device != key.device || groups_.back().rank != key.rank) {
      TrackGroup group;
      group.rank = key.rank;
      group.device = key.device;
      group.label = QString::fromStdString(
          profiler::trace_output::device_name(trace_.metadata.backend, key.device));
      group.key =
          ranked_ ? groups_[*rankGroup].key + QStringLiteral(" / ") + group.label : group.label;
      group.parent = rankGroup;
      groups_.push_back(std::move(group));
    }
    groups_.back().tracks.push_back(tracks_.size());
    if (rankGroup) groups_[*rankGroup].tracks.push_back(tracks_.size());
    tracks_.push_back(std::move(t));
  }
}

void TraceDocument::buildFlows() {
  for (const auto& [launch, kernel] :
       profiler::chrome_trace::launch_kernel_pairs(trace_.activities))
    launchFlows_.push_back({static_cast<uint32_t>(launch), static_cast<uint32_t>(kernel)});
  for (uint32_t i = 0; i < trace_.ranges.size(); ++i)
    if (trace_.ranges[i].id != 0) rangeIds_.emplace_back(trace_.ranges[i].id, i);
  std::sort(rangeIds_.begin(), rangeIds_.end());
}

std::vector<LaunchFlow> TraceDocument::launchFlowsOf(uint32_t activityIndex) const {
  std::vector<LaunchFlow> out;
  const uint64_t correlation = trace_.activities[activityIndex].correlation;
  if (correlation == 0) return out;
  for (const LaunchFlow& f : launchFlows_)
    if (trace_.activities[f.kernel].correlation == correlation &&
        trace_.activities[f.kernel].rank == trace_.activities[activityIndex].rank &&
        (f.launch == activityIndex || f.kernel == activityIndex))
      out.push_back(f);
  return out;
}

std::optional<uint32_t> TraceDocument::rangeWithId(uint64_t id) const {
  if (id == 0) return std::nullopt;
  const auto it =
      std::lower_bound(rangeIds_.begin(), rangeIds_.end(), std::pair<uint64_t, uint32_t>{id, 0});
  if (it == rangeIds_.end() || it->first != id) return std::nullopt;
  return it->second;
}

QString TraceDocument::kind() const {
  return trace_.metadata.backend.empty() ? QStringLiteral("foreign")
                                         : QString::fromStdString(trace_.metadata.backend);
}

std::vector<uint32_t> TraceDocument::instancesOf(const std::string& name) const {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < trace_.activities.size(); ++i)
    if (trace_.activities[i].name == name) out.push_back(i);
  return out;
}

}  // namespace tunescope::gui
