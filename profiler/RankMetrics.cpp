// Metrics across ranks: busy and compute time per rank, the straggler, and how much of
// the communication ran while the same rank computed.
#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>
#include <unordered_map>

#include "profiler/Metrics.h"

namespace tunescope::profiler {

namespace {

int64_t total_ns(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& i : merged) total += i.duration_ns();
  return total;
}

// Time in both unions (each sorted and disjoint).
int64_t overlap_ns(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t start = std::max(a[i].start_ns, b[j].start_ns);
    const int64_t end = std::min(a[i].end_ns, b[j].end_ns);
    if (start < end) total += end - start;
    if (a[i].end_ns < b[j].end_ns)
      ++i;
    else
      ++j;
  }
  return total;
}

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

bool is_communication(const std::string& name) {
  std::string lower(name.size(), '\0');
  std::transform(name.begin(), name.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto starts_with = [&](const char* prefix) { return lower.rfind(prefix, 0) == 0; };
  return starts_with("allreduce.") || starts_with("mpi_") || starts_with("mpi.") ||
         lower.find("nccl") != std::string::npos;
}

RankBalance rank_balance(const Trace& trace, const MetricsScope& scope) {
  // Unions built as the activities come (in start order), so no copy of them is kept.
  struct Parts {
    size_t activities = 0;
    IntervalUnion all, compute, communication;
  };
  std::map<int, Parts> by_rank;
  // A trace repeats few names many times: classify each distinct name once.
  std::unordered_map<Name, bool> communication_names;
  for (const Activity& a : trace.activities) {
    if (!scope.kinds.contains(a.kind)) continue;
    const std::optional<Interval> part = clip_interval(a.start_ns, a.end_ns, scope.window);
    if (!part) continue;
    Parts& parts = by_rank[a.rank];
    ++parts.activities;
    parts.all.add(*part);
    auto [known, added] = communication_names.try_emplace(a.name, false);
    if (added) known->second = is_communication(a.name);
    (known->second ? parts.communication : parts.compute).add(*part);
  }

  RankBalance balance;
  for (auto& [rank, parts] : by_rank) {
    RankStats row;
    row.rank = rank;
    row.activities = parts.activities;
    row.busy_ns = total_ns(parts.all.take());
    const std::vector<Interval> compute = parts.compute.take();
    const std::vector<Interval> communication = parts.communication.take();
    row.compute_ns = total_ns(compute);
    row.communication_ns = total_ns(communication);
    row.hidden_communication_ns = overlap_ns(compute, communication);
    row.hidden_share = share(row.hidden_communication_ns, row.communication_ns);
    balance.communication_ns += row.communication_ns;
    balance.hidden_communication_ns += row.hidden_communication_ns;
    balance.ranks.push_back(row);
  }
  balance.hidden_share = share(balance.hidden_communication_ns, balance.communication_ns);
  if (!balance.ranks.empty()) {
    const auto by_compute = [](const RankStats& a, const RankStats& b) {
      return a.compute_ns < b.compute_ns;
    };
    // Ties go to the lower rank, both ways.
    const auto slowest =
        std::max_element(balance.ranks.begin(), balance.ranks.end(),
                         [&](const RankStats& a, const RankStats& b) { return by_compute(a, b); });
    const auto fastest = std::min_element(balance.ranks.begin(), balance.ranks.end(), by_compute);
    balance.straggler = slowest->rank;
    balance.fastest = fastest->rank;
    balance.straggler_excess_ns = slowest->compute_ns - fastest->compute_ns;
    balance.straggler_excess_pct = 100.0 * share(balance.straggler_excess_ns, fastest->compute_ns);
  }
  return balance;
}

}  // namespace tunescope::profiler
