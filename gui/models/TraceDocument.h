// A loaded trace and what the views derive from it once, off the GUI thread: one
// activity lane per (device, stream), range rows per (device, nesting depth), the
// whole-trace summary (with its kernel table) and the time extent.
#pragma once

#include <QString>
#include <memory>
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
  int device = 0;
  int depth = 0;   // 0 = outermost
  QString label;   // the category most ranges of the row have
  LaneSeries series;
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

  profiler::Trace trace_;
  QString filePath_;
  std::vector<ActivityLane> lanes_;
  std::vector<RangeRow> rangeRows_;
  profiler::TraceSummary summary_;
  std::vector<profiler::KernelPassRate> passRates_;
  profiler::Interval extent_{0, 1};
};

using TraceDocumentPtr = std::shared_ptr<const TraceDocument>;

}  // namespace tunescope::gui
