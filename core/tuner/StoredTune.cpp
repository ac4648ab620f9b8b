// Rebuilding a tune's ranking and decision from its stored trials.
#include "core/tuner/StoredTune.h"

#include <map>
#include <string>

namespace tunescope::tuner {

namespace {

// The reason of both rows of an older build's interleaved pair.
constexpr const char* kLegacyPairReason = "interleaved re-measurement with ";

}  // namespace

bool from_final_rounds(const TrialRecord& row) {
  return row.reason.rfind(kRemeasureReason, 0) == 0;
}

bool is_remeasurement(const TrialRecord& row) {
  return from_final_rounds(row) && row.figures.stop != StopRule::raced_out;
}

bool later_row_replaces(const TrialRecord& later) {
  return later.status != TrialStatus::skipped && later.status != TrialStatus::pruned &&
         !(is_remeasurement(later) && later.status != TrialStatus::ok);
}

std::optional<size_t> stored_baseline(const std::vector<RunConfig>& configs) {
  for (size_t i = 0; i < configs.size(); ++i)
    if (has_reference_shape(configs[i])) return i;
  return std::nullopt;
}

TuneReport stored_tune(const ResultsDb& db, int64_t machine_id, int64_t problem_id) {
  TuneReport report;
  report.machine = db.machine(machine_id);
  report.problem = db.problem(problem_id);
  report.strategy_choice = db.latest_strategy_choice(problem_id, machine_id);

  std::map<std::string, size_t> index_of;   // config JSON -> trial
  std::map<size_t, int64_t> row_of;         // trial -> id of the row it shows
  std::optional<TrialRecord> last_winner;   // the winner's row of the latest interleaved rounds
  std::optional<TrialRecord> last_pair[2];  // an older build's latest interleaved pair
  for (const TrialRecord& row : db.trials(problem_id)) {
    if (row.machine_id != machine_id) continue;
    if (row.reason.rfind(kRemeasureWinnerReason, 0) == 0 && row.status == TrialStatus::ok)
      last_winner = row;
    if (row.reason.rfind(kLegacyPairReason, 0) == 0) {
      last_pair[0] = std::move(last_pair[1]);
      last_pair[1] = row;
    }
    TrialResult trial = result_of(row, report.machine.backend);
    trial.reused = false;  // every row is from the DB: no need to say so on each
    trial.remeasured = is_remeasurement(row);
    auto [at, added] = index_of.emplace(row.config_json, report.trials.size());
    if (added) {
      report.trials.push_back(std::move(trial));
    } else if (!later_row_replaces(row)) {
      continue;  // the tune kept the measured figures, so does the report
    } else {
      report.trials[at->second] = std::move(trial);
    }
    row_of[at->second] = row.id;
  }
  std::vector<RunConfig> configs;
  for (const TrialResult& t : report.trials) configs.push_back(t.config);
  report.baseline = stored_baseline(configs);

  const std::vector<size_t> ranked = rank_ok_trials(report.trials);
  if (ranked.empty()) {
    report.decision = "no trial finished ok";
    return report;
  }
  report.best = ranked.front();
  report.decision = "the best so far, not re-measured (an interrupted or unfinished tune)";
  if (ranked.size() == 1)
    report.decision = "only one candidate succeeded";
  else if (settle_candidates(report.trials).empty())
    report.decision = kOnlyFullyMeasuredDecision;
  // The tune's own verdict, when its interleaved pair (recorded first, then second) is
  // still what the DB shows for the top two.
  auto shows = [&](size_t trial, const std::optional<TrialRecord>& row) {
    return row && row_of[trial] == row->id;
  };
  if (ranked.size() >= 2)
    for (auto [first, second] : {std::pair(ranked[0], ranked[1]), std::pair(ranked[1], ranked[0])})
      if (shows(first, last_pair[0]) && shows(second, last_pair[1])) {
        const InterleavedVerdict verdict =
            legacy_interleaved_verdict(report.trials[first], report.trials[second]);
        report.best = verdict.second_wins ? second : first;
        report.decision = verdict.decision;
      }
  // The tune's own verdict, when its winner's row of the rounds is still what the DB shows.
  if (last_winner) {
    const size_t winner = index_of.at(last_winner->config_json);
    if (shows(winner, last_winner)) {
      report.best = winner;
      report.decision = last_winner->reason.substr(std::string(kRemeasureWinnerReason).size());
    }
  }
  report.ranking = ranking_led_by(report.trials, *report.best);
  return report;
}

}  // namespace tunescope::tuner
