// Statistics of a rubber-band selection: profiler::summarize over the selected window
// (the same numbers the CLI report gives for that window), plus its text rendering.
#pragma once

#include <QString>

#include "profiler/Metrics.h"
#include "profiler/Trace.h"

namespace tunescope::gui {

struct SelectionStats {
  profiler::Interval window;
  profiler::TraceSummary summary;
};

// The window is normalised (start <= end) before summarising.
SelectionStats computeSelectionStats(const profiler::Trace& trace, profiler::Interval window);
// Rich text for the side panel: duration, busy per lane, concurrency, top kernels.
QString selectionStatsHtml(const SelectionStats& stats, int64_t originNs, const QString& title,
                           size_t topKernels = 12);

}  // namespace tunescope::gui
