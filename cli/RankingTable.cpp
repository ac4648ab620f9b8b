// The ranked-table printer shared by `tune` and `report`.
#include "cli/RankingTable.h"

#include <algorithm>
#include <cstdio>

#include "core/base/Error.h"

namespace tunescope::cli {

namespace {

// `steps` is named when the ok trials were timed for different numbers of steps (a
// halving tune: how far each candidate raced).
std::string trial_note(const tuner::TrialResult& trial, bool name_steps) {
  const std::string from_db = trial.reused ? "from the results DB; " : "";
  if (trial.status != tuner::TrialStatus::ok) return from_db + trial.reason;
  std::string note = from_db + (trial.remeasured ? "re-measured interleaved; " : "");
  if (name_steps) note += cat(trial.figures.steps, " steps; ");
  if (!trial.kernels.empty())
    note += cat("top kernel ", trial.kernels.front().name, " ", static_cast<int>(trial.kernels.front().share_pct + 0.5), "%");
  return note;
}

// "37% / 1.42": the share of busy time with >= 2 kernels in flight / the mean in flight.
std::string concurrency_cell(const tuner::TrialResult& trial) {
  if (trial.status != tuner::TrialStatus::ok || !trial.concurrency) return "-";
  return cat(static_cast<int>(trial.concurrency->concurrent_share * 100 + 0.5), "% / ",
             static_cast<int>(trial.concurrency->mean_in_flight * 100 + 0.5) / 100.0);
}

}  // namespace

void print_ranking(const tuner::TuneReport& report) {
  std::vector<const tuner::TrialResult*> rows;
  for (size_t i : report.ranking) rows.push_back(&report.trials[i]);
  for (tuner::TrialStatus status : {tuner::TrialStatus::invalid, tuner::TrialStatus::failed, tuner::TrialStatus::skipped})
    for (const auto& t : report.trials)
      if (t.status == status) rows.push_back(&t);
  const bool name_steps = std::any_of(rows.begin(), rows.end(), [&](const tuner::TrialResult* t) {
    return t->status == tuner::TrialStatus::ok && t->figures.steps != rows.front()->figures.steps;
  });
  const double base = report.baseline_trial() ? report.baseline_trial()->figures.median_eps : 0;
  std::printf("\n| # | config | status | median ex/s | spread | vs baseline | concurrency | note |\n");
  std::printf("|---|--------|--------|------------:|-------:|------------:|------------:|------|\n");
  int rank = 0;
  for (const auto* t : rows) {
    const bool ok = t->status == tuner::TrialStatus::ok;
    const std::string mark = t == report.best_trial() ? " (best)" : t == report.baseline_trial() ? " (baseline)" : "";
    std::printf("| %d | %s%s | %s | %s | %s | %s | %s | %s |\n", ++rank, t->config.label().c_str(), mark.c_str(),
                to_string(t->status).c_str(), ok ? cat(static_cast<int64_t>(t->figures.median_eps + 0.5)).c_str() : "-",
                ok ? cat(static_cast<int>(t->figures.spread * 1000 + 0.5) / 10.0, "%").c_str() : "-",
                ok && base > 0 ? cat(static_cast<int>(t->figures.median_eps / base * 100 + 0.5) / 100.0, "x").c_str() : "-",
                concurrency_cell(*t).c_str(), trial_note(*t, name_steps).c_str());
  }
}

}  // namespace tunescope::cli
