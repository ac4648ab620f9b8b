// One row of the timeline (after tracy's TimelineItem): the base draws the header and
// background; a subclass draws its records and answers hover queries.
#pragma once

#include <QPainter>
#include <QRect>
#include <QString>
#include <optional>
#include <string>

#include "models/TimelineData.h"
#include "models/TraceDocument.h"

namespace tunescope::gui {

struct TimelinePaintContext {
  const TraceDocument* document = nullptr;
  const TimelineData* timeline = nullptr;
  std::string highlightedKernel;            // empty: none
  std::optional<uint32_t> focusedActivity;  // index into trace().activities
};

struct TimelineHit {
  QString tooltipHtml;
  std::optional<uint32_t> activity;  // set when the hit is an activity
};

class TimelineItem {
 public:
  virtual ~TimelineItem() = default;
  virtual QString label() const = 0;
  virtual QString subLabel() const { return {}; }
  virtual int height() const = 0;

  // header: the left column; area: the row across the time axis.
  void drawBackground(QPainter& p, const QRect& header, const QRect& area, bool alternate) const;
  virtual void drawContents(QPainter& p, const QRect& area, const TimelinePaintContext& ctx) const = 0;
  virtual std::optional<TimelineHit> hitTest(double x, const TimelinePaintContext& ctx) const = 0;
};

}  // namespace tunescope::gui
