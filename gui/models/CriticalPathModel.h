// What the critical-path panel and the timeline show of `tunescope analyze`
// (profiler/analysis): the median step's critical path as trace activities, its
// breakdown by what bounds it, the findings, and each activity's dependencies
// (flows and launches) to draw as arrows on the selected record. Computed once per
// document; no widgets.
#pragma once

#include <QString>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "profiler/Metrics.h"
#include "profiler/Trace.h"
#include "profiler/analysis/CriticalPath.h"
#include "profiler/analysis/DependencyGraph.h"
#include "profiler/analysis/Findings.h"

namespace tunescope::gui {

// A dependency between two activities that lane order does not already show.
struct DependencyLink {
  uint32_t from = 0, to = 0;  // indices into Trace::activities
  profiler::analysis::EdgeKind kind = profiler::analysis::EdgeKind::event;
};

// One row of the breakdown: a bound, its time on the median step's path and share.
struct BoundRow {
  QString bound;
  int64_t ns = 0;
  double percent = 0;
};

class CriticalPathModel {
 public:
  // Traces larger than this are not analysed in the viewer (the CLI does them).
  static constexpr size_t kMaxActivities = 1'000'000;

  // Analyses `trace`; never throws: whyNotAnalysed() says what stopped it.
  explicit CriticalPathModel(const profiler::Trace& trace);

  bool analysed() const { return whyNot_.isEmpty(); }
  const QString& whyNotAnalysed() const { return whyNot_; }
  // The median step: name, window, duration.
  const QString& stepName() const { return stepName_; }
  profiler::Interval stepWindow() const { return stepWindow_; }
  // The median step's critical path, in time order.
  const std::vector<uint32_t>& pathActivities() const { return path_; }
  bool onPath(uint32_t activity) const;
  // The six bounds in profiler::analysis::Bound order, with the share of the step.
  const std::vector<BoundRow>& breakdown() const { return breakdown_; }
  const std::vector<profiler::analysis::Finding>& findings() const { return findings_; }
  // The links into and out of `activity` (its cross-lane dependencies and launches).
  std::vector<DependencyLink> linksOf(uint32_t activity) const;
  // The first activity of the critical path whose name is among `names` (a finding's
  // evidence), else the first in the trace.
  std::optional<uint32_t> firstOf(const std::vector<std::string>& names) const;
  // The first activity of the critical path with a dependency on another lane (the
  // record a finding without evidence, such as lane gaps, points at), if any.
  std::optional<uint32_t> firstLinkedOnPath() const;
  // One line per finding for the panel: "[rule] summary — gain".
  QString findingText(size_t index) const;

 private:
  QString whyNot_;
  QString stepName_;
  profiler::Interval stepWindow_{0, 0};
  int64_t stepNs_ = 0;
  std::vector<uint32_t> path_, sortedPath_;
  std::vector<BoundRow> breakdown_;
  std::vector<profiler::analysis::Finding> findings_;
  std::vector<DependencyLink> links_;  // sorted by from, then to
  std::vector<size_t> linksByTo_;      // indices into links_, sorted by to
  std::vector<std::string> names_;     // per activity, for firstOf
};

using CriticalPathModelPtr = std::shared_ptr<const CriticalPathModel>;

}  // namespace tunescope::gui
