// A loaded trace and what the views derive from it once, off the GUI thread: one
// activity lane per (rank, device, stream), range rows per (rank, device, lane, nesting
// depth), tracks (a lane's range rows above its activities) grouped by rank (in a merged
// trace of several ranks) and device, the launch flows, the whole-trace summary (with
// its kernel table) and the time extent.
#pragma once

#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "models/LaneSeries.h"
#include "profiler/Metrics.h"
#include "profiler/Roofline.h"
#include "profiler/Trace.h"
#include "profiler/TraceFiles.h"

namespace tunescope::gui {

struct ActivityLane {
  profiler::LaneKey key;
  QString label;
  LaneSeries series;
};

struct RangeRow {
  int rank = 0;
  int device = 0;
  int lane = 0;   // Range::lane: the lane the ranges were recorded on
  int depth = 0;  // 0 = outermost, within the lane
  QString label;  // the category most ranges of the row have
  LaneSeries series;
};

// One timeline track: a lane's ranges as a nested stack (rows by depth) above its
// activities. A lane may have ranges only (a host thread) or activities only.
struct Track {
  profiler::LaneKey key;
  QString label;                       // "CPU 0 · lane 1", "GPU 0 · stream 7"
  std::vector<size_t> rangeRows;       // into rangeRows(), outermost first
  std::optional<size_t> activityLane;  // into lanes()
};

// A group of tracks: the tracks of one device, in lane order; in a merged trace of
// several ranks, first a group per rank holding all its tracks, followed by its device
// groups (parent: the rank group), so a rank collapses as a device does.
struct TrackGroup {
  int rank = 0;
  std::optional<int> device;     // unset for a rank's group
  QString label;                 // "CPU 0", "GPU 1", "rank 1"
  QString key;                   // what the collapse state is remembered by: unique per group
  std::optional<size_t> parent;  // into trackGroups(): the rank group of a device group
  std::vector<size_t> tracks;    // into tracks()
  int level() const { return parent ? 1 : 0; }
};

// A launch -> kernel link: the host-side launch (the CUDA API call) and the kernel
// sharing its nonzero correlation id (CUPTI, Kineto and Nsight Systems traces).
struct LaunchFlow {
  uint32_t launch = 0;  // index into trace().activities
  uint32_t kernel = 0;
};

class TraceDocument {
 public:
  TraceDocument(profiler::Trace trace, QString filePath);
  // Reads any trace profiler::read_trace_file reads (ours, PyTorch's, an Nsight Systems
  // SQLite export); throws std::runtime_error naming the file, or
  // profiler::TraceReadCancelled when options.cancel was set (also checked before the
  // document is built).
  static std::shared_ptr<const TraceDocument> load(const QString& filePath,
                                                   const profiler::TraceReadOptions& options = {});

  const profiler::Trace& trace() const { return trace_; }
  const QString& filePath() const { return filePath_; }
  const std::vector<ActivityLane>& lanes() const { return lanes_; }
  const std::vector<RangeRow>& rangeRows() const { return rangeRows_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<TrackGroup>& trackGroups() const { return groups_; }
  // Whether the trace holds several ranks (profiler::has_ranks): tracks group by rank.
  bool ranked() const { return ranked_; }
  // The row of rangeRows() that holds trace().ranges[index].
  size_t rangeRowOf(uint32_t rangeIndex) const { return rangeRowOf_[rangeIndex]; }
  // Launch flows in the order of their launch; those touching one activity.
  const std::vector<LaunchFlow>& launchFlows() const { return launchFlows_; }
  std::vector<LaunchFlow> launchFlowsOf(uint32_t activityIndex) const;
  // The ranges with a nonzero id, by id: what Activity::range_id refers to.
  std::optional<uint32_t> rangeWithId(uint64_t id) const;
  // What the viewer remembers settings per (group collapse state): the backend, or
  // "foreign" for a trace that names none.
  QString kind() const;
  const std::vector<profiler::KernelStats>& kernelTable() const { return summary_.kernels; }
  // Per conv kernel, the effective GFLOP/s of the passes it ran in (profiler::
  // kernel_pass_rates); empty for a trace without conv-layer metadata (or a bad entry).
  const std::vector<profiler::KernelPassRate>& kernelPassRates() const { return passRates_; }
  // profiler::summarize of the whole trace, computed with the document (off the GUI
  // thread), for the side panel when nothing is selected.
  const profiler::TraceSummary& summary() const { return summary_; }
  // First start .. last end over activities and ranges; {0, 1} when empty.
  profiler::Interval extent() const { return extent_; }
  // Indices into trace().activities of the activities named `name`, in time order.
  std::vector<uint32_t> instancesOf(const std::string& name) const;

 private:
  void buildLanes();
  void buildRangeRows();
  void buildTracks();
  void buildFlows();

  profiler::Trace trace_;
  QString filePath_;
  std::vector<ActivityLane> lanes_;
  std::vector<RangeRow> rangeRows_;
  std::vector<size_t> rangeRowOf_;
  std::vector<Track> tracks_;
  std::vector<TrackGroup> groups_;
  std::vector<LaunchFlow> launchFlows_;
  std::vector<std::pair<uint64_t, uint32_t>> rangeIds_;  // sorted by id
  profiler::TraceSummary summary_;
  std::vector<profiler::KernelPassRate> passRates_;
  profiler::Interval extent_{0, 1};
  bool ranked_ = false;
};

using TraceDocumentPtr = std::shared_ptr<const TraceDocument>;

}  // namespace tunescope::gui
