// Row background and header of every timeline item.
#include "widgets/TimelineItem.h"

#include "widgets/KernelPalette.h"

namespace tunescope::gui {

namespace {
constexpr int kLabelLineHeight = 18;
}

HeaderLabel TimelineItem::headerLabel(const QRect& header, const QFontMetrics& fm) const {
  HeaderLabel out;
  out.rect =
      QRect(header.left() + indent(), header.top() + 1, std::max(header.width() - indent() - 6, 0),
            std::min(header.height() - 2, kLabelLineHeight));
  out.full = label();
  out.shown = fm.elidedText(out.full, Qt::ElideMiddle, out.rect.width());
  return out;
}

void TimelineItem::drawBackground(QPainter& p, const QRect& header, const QRect& area,
                                  bool alternate) const {
  p.fillRect(area, alternate ? palette::kLaneAlternate : palette::kCanvas);
  p.fillRect(header, palette::kHeader);
  p.setPen(palette::kGrid);
  p.drawLine(header.left(), header.bottom(), area.right(), header.bottom());
  const HeaderLabel line = headerLabel(header, p.fontMetrics());
  p.setPen(palette::kHeaderText);
  p.drawText(line.rect, Qt::AlignVCenter | Qt::AlignLeft, line.shown);
  const QString sub = subLabel();
  if (sub.isEmpty() || header.height() < 2 * kLabelLineHeight) return;
  const QFont f = p.font();
  QFont small = f;
  small.setPointSizeF(f.pointSizeF() * 0.85);
  p.setFont(small);
  p.setPen(palette::kSubtleText);
  const QRect subRect(line.rect.left(), line.rect.bottom() + 1, line.rect.width(),
                      kLabelLineHeight - 2);
  p.drawText(subRect, Qt::AlignTop | Qt::AlignLeft,
             p.fontMetrics().elidedText(sub, Qt::ElideMiddle, subRect.width()));
  p.setFont(f);
}

}  // namespace tunescope::gui
