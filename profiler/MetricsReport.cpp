// Text tables of trace metrics for the terminal.
#include "profiler/MetricsReport.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

namespace tunescope::profiler {

namespace {

// Display width in a terminal: counts UTF-8 code points, not bytes, so a multi-byte
// name does not misalign its row.
size_t display_width(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string ellipsize(const std::string& text, size_t max_width) {
  if (max_width < 4 || display_width(text) <= max_width) return text;
  const size_t keep = max_width - 3;
  size_t bytes = 0;
  for (size_t points = 0; bytes < text.size(); ++bytes) {
    if ((static_cast<unsigned char>(text[bytes]) & 0xC0) != 0x80 && points++ == keep) break;
  }
  return text.substr(0, bytes) + "...";
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string ms(int64_t ns) { return fixed(static_cast<double>(ns) / 1e6, 3); }
std::string us(double ns) { return fixed(ns / 1e3, 2); }
std::string pct(double fraction) { return fixed(100.0 * fraction, 1); }

class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string header;
    Align align;
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void add_row(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
  }

  // A header, a rule, then the rows; columns separated by two spaces.
  std::string render(std::string_view indent = "  ") const {
    std::vector<size_t> widths(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
      widths[c] = display_width(columns_[c].header);
      for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
    }
    std::string out;
    std::vector<std::string> header;
    for (const auto& column : columns_) header.push_back(column.header);
    render_row(out, indent, header, widths);
    size_t rule = 0;
    for (size_t w : widths) rule += w;
    rule += 2 * (widths.empty() ? 0 : widths.size() - 1);
    out.append(indent).append(rule, '-').append("\n");
    for (const auto& row : rows_) render_row(out, indent, row, widths);
    return out;
  }

 private:
  void render_row(std::string& out, std::string_view indent, const std::vector<std::string>& cells,
                  const std::vector<size_t>& widths) const {
    std::string line(indent);
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line.append(2, ' ');
      const size_t pad = widths[c] - display_width(cells[c]);
      if (columns_[c].align == Align::right) line.append(pad, ' ');
      line.append(cells[c]);
      if (columns_[c].align == Align::left) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.append(line).append("\n");
  }

  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

using Align = TextTable::Align;

}  // namespace

std::string format_kernel_table(const std::vector<KernelStats>& rows, size_t max_name_width) {
  const bool mixed_kinds = std::any_of(
      rows.begin(), rows.end(), [&](const KernelStats& r) { return r.kind != rows.front().kind; });
  std::vector<TextTable::Column> columns{{"name", Align::left}};
  if (mixed_kinds) columns.push_back({"kind", Align::left});
  for (const char* header : {"calls", "total ms", "mean us", "share %"})
    columns.push_back({header, Align::right});

  TextTable table(std::move(columns));
  for (const KernelStats& r : rows) {
    std::vector<std::string> cells{ellipsize(r.name, max_name_width)};
    if (mixed_kinds) cells.push_back(to_string(r.kind));
    cells.push_back(std::to_string(r.calls));
    cells.push_back(ms(r.total_ns));
    cells.push_back(us(r.mean_ns));
    cells.push_back(fixed(r.share_pct, 1));
    table.add_row(std::move(cells));
  }
  return table.render();
}

std::string format_lane_table(const std::vector<LaneStats>& lanes,
                              const std::vector<LaneGaps>& gaps) {
  std::map<LaneKey, const LaneGaps*> gaps_by_lane;
  for (const LaneGaps& g : gaps) gaps_by_lane[g.lane] = &g;
  const bool with_gaps = !gaps.empty();

  // A merged trace's lanes say their rank.
  const bool ranked =
      std::any_of(lanes.begin(), lanes.end(), [](const LaneStats& l) { return l.lane.rank != 0; });
  std::vector<TextTable::Column> columns;
  if (ranked) columns.push_back({"rank", Align::right});
  for (const char* header : {"device", "lane", "activities", "busy ms", "util %"})
    columns.push_back({header, Align::right});
  if (with_gaps)
    for (const char* header : {"gaps", "idle ms", "largest gap us"})
      columns.push_back({header, Align::right});

  TextTable table(std::move(columns));
  for (const LaneStats& lane : lanes) {
    std::vector<std::string> cells;
    if (ranked) cells.push_back(std::to_string(lane.lane.rank));
    for (std::string cell :
         {std::to_string(lane.lane.device), std::to_string(lane.lane.lane),
          std::to_string(lane.activities), ms(lane.busy_ns), pct(lane.utilisation)})
      cells.push_back(std::move(cell));
    if (with_gaps) {
      if (auto it = gaps_by_lane.find(lane.lane); it != gaps_by_lane.end()) {
        cells.push_back(std::to_string(it->second->count));
        cells.push_back(ms(it->second->total_ns));
        cells.push_back(us(static_cast<double>(it->second->largest_ns)));
      }
    }
    table.add_row(std::move(cells));
  }
  return table.render();
}

std::string format_device_time_table(const std::vector<RangeDeviceTime>& rows,
                                     size_t max_name_width) {
  TextTable table({{"layer", Align::left},
                   {"ranges", Align::right},
                   {"activities", Align::right},
                   {"device ms", Align::right},
                   {"share %", Align::right}});
  for (const RangeDeviceTime& r : rows)
    table.add_row({ellipsize(r.name, max_name_width), std::to_string(r.ranges),
                   std::to_string(r.activities), ms(r.device_ns), fixed(r.share_pct, 1)});
  return table.render();
}

std::string format_concurrency(const Concurrency& c) {
  return "concurrency: " + pct(c.concurrent_share) + "% of busy time with >= 2 in flight, mean " +
         fixed(c.mean_in_flight, 2) + " in flight, max " + std::to_string(c.max_in_flight) +
         " (busy " + ms(c.busy_ns) + " ms)\n";
}

std::string format_machine_peak(const std::optional<MachinePeak>& peak,
                                const std::string& why_not_measured) {
  if (!peak) return "machine peak: not measured (" + why_not_measured + ")\n";
  std::string out = "machine peak: " + fixed(peak->fma_gflops, 1) + " GFLOP/s fp32 FMA (" +
                    peak->isa + ", " + std::to_string(peak->threads) + " thread" +
                    (peak->threads == 1 ? "" : "s") + "), memory " + fixed(peak->bandwidth_gbs, 1) +
                    " GB/s, ridge " + fixed(ridge_intensity(*peak), 1) + " FLOP/B; measured " +
                    peak->measured_at;
  if (peak->theoretical_gflops > 0)
    out += "; theoretical " + fixed(peak->theoretical_gflops, 1) + " GFLOP/s (" +
           peak->theoretical_basis + ")";
  return out + "\n";
}

std::string format_conv_roofline(const std::vector<ConvPassRate>& rows,
                                 const std::optional<MachinePeak>& peak, size_t max_name_width) {
  const double ridge = peak ? ridge_intensity(*peak) : 0;
  std::vector<TextTable::Column> columns{
      {"layer", Align::left}, {"algorithm", Align::left}, {"pass", Align::left}};
  for (const char* header : {"calls", "mean ms", "GFLOP/s"})
    columns.push_back({header, Align::right});
  if (peak) columns.push_back({"% peak", Align::right});
  columns.push_back({"FLOP/B", Align::right});
  if (peak) columns.push_back({"bound", Align::left});
  TextTable table(std::move(columns));
  for (const ConvPassRate& r : rows) {
    std::vector<std::string> cells{ellipsize(r.layer, max_name_width),
                                   r.algorithm,
                                   r.pass,
                                   std::to_string(r.calls),
                                   ms(r.calls ? r.total_ns / static_cast<int64_t>(r.calls) : 0),
                                   fixed(r.gflops, 1)};
    if (peak)
      cells.push_back(peak->fma_gflops > 0 ? fixed(100.0 * r.gflops / peak->fma_gflops, 1) : "-");
    cells.push_back(r.intensity > 0 ? fixed(r.intensity, 1) : "-");
    if (peak)
      cells.push_back(r.intensity > 0 && ridge > 0 ? (r.intensity >= ridge ? "compute" : "memory")
                                                   : "-");
    table.add_row(std::move(cells));
  }
  return table.render();
}

std::string format_rank_clocks(const std::vector<RankClock>& clocks) {
  if (clocks.empty()) return {};
  std::string out = "clocks aligned to rank " + std::to_string(clocks.front().rank) +
                    " (offset: the rank's clock minus rank 0's, measured):\n";
  for (const RankClock& c : clocks) {
    out += "  rank " + std::to_string(c.rank) + ": ";
    if (c.offset_ns)
      out += std::string(*c.offset_ns >= 0 ? "+" : "-") +
             us(static_cast<double>(*c.offset_ns >= 0 ? *c.offset_ns : -*c.offset_ns)) + " us";
    else
      out += "offset not measured";
    if (c.uncertainty_ns) out += " +/- " + us(static_cast<double>(*c.uncertainty_ns)) + " us";
    if (!c.source.empty()) out += "  (" + c.source + ")";
    out += "\n";
  }
  return out;
}

std::string format_rank_balance(const RankBalance& balance) {
  std::string out;
  if (balance.ranks.size() > 1) {
    TextTable table({{"rank", Align::right},
                     {"activities", Align::right},
                     {"busy ms", Align::right},
                     {"compute ms", Align::right},
                     {"comm ms", Align::right},
                     {"hidden %", Align::right}});
    for (const RankStats& r : balance.ranks)
      table.add_row({std::to_string(r.rank), std::to_string(r.activities), ms(r.busy_ns),
                     ms(r.compute_ns), ms(r.communication_ns),
                     r.communication_ns > 0 ? pct(r.hidden_share) : "-"});
    out += table.render();
    const RankStats& fastest =
        *std::find_if(balance.ranks.begin(), balance.ranks.end(),
                      [&](const RankStats& r) { return r.rank == balance.fastest; });
    if (balance.straggler_excess_ns == 0)
      out += "straggler: none (every rank computed " + ms(fastest.compute_ns) + " ms)\n";
    else
      out += "straggler: rank " + std::to_string(balance.straggler) + ", " +
             ms(balance.straggler_excess_ns) + " ms" +
             (fastest.compute_ns > 0 ? " (" + fixed(balance.straggler_excess_pct, 1) + "%)" : "") +
             " more compute than rank " + std::to_string(balance.fastest) + "\n";
  }
  if (balance.communication_ns > 0)
    out += "communication: " + ms(balance.communication_ns) + " ms, " + pct(balance.hidden_share) +
           "% hidden behind compute on the same rank\n";
  return out;
}

std::string format_summary(const TraceSummary& summary, size_t max_name_width) {
  std::string out = "trace: " + std::to_string(summary.activities) + " activities, " +
                    std::to_string(summary.ranges) + " ranges over " +
                    ms(summary.span.duration_ns()) + " ms\n";
  std::string kinds;
  for (size_t k = 0; k < kActivityKindCount; ++k) {
    if (summary.time_by_kind_ns[k] == 0) continue;
    if (!kinds.empty()) kinds += ", ";
    kinds.append(to_string(static_cast<ActivityKind>(k)))
        .append(" ")
        .append(ms(summary.time_by_kind_ns[k]))
        .append(" ms");
  }
  if (!kinds.empty()) out.append("time by kind: ").append(kinds).append("\n");
  if (!summary.device_tracer_error.empty())
    out.append("device tracer ")
        .append(summary.device_tracer)
        .append(" did not start: ")
        .append(summary.device_tracer_error)
        .append(" (host records only)\n");
  else if (!summary.device_tracer.empty())
    out.append("device tracer: ")
        .append(summary.device_tracer)
        .append(", ")
        .append(summary.dropped_records.empty() ? "0" : summary.dropped_records)
        .append(" records dropped\n");

  const bool kernels_only =
      std::all_of(summary.kernels.begin(), summary.kernels.end(),
                  [](const KernelStats& k) { return k.kind == ActivityKind::kernel; });
  // With a running device tracer the table holds what the device ran (CUPTI's kernels).
  const bool device = !summary.device_tracer.empty() && summary.device_tracer_error.empty();
  out += device ? "\ndevice " : "\n";
  out += kernels_only ? "kernels" : "activities";
  if (summary.kernels.size() < summary.kernel_rows)
    out += " (top " + std::to_string(summary.kernels.size()) + " of " +
           std::to_string(summary.kernel_rows) + ")";
  out.append(":\n").append(format_kernel_table(summary.kernels, max_name_width));
  if (!summary.device_time_by_layer.empty())
    out.append("\ndevice time by layer:\n")
        .append(format_device_time_table(summary.device_time_by_layer, max_name_width));
  out.append("\nlanes:\n").append(format_lane_table(summary.lanes, summary.gaps));
  out.append("\n").append(format_concurrency(summary.concurrency));
  if (summary.ranks.ranks.size() > 1 || summary.ranks.communication_ns > 0 ||
      !summary.rank_clocks.empty()) {
    out.append("\nranks:\n").append(format_rank_clocks(summary.rank_clocks));
    out.append(format_rank_balance(summary.ranks));
  }
  return out;
}

}  // namespace tunescope::profiler
