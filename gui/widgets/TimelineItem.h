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
  std::string highlightedKernel;             // empty: none
  std::optional<uint32_t> focusedActivity;   // index into trace().activities
  std::optional<uint32_t> selectedActivity;  // the clicked one, whose flows are drawn
};

struct TimelineHit {
  QString tooltipHtml;
  std::optional<uint32_t> activity;  // set when the hit is an activity
};

// What the label column shows of an item: the full text, what fits (elided in the
// middle, where names differ: "CPU 0 · l…e 12"), and where.
struct HeaderLabel {
  QRect rect;
  QString full;
  QString shown;
  bool elided() const { return shown != full; }
};

class TimelineItem {
 public:
  virtual ~TimelineItem() = default;
  virtual QString label() const = 0;
  virtual QString subLabel() const { return {}; }
  virtual int height() const = 0;
  // Left indent of the header text (tracks sit under their group's header).
  virtual int indent() const { return 10; }

  // header: the left column; area: the row across the time axis.
  virtual void drawBackground(QPainter& p, const QRect& header, const QRect& area,
                              bool alternate) const;
  virtual void drawContents(QPainter& p, const QRect& area,
                            const TimelinePaintContext& ctx) const = 0;
  // x from the left of the time area, y from the top of the item.
  virtual std::optional<TimelineHit> hitTest(double x, double y,
                                             const TimelinePaintContext& ctx) const = 0;

  // The label line as drawn into `header` with the font metrics `fm` (one function for
  // painting, tooltips and tests, so they cannot disagree).
  HeaderLabel headerLabel(const QRect& header, const QFontMetrics& fm) const;
};

}  // namespace tunescope::gui
