// Selection statistics through profiler::summarize; the GUI never recomputes metrics.
#include "models/SelectionStats.h"

#include <algorithm>

#include "models/TimeFormat.h"

namespace tunescope::gui {

SelectionStats computeSelectionStats(const profiler::Trace& trace, profiler::Interval window) {
  if (window.end_ns < window.start_ns) std::swap(window.start_ns, window.end_ns);
  profiler::SummaryOptions options;
  options.scope.window = window;
  return {window, profiler::summarize(trace, options)};
}

QString selectionStatsHtml(const SelectionStats& stats, int64_t originNs, const QString& title,
                           size_t topKernels) {
  const profiler::TraceSummary& s = stats.summary;
  QString html;
  html +=
      QStringLiteral("<h3>%1</h3><table cellspacing=0 cellpadding=2>").arg(title.toHtmlEscaped());
  auto row = [&](const QString& k, const QString& v) {
    html += QStringLiteral(
                "<tr><td>%1</td><td align=right style=\"padding-left:10px\"><b>%2</b></td></tr>")
                .arg(k, v);
  };
  row(QStringLiteral("from"),
      formatDuration(static_cast<double>(stats.window.start_ns - originNs)));
  row(QStringLiteral("to"), formatDuration(static_cast<double>(stats.window.end_ns - originNs)));
  row(QStringLiteral("duration"), formatDuration(static_cast<double>(stats.window.duration_ns())));
  row(QStringLiteral("activities"), QString::number(s.activities));
  row(QStringLiteral("busy (any lane)"),
      formatDuration(static_cast<double>(s.concurrency.busy_ns)));
  row(QStringLiteral("concurrency"),
      QStringLiteral("%1 %").arg(100 * s.concurrency.concurrent_share, 0, 'f', 1));
  row(QStringLiteral("mean in flight"), QString::number(s.concurrency.mean_in_flight, 'f', 2));
  html += QStringLiteral("</table><h4>Busy per lane</h4><table cellspacing=0 cellpadding=2>");
  // A merged trace's lanes say their rank (lanes of rank 0 and 1 share device numbers).
  const bool ranked = std::any_of(s.lanes.begin(), s.lanes.end(),
                                  [](const profiler::LaneStats& l) { return l.lane.rank != 0; });
  for (const profiler::LaneStats& l : s.lanes)
    html +=
        QStringLiteral(
            "<tr><td>%1dev %2 · lane %3</td><td align=right style=\"padding-left:10px\">%4</td><td "
            "align=right style=\"padding-left:10px\">%5 %</td></tr>")
            .arg(ranked ? QStringLiteral("rank %1 · ").arg(l.lane.rank) : QString())
            .arg(l.lane.device)
            .arg(l.lane.lane)
            .arg(formatDuration(static_cast<double>(l.busy_ns)))
            .arg(100 * l.utilisation, 0, 'f', 1);
  html += QStringLiteral(
      "</table><h4>Kernels</h4><table cellspacing=0 cellpadding=2><tr><th align=left>name</th>"
      "<th>calls</th><th>total</th><th>share</th></tr>");
  const size_t n = std::min(topKernels, s.kernels.size());
  for (size_t i = 0; i < n; ++i) {
    const profiler::KernelStats& k = s.kernels[i];
    html += QStringLiteral(
                "<tr><td>%1</td><td align=right style=\"padding-left:10px\">%2</td><td align=right "
                "style=\"padding-left:10px\">%3</td><td align=right style=\"padding-left:10px\">%4 "
                "%</td></tr>")
                .arg(QString::fromStdString(k.name).toHtmlEscaped())
                .arg(k.calls)
                .arg(formatDuration(static_cast<double>(k.total_ns)))
                .arg(k.share_pct, 0, 'f', 1);
  }
  if (s.kernels.size() > n)
    html += QStringLiteral("<tr><td colspan=4>… %1 more</td></tr>").arg(s.kernels.size() - n);
  html += QStringLiteral("</table>");
  return html;
}

}  // namespace tunescope::gui
