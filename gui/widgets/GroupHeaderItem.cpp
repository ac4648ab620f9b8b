// Painting of a track group's header row.
#include "widgets/GroupHeaderItem.h"

#include "widgets/KernelPalette.h"

namespace tunescope::gui {

QString GroupHeaderItem::label() const {
  const auto n = group_.tracks.size();
  return QStringLiteral("%1 %2 · %3 track%4")
      .arg(collapsed_ ? QStringLiteral("▸") : QStringLiteral("▾"), group_.label)
      .arg(n)
      .arg(n == 1 ? "" : "s");
}

void GroupHeaderItem::drawBackground(QPainter& p, const QRect& header, const QRect& area,
                                     bool) const {
  // One band across both columns, so a group reads as a section heading.
  p.fillRect(header.united(area), palette::kRuler);
  p.setPen(palette::kGrid);
  p.drawLine(header.left(), header.bottom(), area.right(), header.bottom());
  const HeaderLabel line = headerLabel(header, p.fontMetrics());
  p.setPen(palette::kHeaderText);
  p.drawText(line.rect, Qt::AlignVCenter | Qt::AlignLeft, line.shown);
}

}  // namespace tunescope::gui
