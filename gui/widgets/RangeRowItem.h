// A timeline row of ranges (run, candidate, iteration, layer, phase) at one nesting
// depth of one device; the rows of increasing depth stack into nested bars.
#pragma once

#include "widgets/TimelineItem.h"

namespace tunescope::gui {

class RangeRowItem final : public TimelineItem {
 public:
  explicit RangeRowItem(const RangeRow& row) : row_(row) {}
  QString label() const override;
  int height() const override { return 20; }
  void drawContents(QPainter& p, const QRect& area, const TimelinePaintContext& ctx) const override;
  std::optional<TimelineHit> hitTest(double x, const TimelinePaintContext& ctx) const override;

 private:
  const RangeRow& row_;
};

}  // namespace tunescope::gui
