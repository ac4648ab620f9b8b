// Painting and hit-testing of a range row.
#include "widgets/RangeRowItem.h"

#include "models/LodBuilder.h"
#include "models/TimeFormat.h"
#include "widgets/KernelPalette.h"

namespace tunescope::gui {

QString RangeRowItem::label() const { return row_.label; }

void RangeRowItem::drawContents(QPainter& p, const QRect& area,
                                const TimelinePaintContext& ctx) const {
  const auto& ranges = ctx.document->trace().ranges;
  const QFontMetrics fm(p.font());
  for (const LodBox& box : buildLod(row_.series, *ctx.timeline)) {
    const profiler::Range& r = ranges[row_.series.indices[box.first]];
    const double x0 = std::max(box.x0, -2.0) + area.left();
    const double x1 = std::min(box.x1, static_cast<double>(area.width()) + 2) + area.left();
    const QRectF rect(x0, area.top() + 1, std::max(x1 - x0, 1.0), area.height() - 1);
    QColor fill = palette::rangeColor(r.category);
    if (box.isCluster()) fill = fill.darker(125);
    p.fillRect(rect, fill);
    // A light left edge separates back-to-back ranges of the same colour.
    p.fillRect(QRectF(rect.left(), rect.top(), 1, rect.height()), fill.lighter(160));
    // Names only where a line of text fits; the tooltip has them at any size.
    if (!box.isCluster() && rect.width() > 24 && rect.height() >= fm.height() - 3) {
      p.setPen(QColor(0xe8, 0xea, 0xee));
      const QRectF textRect = rect.adjusted(4, 0, -2, 0).intersected(QRectF(area));
      p.drawText(textRect, Qt::AlignVCenter | Qt::AlignLeft,
                 fm.elidedText(QString::fromStdString(r.name), Qt::ElideRight,
                               static_cast<int>(textRect.width())));
    }
  }
}

std::optional<TimelineHit> RangeRowItem::hitTest(double x, double y,
                                                 const TimelinePaintContext& ctx) const {
  const std::optional<size_t> k = recordAt(row_.series, *ctx.timeline, x, 3.0);
  if (!k || y < 0 || y >= height_) return std::nullopt;
  const TraceDocument& doc = *ctx.document;
  const profiler::Range& r = doc.trace().ranges[row_.series.indices[*k]];
  return TimelineHit{
      QStringLiteral(
          "<b>%1</b> <i>(%2)</i><table><tr><td>lane</td><td>%3</td></tr>"
          "<tr><td>start</td><td>%4</td></tr><tr><td>duration</td><td>%5</td></tr></table>")
          .arg(QString::fromStdString(r.name).toHtmlEscaped(),
               QString::fromStdString(profiler::to_string(r.category)))
          .arg(QStringLiteral("device %1 · lane %2").arg(r.device).arg(r.lane))
          .arg(formatDuration(static_cast<double>(r.start_ns - doc.extent().start_ns)),
               formatDuration(static_cast<double>(r.end_ns - r.start_ns))),
      std::nullopt};
}

}  // namespace tunescope::gui
