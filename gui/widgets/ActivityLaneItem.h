// A timeline row of one (device, stream) lane: kernels and copies as boxes coloured by
// kernel family, sub-pixel ones merged into density clusters by the LOD builder.
#pragma once

#include "widgets/TimelineItem.h"

namespace tunescope::gui {

class ActivityLaneItem final : public TimelineItem {
 public:
  explicit ActivityLaneItem(const ActivityLane& lane) : lane_(lane) {}
  QString label() const override { return lane_.label; }
  QString subLabel() const override;
  int height() const override { return height_; }
  // The view stretches lanes to use its height (within limits).
  void setHeight(int pixels) { height_ = pixels; }
  void drawContents(QPainter& p, const QRect& area, const TimelinePaintContext& ctx) const override;
  std::optional<TimelineHit> hitTest(double x, double y,
                                     const TimelinePaintContext& ctx) const override;

 private:
  const ActivityLane& lane_;
  int height_ = 34;
};

// Tooltip text of an activity: name, lane, start, duration, flops, bytes.
QString activityTooltip(const TraceDocument& doc, uint32_t activityIndex);

}  // namespace tunescope::gui
