// Row background and header of every timeline item.
#include "widgets/TimelineItem.h"

#include "widgets/KernelPalette.h"

namespace tunescope::gui {

void TimelineItem::drawBackground(QPainter& p, const QRect& header, const QRect& area, bool alternate) const {
  p.fillRect(area, alternate ? palette::kLaneAlternate : palette::kCanvas);
  p.fillRect(header, palette::kHeader);
  p.setPen(palette::kGrid);
  p.drawLine(header.left(), header.bottom(), area.right(), header.bottom());
  const QRect text = header.adjusted(10, 0, -6, 0);
  QFont f = p.font();
  const QString sub = subLabel();
  if (sub.isEmpty()) {
    p.setPen(palette::kHeaderText);
    p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, label());
    return;
  }
  p.setPen(palette::kHeaderText);
  p.drawText(text.adjusted(0, 0, 0, -text.height() / 2 + 1), Qt::AlignBottom | Qt::AlignLeft, label());
  QFont small = f;
  small.setPointSizeF(f.pointSizeF() * 0.85);
  p.setFont(small);
  p.setPen(palette::kSubtleText);
  p.drawText(text.adjusted(0, text.height() / 2 + 1, 0, 0), Qt::AlignTop | Qt::AlignLeft, sub);
  p.setFont(f);
}

}  // namespace tunescope::gui
