// Terminal rendering of trace metrics as aligned text tables, used by `tunescope
// profile`. Column widths follow the content; nothing here computes a metric.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "profiler/Metrics.h"
#include "profiler/Roofline.h"

namespace tunescope::profiler {

// Longer kernel names are cut with "..." so one templated name cannot push the
// numbers off the screen.
constexpr size_t kDefaultMaxNameWidth = 60;

// Columns: name, calls, total ms, mean us, share % (and kind, when rows mix kinds).
std::string format_kernel_table(const std::vector<KernelStats>& rows,
                                size_t max_name_width = kDefaultMaxNameWidth);

// Columns: device, lane, activities, busy ms, util %; with gaps (rows matched by lane)
// also gaps, idle ms, largest gap us.
std::string format_lane_table(const std::vector<LaneStats>& lanes,
                              const std::vector<LaneGaps>& gaps = {});

// One line: share of busy time with >= 2 in flight, mean and max in flight.
std::string format_concurrency(const Concurrency& concurrency);

// Columns: layer (range name), ranges, activities, device ms, share %.
std::string format_device_time_table(const std::vector<RangeDeviceTime>& rows,
                                     size_t max_name_width = kDefaultMaxNameWidth);

// A merged trace's clock alignment: each rank's measured offset from rank 0 and its
// uncertainty (empty text for a trace of one process).
std::string format_rank_clocks(const std::vector<RankClock>& clocks);

// Per-rank table (busy, compute, communication, hidden share) and the straggler when
// there are several ranks; the communication line when there is communication.
std::string format_rank_balance(const RankBalance& balance);

// The whole report: span and time per kind, the device tracer's state (dropped records,
// or why it did not start), kernel table, device time by layer, lane table, concurrency,
// and for merged traces (or communication) the ranks: clocks, balance, hidden share.
std::string format_summary(const TraceSummary& summary,
                           size_t max_name_width = kDefaultMaxNameWidth);

// The machine line of a report header: the measured FMA peak and memory bandwidth and
// where the roofline bends, or "not measured (<why>)" when `peak` is empty.
std::string format_machine_peak(const std::optional<MachinePeak>& peak,
                                const std::string& why_not_measured);

// Columns: layer, algorithm, pass, calls, mean ms, GFLOP/s; with a peak also % of peak;
// where the intensity is known FLOP/B and, with a peak, the bound (compute or memory:
// which roof is lower at that intensity).
std::string format_conv_roofline(const std::vector<ConvPassRate>& rows,
                                 const std::optional<MachinePeak>& peak,
                                 size_t max_name_width = kDefaultMaxNameWidth);

}  // namespace tunescope::profiler
