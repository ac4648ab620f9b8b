// The ranked-table printer shared by `tune` and `report`.
#include "cli/RankingTable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/Error.h"

namespace tunescope::cli {

namespace {

std::string stop_text(tuner::StopRule stop) {
  switch (stop) {
    case tuner::StopRule::none: return "";
    case tuner::StopRule::converged: return ", converged";
    case tuner::StopRule::max_steps: return ", --max-steps reached";
    case tuner::StopRule::time_cap: return ", --max-timing-seconds reached";
    case tuner::StopRule::raced_out: return ", raced out (slower than the leader with confidence)";
    case tuner::StopRule::brief: return ", eliminated in a brief halving round";
    case tuner::StopRule::interleaved: return ", interleaved rounds";
  }
  return "";
}

// Why a row ranks above a row that measured faster (the one rule: rank_ok_trials).
std::string above_faster_reason(bool winner_by_tie, tuner::RankTier tier) {
  // The paired rounds decide, not the medians: the tie rule, or a member the paired test
  // finds faster than the one with the lowest median (rounds_verdict: by the trimmed mean
  // paired log ratios).
  if (winner_by_tie)
    return "the winner of the paired rounds by the tie rule or the paired test (see the "
           "decision)";
  switch (tier) {
    case tuner::RankTier::remeasured:
      return "measured in the final interleaved rounds, which the faster rows below did not "
             "reach (each lost to the leader measured beside it then: see its note)";
    case tuner::RankTier::full: return "fully measured, the faster rows below were cut short";
    case tuner::RankTier::cut_short: return "timed for more steps";
  }
  return "";
}

std::string trial_note(const tuner::TrialResult& trial, const std::string& above_faster) {
  const std::string from_db = trial.reused ? "from the results DB; " : "";
  if (trial.status != tuner::TrialStatus::ok) return from_db + trial.reason;
  std::string note = from_db;
  if (trial.figures.stop == tuner::StopRule::interleaved)
    note += cat("re-measured in ", trial.figures.steps, " interleaved rounds; ");
  else if (trial.figures.stop == tuner::StopRule::raced_out && !trial.reason.empty())
    note += cat(trial.figures.steps, " steps, ", trial.reason, "; ");  // what it was compared on
  else
    note += cat(trial.remeasured ? "re-measured interleaved; " : "", trial.figures.steps, " steps",
                stop_text(trial.figures.stop), "; ");
  if (!above_faster.empty()) note += cat("ranked above faster rows: ", above_faster, "; ");
  if (!trial.kernels.empty())
    note += cat("top kernel ", trial.kernels.front().name, " ",
                std::lround(trial.kernels.front().share_pct), "%");
  return note;
}

// "412.3 [405.1, 419.0]": the median's ex/s and its 95% interval, when it has one.
std::string rate_cell(const tuner::TimingFigures& f) {
  char text[96];
  if (f.has_interval())
    std::snprintf(text, sizeof text, "%.1f [%.1f, %.1f]", f.median_eps, f.eps_low, f.eps_high);
  else
    std::snprintf(text, sizeof text, "%.1f", f.median_eps);
  return text;
}

// "37% / 1.42": the share of busy time with >= 2 kernels in flight / the mean in flight.
std::string concurrency_cell(const tuner::TrialResult& trial) {
  if (trial.status != tuner::TrialStatus::ok || !trial.concurrency) return "-";
  return cat(std::lround(trial.concurrency->concurrent_share * 100), "% / ",
             std::lround(trial.concurrency->mean_in_flight * 100) / 100.0);
}

}  // namespace

void print_ranking(const tuner::TuneReport& report) {
  std::vector<const tuner::TrialResult*> rows;
  for (size_t i : report.ranking) rows.push_back(&report.trials[i]);
  const std::vector<tuner::RankTier> tiers = tuner::rank_tiers(report.trials);
  // Why each ok row ranks above a row that measured faster, if it does.
  std::vector<std::string> above_faster(rows.size());
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t q = r + 1; q < rows.size(); ++q)
      if (rows[q]->figures.median_eps > rows[r]->figures.median_eps) {
        const size_t i = report.ranking[r], j = report.ranking[q];
        above_faster[r] =
            above_faster_reason(rows[r] == report.best_trial() && tiers[i] == tiers[j], tiers[i]);
        break;
      }
  for (tuner::TrialStatus status : {tuner::TrialStatus::invalid, tuner::TrialStatus::failed,
                                    tuner::TrialStatus::skipped, tuner::TrialStatus::pruned})
    for (const auto& t : report.trials)
      if (t.status == status) rows.push_back(&t);
  above_faster.resize(rows.size());
  const double base = report.baseline_trial() ? report.baseline_trial()->figures.median_eps : 0;
  std::printf(
      "\n| # | config | status | median ex/s [95%% CI] | spread | vs baseline | concurrency | note "
      "|\n");
  std::printf(
      "|---|--------|--------|---------------------:|-------:|------------:|------------:|------|"
      "\n");
  int rank = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto* t = rows[r];
    const bool ok = t->status == tuner::TrialStatus::ok;
    const std::string mark = t == report.best_trial()       ? " (best)"
                             : t == report.baseline_trial() ? " (baseline)"
                                                            : "";
    std::printf(
        "| %d | %s%s | %s | %s | %s | %s | %s | %s |\n", ++rank, t->config.label().c_str(),
        mark.c_str(), to_string(t->status).c_str(), ok ? rate_cell(t->figures).c_str() : "-",
        ok ? cat(std::lround(t->figures.spread * 1000) / 10.0, "%").c_str() : "-",
        ok && base > 0 ? cat(std::lround(t->figures.median_eps / base * 100) / 100.0, "x").c_str()
                       : "-",
        concurrency_cell(*t).c_str(), trial_note(*t, above_faster[r]).c_str());
  }
}

}  // namespace tunescope::cli
