// One lane's track: its ranges as a nested stack (one RangeRowItem per depth, outermost
// on top, as Perfetto draws thread slices) above its activities (an ActivityLaneItem).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "widgets/ActivityLaneItem.h"
#include "widgets/RangeRowItem.h"

namespace tunescope::gui {

class TrackItem final : public TimelineItem {
 public:
  TrackItem(const TraceDocument& document, const Track& track);
  QString label() const override { return track_.label; }
  QString subLabel() const override;
  // Under its device's header, and under its rank's too in a merged trace.
  int indent() const override { return indent_; }
  int height() const override;
  void drawContents(QPainter& p, const QRect& area, const TimelinePaintContext& ctx) const override;
  std::optional<TimelineHit> hitTest(double x, double y,
                                     const TimelinePaintContext& ctx) const override;

  const Track& track() const { return track_; }
  int rangeDepths() const { return static_cast<int>(rows_.size()); }
  bool hasActivities() const { return lane_ != nullptr; }
  // Row heights, set by the view's layout.
  void setHeights(int rangeRowPixels, int lanePixels);
  // Offsets from the item's top: of range depth `depth`, and of the activity lane.
  int rangeRowTop(int depth) const { return depth * rangeRowHeight_; }
  int rangeRowHeight() const { return rangeRowHeight_; }
  int laneTop() const { return rangeDepths() * rangeRowHeight_ + (rows_.empty() ? 0 : kStackGap); }
  int laneHeight() const { return lane_ ? lane_->height() : 0; }

 private:
  static constexpr int kStackGap = 2;
  const Track& track_;
  int indent_ = 22;
  std::vector<std::unique_ptr<RangeRowItem>> rows_;
  std::unique_ptr<ActivityLaneItem> lane_;
  int rangeRowHeight_ = 18;
};

}  // namespace tunescope::gui
