// A row of ranges (run, candidate, iteration, layer, phase) at one nesting depth of one
// lane; a TrackItem stacks the rows of increasing depth into nested bars.
#pragma once

#include "widgets/TimelineItem.h"

namespace tunescope::gui {

class RangeRowItem final : public TimelineItem {
 public:
  explicit RangeRowItem(const RangeRow& row) : row_(row) {}
  QString label() const override;
  int height() const override { return height_; }
  // The view shrinks the rows of deep stacks so that every lane fits (within limits).
  void setHeight(int pixels) { height_ = pixels; }
  void drawContents(QPainter& p, const QRect& area, const TimelinePaintContext& ctx) const override;
  std::optional<TimelineHit> hitTest(double x, double y,
                                     const TimelinePaintContext& ctx) const override;

 private:
  const RangeRow& row_;
  int height_ = 18;
};

}  // namespace tunescope::gui
