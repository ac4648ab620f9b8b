// The tune context (TuneContext.h): resume lookups, budget, racing, and the one place
// trials are recorded.
#include "core/tuner/TuneContext.h"

#include <algorithm>

#include "core/base/Error.h"
#include "core/tuner/StoredTune.h"

namespace tunescope::tuner {

namespace {

std::string identity(const std::string& config_json) {
  return stored_run_config_from_json_text(config_json, "results DB").key();
}

}  // namespace

PriorTrials::PriorTrials(const ResultsDb& db, int64_t problem_id, int64_t machine_id,
                         std::string backend)
    : backend_(std::move(backend)) {
  for (TrialRecord& row : db.trials(problem_id)) {
    if (row.machine_id != machine_id || from_final_rounds(row)) continue;
    try {
      const std::string key = identity(row.config_json);
      by_identity_[key].push_back(rows_.size());
      rows_.push_back(std::move(row));
    } catch (const Error&) {
      // A row this build cannot read is no earlier verdict on any of its candidates.
    }
  }
}

std::optional<TrialResult> PriorTrials::find(const RunConfig& config,
                                             const std::vector<TrialStatus>& statuses) const {
  const auto rows = by_identity_.find(identity(to_json_text(config)));
  if (rows == by_identity_.end()) return std::nullopt;
  for (size_t i : rows->second)
    if (std::find(statuses.begin(), statuses.end(), rows_[i].status) != statuses.end())
      return result_of(rows_[i], backend_);
  return std::nullopt;
}

TuneContext::TuneContext(const TuneOptions& options, const SearchSpace& space, TrialRunner& runner,
                         TuneReport& report, ReferenceFacts reference, ResultsDb* db,
                         const Tuner::Progress& progress, Clock::time_point start)
    : options_(options),
      space_(space),
      runner_(runner),
      report_(report),
      reference_(reference),
      db_(db),
      progress_(progress),
      start_(start) {
  if (db_) {
    problem_id_ = db_->problem_id(report_.problem);
    machine_id_ = db_->machine_id(report_.machine);
  }
}

const PriorTrials& TuneContext::prior() {
  if (!prior_)
    prior_ =
        db_ ? PriorTrials(*db_, problem_id_, machine_id_, options_.base.backend) : PriorTrials();
  return *prior_;
}

double TuneContext::seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

bool TuneContext::over_budget() const {
  return options_.budget_seconds > 0 && seconds() > options_.budget_seconds;
}

std::optional<size_t> TuneContext::best_index() const {
  const std::vector<size_t> ranked = rank_ok_trials(report_.trials);
  return ranked.empty() ? std::nullopt : std::optional(ranked.front());
}

void TuneContext::announce(const std::string& label, size_t round, size_t index) const {
  if (!progress_) return;
  const auto best = best_index();
  progress_({index > 0 ? index : index_, total_, round, label, nullptr,
             best ? &report_.trials[*best] : nullptr, &report_.problem});
}

void TuneContext::announce_rounds(const RoundsProgress& rounds) const {
  if (!progress_) return;
  const auto best = best_index();
  progress_({index_, total_, 0, std::string(), nullptr, best ? &report_.trials[*best] : nullptr,
             &report_.problem, &rounds});
}

void TuneContext::record(const TrialResult& trial, int sinks, size_t round) {
  if ((sinks & to_db) && db_) db_->add_trial(problem_id_, machine_id_, trial);
  if ((sinks & to_progress) && progress_ && trial.status != TrialStatus::skipped) {
    const auto best = best_index();
    progress_({index_, total_, round, trial.config.label(), &trial,
               best ? &report_.trials[*best] : nullptr, &report_.problem});
  }
}

std::optional<TrialResult> TuneContext::racing_leader() const {
  std::optional<TrialResult> leader;
  if (const std::optional<size_t> i = racing_leader_of(report_.trials)) leader = report_.trials[*i];
  if (options_.shared_leader)
    if (std::optional<TrialResult> shared = options_.shared_leader();
        shared && (!leader || shared->figures.median_eps > leader->figures.median_eps))
      leader = std::move(shared);
  return leader;
}

MeasureOptions TuneContext::racing_against(const std::optional<TrialResult>& leader,
                                           MeasureOptions m) const {
  if (!options_.racing || m.max_steps < options_.measure.max_steps || !leader) return m;
  m.race_against = leader->figures.step_interval(leader->config.batch);
  return m;
}

// A brief measurement's figures (fewer steps than a full one: halving's early rounds)
// are marked so: they rank below the fully measured.
void TuneContext::mark_brief(TrialResult& trial, const MeasureOptions& m) const {
  if (trial.status == TrialStatus::ok && m.max_steps < options_.measure.max_steps)
    trial.figures.stop = StopRule::brief;
}

// Only the traces of the baseline and the best so far are worth keeping in memory.
void TuneContext::drop_traces(size_t keep) {
  const auto best = best_index();
  for (size_t i = 0; i < report_.trials.size(); ++i)
    if (i != best && i != report_.baseline && i != keep) report_.trials[i].trace.reset();
}

bool TuneContext::sweep(const Candidate& candidate, const MeasureOptions& measure, bool defer_ok) {
  if (stopped()) {
    report_.interrupted = true;
    return false;
  }
  TrialResult trial;
  bool fresh = true;  // false: reused from the DB, already recorded
  // Resume: a runnable candidate reuses a measured verdict (a skipped row may be a
  // budget skip: measure it); one that cannot run reuses its skipped row so that it is
  // not recorded twice.
  std::optional<TrialResult> reused;
  if (options_.resume)
    reused = prior().find(candidate.config, candidate.runnable()
                                                ? std::vector{TrialStatus::ok, TrialStatus::invalid,
                                                              TrialStatus::failed}
                                                : std::vector{TrialStatus::skipped});
  if (reused) {
    trial = std::move(*reused);
    fresh = false;
    ++report_.reused;
    if (candidate.runnable()) ++index_;
  } else if (!candidate.runnable()) {
    trial.config = candidate.config;
    trial.status = TrialStatus::skipped;
    trial.reason = candidate.skip_reason;
  } else if (index_ > 0 && over_budget()) {  // the baseline is never cut by the budget
    report_.budget_exhausted = true;
    ++index_;
    trial.config = candidate.config;
    trial.status = TrialStatus::skipped;
    trial.reason = cat("not started: budget ", options_.budget_seconds, " s exhausted after ",
                       seconds(), " s");
  } else if (std::optional<TrialResult> pruned =
                 pruner_ ? pruner_->prune(candidate, report_.baseline_trial(), report_.finds)
                         : std::nullopt) {
    ++index_;
    trial = std::move(*pruned);
  } else {
    ++index_;
    announce(candidate.config.label());
    const std::optional<TrialResult> leader = racing_leader();
    const MeasureOptions raced = racing_against(leader, measure);
    trial = runner_.measure(candidate.config, raced);
    mark_brief(trial, measure);
    // The leader's figures may be replaced by the rounds' later: say what decided.
    if (trial.status == TrialStatus::ok && trial.figures.stop == StopRule::raced_out &&
        raced.race_against && leader)
      trial.reason = sweep_race_reason(trial.figures, *leader);
  }
  const bool defer = fresh && defer_ok && trial.status == TrialStatus::ok;
  if (defer) deferred_.push_back(report_.trials.size());
  report_.trials.push_back(std::move(trial));
  const size_t i = report_.trials.size() - 1;
  if (!report_.baseline && candidate.runnable() && index_ == 1) report_.baseline = i;
  drop_traces(i);
  record(report_.trials[i], (fresh && !defer ? to_db : 0) | to_progress);
  return true;
}

bool TuneContext::remeasure(size_t i, const MeasureOptions& measure, size_t round) {
  if (stopped()) {
    report_.interrupted = true;
    return false;
  }
  if (over_budget()) {
    report_.budget_exhausted = true;
    return false;
  }
  ++index_;
  announce(report_.trials[i].config.label(), round);
  TrialResult trial =
      runner_.measure(report_.trials[i].config, racing_against(racing_leader(), measure));
  mark_brief(trial, measure);
  trial.seconds += report_.trials[i].seconds;  // the candidate's cost over all its rounds
  report_.trials[i] = std::move(trial);
  if (std::find(deferred_.begin(), deferred_.end(), i) == deferred_.end()) deferred_.push_back(i);
  drop_traces(i);
  record(report_.trials[i], to_progress, round);
  return true;
}

void TuneContext::record_deferred() {
  std::sort(deferred_.begin(), deferred_.end());
  for (size_t i : deferred_) record(report_.trials[i], to_db);
  deferred_.clear();
}

}  // namespace tunescope::tuner
