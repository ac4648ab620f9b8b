// The header row of a group of tracks (a device, or a rank of a merged trace): a
// disclosure triangle, the group's name and its track count; clicking it collapses or
// expands the group. A rank's device groups are indented under it.
#pragma once

#include "widgets/TimelineItem.h"

namespace tunescope::gui {

class GroupHeaderItem final : public TimelineItem {
 public:
  static constexpr int kHeight = 22;

  GroupHeaderItem(const TrackGroup& group, int index) : group_(group), index_(index) {}
  QString label() const override;
  int height() const override { return kHeight; }
  int indent() const override { return 10 + 12 * group_.level(); }
  void drawBackground(QPainter& p, const QRect& header, const QRect& area,
                      bool alternate) const override;
  void drawContents(QPainter&, const QRect&, const TimelinePaintContext&) const override {}
  std::optional<TimelineHit> hitTest(double, double, const TimelinePaintContext&) const override {
    return std::nullopt;
  }

  const TrackGroup& group() const { return group_; }
  int groupIndex() const { return index_; }
  bool collapsed() const { return collapsed_; }
  void setCollapsed(bool collapsed) { collapsed_ = collapsed; }

 private:
  const TrackGroup& group_;
  int index_;
  bool collapsed_ = false;
};

}  // namespace tunescope::gui
