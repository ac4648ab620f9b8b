// Painting and hit-testing of an activity lane.
#include "widgets/ActivityLaneItem.h"

#include <cmath>

#include "models/KernelKind.h"
#include "models/LodBuilder.h"
#include "models/TimeFormat.h"
#include "widgets/KernelPalette.h"

namespace tunescope::gui {

namespace {
QString siQuantity(double v, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::abs(v) >= 1000 && i < 5) v /= 1000, ++i;
  return QStringLiteral("%1 %2%3")
      .arg(v, 0, 'f', i == 0 ? 0 : 2)
      .arg(QLatin1String(prefixes[i]), QLatin1String(unit));
}
}  // namespace

QString ActivityLaneItem::subLabel() const {
  const size_t n = lane_.series.size();
  return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? QStringLiteral("activity")
                                                   : QStringLiteral("activities"));
}

QString activityTooltip(const TraceDocument& doc, uint32_t index) {
  const profiler::Activity& a = doc.trace().activities[index];
  const KernelClass k = classifyKernel(a.kind, a.name);
  QString html = QStringLiteral("<b>%1</b> <i>(%2)</i><table>")
                     .arg(QString::fromStdString(a.name).toHtmlEscaped(), familyLabel(k.family));
  auto row = [&](const QString& key, const QString& value) {
    html += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>").arg(key, value);
  };
  if (doc.ranked()) row(QStringLiteral("rank"), QString::number(a.rank));
  row(QStringLiteral("lane"), QStringLiteral("device %1 · stream %2").arg(a.device).arg(a.stream));
  row(QStringLiteral("start"),
      formatDuration(static_cast<double>(a.start_ns - doc.extent().start_ns)));
  row(QStringLiteral("duration"), formatDuration(static_cast<double>(a.duration_ns())));
  row(QStringLiteral("flops"), siQuantity(a.flops, "FLOP"));
  row(QStringLiteral("bytes"), siQuantity(a.bytes, "B"));
  if (a.duration_ns() > 0 && a.flops > 0)
    row(QStringLiteral("rate"),
        siQuantity(a.flops / (static_cast<double>(a.duration_ns()) * 1e-9), "FLOP/s"));
  return html + QStringLiteral("</table>");
}

void ActivityLaneItem::drawContents(QPainter& p, const QRect& area,
                                    const TimelinePaintContext& ctx) const {
  const auto& activities = ctx.document->trace().activities;
  const std::vector<LodBox> boxes = buildLod(lane_.series, *ctx.timeline);
  const bool highlighting = !ctx.highlightedKernel.empty();
  const int pad = area.height() >= 30 ? 4 : 2;
  const int top = area.top() + pad, h = area.height() - 2 * pad;
  const QFontMetrics fm(p.font());
  std::optional<QRectF> focusRect;
  for (const LodBox& box : boxes) {
    const profiler::Activity& a = activities[lane_.series.indices[box.first]];
    const double x0 = std::max(box.x0, -2.0) + area.left();
    const double x1 = std::min(box.x1, static_cast<double>(area.width()) + 2) + area.left();
    const QRectF r(x0, top, std::max(x1 - x0, 1.0), h);
    QColor fill = palette::kernelColor(classifyKernel(a.kind, a.name));
    if (box.isCluster()) {
      // Density cue: more records per pixel, more opaque; hatched so a cluster is
      // never mistaken for one long kernel.
      const double density = box.count / std::max(box.x1 - box.x0, 1.0);
      fill.setAlpha(static_cast<int>(std::clamp(110 + 35 * std::log2(1 + density), 110.0, 255.0)));
      p.fillRect(r, fill.darker(115));
      if (r.width() >= 6) p.fillRect(r, QBrush(QColor(0, 0, 0, 60), Qt::BDiagPattern));
      if (highlighting) p.fillRect(r, QColor(0x1d, 0x1f, 0x24, 150));
      if (r.width() > fm.horizontalAdvance(QStringLiteral("×00000")) + 6) {
        p.setPen(palette::textOn(fill));
        p.drawText(r, Qt::AlignCenter, QStringLiteral("×%1").arg(box.count));
      }
      continue;
    }
    const bool match = highlighting && a.name == ctx.highlightedKernel;
    if (highlighting && !match) fill.setAlpha(90);
    p.fillRect(r, fill);
    // A dark seam keeps back-to-back kernels apart once they are wide enough.
    if (r.width() >= 4) p.fillRect(QRectF(r.left(), r.top(), 1, r.height()), QColor(0, 0, 0, 110));
    if (match) {
      p.setPen(QPen(QColor(255, 255, 255), 1.5));
      p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
    }
    const uint32_t index = lane_.series.indices[box.first];
    if ((ctx.focusedActivity && index == *ctx.focusedActivity) ||
        (ctx.selectedActivity && index == *ctx.selectedActivity))
      focusRect = r;
    if (r.width() > 30) {
      p.setPen(highlighting && !match ? palette::kSubtleText : palette::textOn(fill));
      const QRectF textRect = r.adjusted(4, 0, -3, 0).intersected(QRectF(area));
      p.drawText(textRect, Qt::AlignVCenter | Qt::AlignLeft,
                 fm.elidedText(QString::fromStdString(a.name), Qt::ElideRight,
                               static_cast<int>(textRect.width())));
    }
  }
  if (focusRect) {
    p.setPen(QPen(palette::kFocus, 2.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(focusRect->adjusted(-2, -2, 2, 2));
  }
}

std::optional<TimelineHit> ActivityLaneItem::hitTest(double x, double y,
                                                     const TimelinePaintContext& ctx) const {
  const std::optional<size_t> k = recordAt(lane_.series, *ctx.timeline, x, 3.0);
  if (!k || y < 0 || y >= height_) return std::nullopt;
  const uint32_t index = lane_.series.indices[*k];
  return TimelineHit{activityTooltip(*ctx.document, index), index};
}

}  // namespace tunescope::gui
