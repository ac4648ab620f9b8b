// Painting and hit-testing of the Candidates bar chart.
#include "widgets/CandidatesChart.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <utility>

#include "models/CandidatesModel.h"

namespace tunescope::gui {

namespace {
constexpr int kTitleHeight = 30;
constexpr int kAxisHeight = 26;
constexpr int kMargin = 12;
constexpr int kMaxRowHeight = 26;
constexpr int kValueWidth = 150;  // room right of the longest bar for "12,345 ex/s · 1.23×"

const QColor kBest(0x2e, 0x9d, 0x5b);
const QColor kBaseline(0x8c, 0x96, 0xa3);
const QColor kOther(0x4a, 0x7f, 0xc1);
const QColor kBad(0xc0, 0x39, 0x2b);

// The whisker spans the step-time spread ((p90 - p10) / median) mapped to throughput to
// first order: median ex/s x (1 -/+ spread / 2).
std::pair<double, double> whisker(const CandidateRow& r) {
  return {std::max(0.0, r.medianEps * (1 - r.spread / 2)), r.medianEps * (1 + r.spread / 2)};
}

// A 1/2/5 x 10^k step giving about `ticks` intervals over [0, max].
double niceStep(double max, int ticks) {
  const double raw = max / std::max(ticks, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}
}  // namespace

CandidatesChart::CandidatesChart(QWidget* parent) : QWidget(parent) {
  setMouseTracking(false);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void CandidatesChart::setModel(const CandidatesModel* model) {
  model_ = model;
  current_ = -1;
  auto refresh = [this] { update(); };
  connect(model, &QAbstractItemModel::modelReset, this, [this] {
    current_ = -1;
    update();
  });
  connect(model, &QAbstractItemModel::dataChanged, this, refresh);
  update();
}

void CandidatesChart::setCurrentRow(int row) {
  if (row == current_) return;
  current_ = row;
  update();
}

CandidatesChart::Layout CandidatesChart::layout() const {
  Layout l;
  const int n = model_ ? model_->rowCount() : 0;
  l.top = kTitleHeight;
  const int available = height() - kTitleHeight - kAxisHeight - kMargin;
  l.rowHeight = n > 0 ? std::clamp(available / n, 14, kMaxRowHeight) : kMaxRowHeight;
  int longest = 0;
  QFont bold = font();
  bold.setBold(true);  // the best row's label is bold: measure with the wider font
  const QFontMetrics fm(bold);
  if (model_)
    for (const CandidateRow& r : model_->rows())
      longest = std::max(longest, fm.horizontalAdvance(r.label));
  l.labelWidth = std::min(longest + 2 * kMargin, width() * 2 / 5);
  l.plotLeft = l.labelWidth + kMargin;
  l.plotRight = std::max(l.plotLeft + 40, width() - kValueWidth - kMargin);
  l.axisY = l.top + n * l.rowHeight + 4;
  if (model_)
    for (const CandidateRow& r : model_->rows())
      if (r.ok()) l.maxEps = std::max(l.maxEps, whisker(r).second);
  l.maxEps *= 1.04;
  return l;
}

int CandidatesChart::preferredHeight() const {
  return kTitleHeight + (model_ ? model_->rowCount() : 0) * kMaxRowHeight + kAxisHeight + kMargin +
         4;
}

int CandidatesChart::rowAt(int y) const {
  if (!model_) return -1;
  const Layout l = layout();
  if (y < l.top) return -1;
  const int row = (y - l.top) / l.rowHeight;
  return row < model_->rowCount() ? row : -1;
}

void CandidatesChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setRenderHint(QPainter::Antialiasing);
  const QColor text = palette().color(QPalette::Text);
  QColor muted = text;
  muted.setAlpha(140);
  if (!model_ || model_->rowCount() == 0) {
    p.setPen(muted);
    p.drawText(rect(), Qt::AlignCenter,
               tr("Open a tunescope results DB (File → Open) to see its candidates"));
    return;
  }
  const Layout l = layout();
  const auto x = [&](double eps) {
    return l.plotLeft + eps / l.maxEps * (l.plotRight - l.plotLeft);
  };

  QFont titleFont = font();
  titleFont.setBold(true);
  p.setFont(titleFont);
  p.setPen(text);
  p.drawText(QRect(kMargin, 0, width() - 2 * kMargin, kTitleHeight),
             Qt::AlignVCenter | Qt::AlignLeft, tr("Median examples/s per config"));
  p.setFont(font());
  {
    // Legend, right-aligned: a swatch before each word, then the whisker note.
    const QFontMetrics fm(font());
    const std::pair<QColor, QString> items[] = {
        {kBest, tr("best")}, {kBaseline, tr("baseline")}, {kOther, tr("other")}};
    const QString note = tr("whiskers: step-time spread p10–p90");
    int w = fm.horizontalAdvance(note);
    for (const auto& [colour, word] : items) w += 14 + fm.horizontalAdvance(word) + 14;
    int pos = width() - kMargin - w;
    for (const auto& [colour, word] : items) {
      p.fillRect(QRect(pos, kTitleHeight / 2 - 5, 10, 10), colour);
      pos += 14;
      p.setPen(text);
      p.drawText(QRect(pos, 0, 200, kTitleHeight), Qt::AlignVCenter | Qt::AlignLeft, word);
      pos += fm.horizontalAdvance(word) + 14;
    }
    p.setPen(muted);
    p.drawText(QRect(pos, 0, 400, kTitleHeight), Qt::AlignVCenter | Qt::AlignLeft, note);
  }

  // Grid and axis.
  const double step = niceStep(l.maxEps, std::max(2, (l.plotRight - l.plotLeft) / 110));
  p.setPen(QPen(QColor(0, 0, 0, 28), 1));
  for (double v = 0; v <= l.maxEps; v += step)
    p.drawLine(QPointF(x(v), l.top), QPointF(x(v), l.axisY));
  p.setPen(QPen(muted, 1));
  p.drawLine(QPointF(l.plotLeft, l.axisY), QPointF(l.plotRight, l.axisY));
  for (double v = 0; v <= l.maxEps; v += step) {
    p.drawLine(QPointF(x(v), l.axisY), QPointF(x(v), l.axisY + 4));
    p.drawText(QRectF(x(v) - 50, l.axisY + 4, 100, kAxisHeight - 6),
               Qt::AlignHCenter | Qt::AlignTop,
               QStringLiteral("%L1").arg(v, 0, 'f', step < 1 ? 1 : 0));
  }
  p.drawText(QRectF(l.plotRight + 6, l.axisY + 4, kValueWidth, kAxisHeight - 6),
             Qt::AlignLeft | Qt::AlignTop, tr("ex/s"));

  const QFontMetrics fm(font());
  const double baseEps =
      model_->baselineRow() && model_->baselineRow()->ok() ? model_->baselineRow()->medianEps : 0;
  for (int i = 0; i < model_->rowCount(); ++i) {
    const CandidateRow& r = model_->rows()[static_cast<size_t>(i)];
    const QRect band(0, l.top + i * l.rowHeight, width(), l.rowHeight);
    if (i == current_)
      p.fillRect(band, palette().color(QPalette::Highlight).lighter(175));
    else if (i % 2)
      p.fillRect(band, QColor(0, 0, 0, 8));
    p.setPen(r.ok() ? text : muted);
    QFont labelFont = font();
    labelFont.setBold(r.best);
    p.setFont(labelFont);
    p.drawText(
        QRect(kMargin, band.top(), l.labelWidth - kMargin, band.height()),
        Qt::AlignVCenter | Qt::AlignRight,
        QFontMetrics(labelFont).elidedText(r.label, Qt::ElideMiddle, l.labelWidth - kMargin));
    p.setFont(font());
    const int barH = std::max(6, l.rowHeight * 3 / 5);
    const double cy = band.center().y() + 0.5;
    if (!r.ok()) {
      p.setPen(r.status == QLatin1String("skipped") ? muted : kBad);
      p.drawText(QRect(l.plotLeft + 4, band.top(), width() - l.plotLeft - kMargin, band.height()),
                 Qt::AlignVCenter | Qt::AlignLeft,
                 fm.elidedText(QStringLiteral("%1: %2").arg(r.status, r.reason), Qt::ElideRight,
                               width() - l.plotLeft - kMargin - 4));
      continue;
    }
    const QColor colour = r.best ? kBest : r.baseline ? kBaseline : kOther;
    const QRectF bar(l.plotLeft, cy - barH / 2.0, x(r.medianEps) - l.plotLeft, barH);
    QPainterPath path;
    path.addRoundedRect(bar, 2, 2);
    p.fillPath(path, i == current_ ? colour.darker(115) : colour);
    const auto [lo, hi] = whisker(r);
    p.setPen(QPen(QColor(0x33, 0x33, 0x33), 1.3));
    p.drawLine(QPointF(x(lo), cy), QPointF(x(hi), cy));
    p.drawLine(QPointF(x(lo), cy - barH / 3.0), QPointF(x(lo), cy + barH / 3.0));
    p.drawLine(QPointF(x(hi), cy - barH / 3.0), QPointF(x(hi), cy + barH / 3.0));
    QString value = QStringLiteral("%L1").arg(r.medianEps, 0, 'f', 0);
    if (baseEps > 0) value += QStringLiteral("  ·  %1×").arg(r.medianEps / baseEps, 0, 'f', 2);
    p.setPen(text);
    p.drawText(QRectF(x(hi) + 6, band.top(), kValueWidth + 200, band.height()),
               Qt::AlignVCenter | Qt::AlignLeft, value);
  }
  if (baseEps > 0) {
    // The yardstick: everything right of this line beats the baseline.
    p.setPen(QPen(QColor(0x55, 0x55, 0x55), 1, Qt::DashLine));
    p.drawLine(QPointF(x(baseEps), l.top - 2), QPointF(x(baseEps), l.axisY));
  }
}

void CandidatesChart::mousePressEvent(QMouseEvent* event) {
  const int row = rowAt(qRound(event->position().y()));
  if (row < 0) return;
  setCurrentRow(row);
  emit rowClicked(row);
}

void CandidatesChart::mouseDoubleClickEvent(QMouseEvent* event) {
  const int row = rowAt(qRound(event->position().y()));
  if (row >= 0) emit rowActivated(row);
}

}  // namespace tunescope::gui
