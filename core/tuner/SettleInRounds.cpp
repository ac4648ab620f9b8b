// The final choice of a tune (TuneContext::settle_in_rounds): a race in interleaved
// rounds among the leaders, then the test of the trimmed mean paired log ratio
// (docs/TUNER-MEASUREMENT.md).
#include <algorithm>

#include "core/base/Error.h"
#include "core/tuner/Ranking.h"
#include "core/tuner/TuneContext.h"

namespace tunescope::tuner {

namespace {

// The rounds of the members still racing, and their configs.
struct Racing {
  std::vector<size_t> members;
  std::vector<RunConfig> configs;
  std::vector<std::vector<double>> seconds;
};
Racing racing_of(const std::vector<RunConfig>& configs,
                 const std::vector<std::vector<double>>& seconds) {
  Racing r;
  r.members = racing_members(seconds);
  for (size_t i : r.members) {
    r.configs.push_back(configs[i]);
    r.seconds.push_back(seconds[i]);
  }
  return r;
}

// Why rounds whose verdict is still open stopped (undecided_ending's cause).
std::string why_rounds_stopped(const TuneOptions& options, bool stopped, bool over_budget) {
  const MeasureOptions& m = options.measure;
  if (stopped) return "when the tune was stopped";
  if (over_budget) return cat("when the budget ran out (budget ", options.budget_seconds, " s)");
  return cat("at a cap (max_steps ", m.max_steps, " rounds, max_timing_seconds ",
             m.max_timing_seconds, " s of steps per member",
             m.time_limit_seconds > 0 ? cat(", trial_timeout ", m.time_limit_seconds, " s")
                                      : std::string(),
             ")");
}

}  // namespace

bool TuneContext::settle_in_rounds(const std::vector<RunConfig>& configs,
                                   const std::vector<std::optional<size_t>>& swept,
                                   const RoundsStage& stage) {
  const double delta = options_.measure.delta;
  const double trim = rounds_trim(options_.measure.free_cores);
  report_.settled_in_rounds = true;
  PhaseTimer rounds_timer(report_.cost.rounds);
  std::vector<size_t> indifferent;  // dropped in the indifference zone, not as slower
  std::vector<size_t> separated;    // dropped as slower by the separation test
  // Each new member under the number its trial gets when the rounds end (in this order).
  for (size_t k = 0, joined = 0; k < configs.size(); ++k)
    if (!swept[k]) announce(configs[k].label(), 0, index_ + ++joined);
  // With partners, the looks see their rounds too, pooled round by round, from the
  // first look after they arrive (they run their share of the minimum, where the first
  // look comes). Until then this rank races on alone rather than wait for a slower one;
  // the verdict uses what the last look saw.
  RoundsPartners* partners = options_.rounds_partners;
  if (partners) partners->start(configs);
  std::optional<std::vector<std::vector<std::vector<double>>>> theirs;
  const auto pooled = [&](const std::vector<std::vector<double>>& mine) {
    if (!partners) return mine;
    if (!theirs) theirs = partners->rounds_if_sent();
    return theirs ? pooled_rounds(mine, *theirs) : mine;
  };
  const auto as_last_seen = [&](const std::vector<std::vector<double>>& mine) {
    return theirs ? pooled_rounds(mine, *theirs) : mine;
  };
  // The stage before's rounds first, kNotInRound where a member did not run them.
  size_t earlier = 0;
  for (const auto& series : stage.earlier_rounds) earlier = std::max(earlier, series.size());
  const auto with_earlier = [&](const std::vector<std::vector<double>>& seconds) {
    if (earlier == 0) return seconds;
    std::vector<std::vector<double>> out(seconds.size());
    for (size_t k = 0; k < seconds.size(); ++k) {
      const size_t ran_before =
          k < stage.earlier_rounds.size() ? stage.earlier_rounds[k].size() : 0;
      out[k].assign(earlier - ran_before, kNotInRound);
      if (ran_before > 0)
        out[k].insert(out[k].end(), stage.earlier_rounds[k].begin(), stage.earlier_rounds[k].end());
      out[k].insert(out[k].end(), seconds[k].begin(), seconds[k].end());
    }
    return out;
  };
  // Progress after every round; what would decide the open comparisons comes from the
  // last look's verdict (the looks start at the minimum), in this stage's rounds.
  RoundsProgress progress{
      .members = configs.size(),
      .joining = static_cast<size_t>(std::count(swept.begin(), swept.end(), std::nullopt)),
      .least = static_cast<size_t>(minimum_rounds(options_.measure)),
      .most = static_cast<size_t>(maximum_rounds(options_.measure))};
  size_t to_decide = 0;  // the last look's, counting the stage before's rounds
  std::vector<TrialResult> rounds = runner_.measure_interleaved(
      configs,
      [&](const std::vector<std::vector<double>>& seconds) {
        if (stopped() || over_budget()) return true;
        const Racing r = racing_of(configs, with_earlier(pooled(seconds)));
        if (r.members.size() < 2) return true;
        const RoundsVerdict v = rounds_verdict(r.configs, r.seconds, delta, kAlpha, trim);
        to_decide = v.settled ? 0 : v.rounds_to_decide;
        return v.settled || open_only_where_raced_again(r.configs, v, stage.next_stage);
      },
      [&](const std::vector<std::vector<double>>& seconds) {
        const RoundDrops drops =
            round_drops(configs, with_earlier(pooled(seconds)), delta, kAlpha, trim);
        indifferent.insert(indifferent.end(), drops.indifferent.begin(), drops.indifferent.end());
        separated.insert(separated.end(), drops.by_separation.begin(), drops.by_separation.end());
        std::vector<size_t> all = drops.slower;
        all.insert(all.end(), drops.indifferent.begin(), drops.indifferent.end());
        return all;
      },
      [&](const std::vector<std::vector<double>>& seconds) {
        const std::vector<size_t> racing = racing_members(seconds);
        progress.round = racing.empty() ? 0 : seconds[racing.front()].size();
        progress.racing = racing.size();
        progress.to_decide = to_decide > earlier ? to_decide - earlier : 0;
        announce_rounds(progress);
      },
      stage.share_sessions);
  rounds_timer.stop();
  if (stopped()) report_.interrupted = true;
  if (over_budget()) report_.budget_exhausted = true;

  const std::string failure = rounds.empty() ? std::string() : rounds.front().reason;
  // The members still racing at the end (a member dropped in the last look has as many
  // rounds as they have, so its stop rule tells).
  // The verdict on the pooled rounds; each leader's figures stay this rank's own.
  std::vector<std::vector<double>> own(rounds.size());
  for (size_t k = 0; k < rounds.size(); ++k) own[k] = rounds[k].step_seconds;
  const std::vector<std::vector<double>> all = with_earlier(as_last_seen(own));
  Racing survivors;
  for (size_t k = 0; k < rounds.size(); ++k)
    if (rounds[k].status == TrialStatus::ok && rounds[k].figures.stop == StopRule::interleaved) {
      survivors.members.push_back(k);
      survivors.configs.push_back(configs[k]);
      survivors.seconds.push_back(all[k]);
    }
  std::optional<RoundsVerdict> verdict;
  if (!survivors.members.empty())
    verdict = rounds_verdict(survivors.configs, survivors.seconds, delta, kAlpha, trim);
  // Open comparisons that no later stage races again: the decision says why the rounds
  // stopped and what settling them would take.
  if (verdict && !verdict->settled &&
      (stopped() || over_budget() ||
       !open_only_where_raced_again(survivors.configs, *verdict, stage.next_stage))) {
    std::vector<std::vector<double>> survivor_rounds;
    for (size_t k : survivors.members) survivor_rounds.push_back(own[k]);
    const MeasureOptions& m = options_.measure;
    verdict->decision +=
        undecided_ending(*verdict, survivors.seconds.front().size(), survivor_rounds,
                         std::max<int64_t>(m.turn_steps, 1) + std::max<int64_t>(m.settle_steps, 0),
                         why_rounds_stopped(options_, stopped(), over_budget()));
  }
  constexpr size_t kNone = static_cast<size_t>(-1);
  const size_t winner = verdict ? survivors.members[verdict->winner] : kNone;
  // The last look's drops: the rounds stop once every comparison is decided, before that
  // look's race_drops, so a member slower with confidence ends as a leader still racing
  // unless dropped here (per-layer's second stage races only those still racing).
  std::vector<size_t> dropped_at_end;
  if (verdict && stage.drop_at_last_look)
    for (size_t d : last_look_drops(survivors.seconds, *verdict, delta, kAlpha, trim))
      dropped_at_end.push_back(survivors.members[d]);
  auto dropped_last = [&](size_t k) {
    return std::find(dropped_at_end.begin(), dropped_at_end.end(), k) != dropped_at_end.end();
  };
  const std::string fastest = verdict ? survivors.configs[verdict->fastest].label() : std::string();
  std::vector<std::optional<size_t>> placed(configs.size());  // where each result went
  for (size_t k = 0; k < configs.size(); ++k) {
    TrialResult fresh = std::move(rounds[k]);
    const bool survived = std::find(survivors.members.begin(), survivors.members.end(), k) !=
                              survivors.members.end() &&
                          !dropped_last(k);
    if (fresh.status == TrialStatus::ok && survived) {
      fresh.remeasured = true;
      fresh.reason =
          k == winner ? cat(kRemeasureWinnerReason, verdict->decision)
                      : cat(kRemeasureReason, " of ", configs.size(), " configs over ",
                            fresh.figures.steps, " rounds; the winner: ", configs[winner].label());
    } else if (fresh.status == TrialStatus::ok) {
      // Dropped: raced out of the rounds, ranked by its rounds' figures among their members
      // (in_final_rounds), here and when read back.
      fresh.figures.stop = StopRule::raced_out;
      const bool zone = std::find(indifferent.begin(), indifferent.end(), k) != indifferent.end();
      const bool apart = std::find(separated.begin(), separated.end(), k) != separated.end();
      fresh.reason =
          zone ? cat(kRemeasureReason, " of ", configs.size(), " configs: left the race after ",
                     fresh.figures.steps,
                     " rounds: with confidence no more than delta faster than the fastest then, "
                     "and not simpler (indifference zone); the fastest at the end: ",
                     fastest)
               : cat(kRemeasureReason, " of ", configs.size(), " configs: raced out after ",
                     fresh.figures.steps, " rounds, slower than ", fastest,
                     apart ? " with confidence (separation test: every round slower than "
                             "every round of the fastest then)"
                           : " with confidence (paired test of the trimmed mean log ratio)");
    }
    const bool failed_here = fresh.status != TrialStatus::ok;
    record(fresh, to_db);
    if (swept[k]) {
      // A sweep's measurement stays when the rounds could not run it.
      if (failed_here) continue;
      fresh.seconds += report_.trials[*swept[k]].seconds;
      report_.trials[*swept[k]] = std::move(fresh);
      placed[k] = swept[k];
    } else {
      ++index_;
      report_.trials.push_back(std::move(fresh));
      placed[k] = report_.trials.size() - 1;
      // A baseline measured only here (per-layer races it without a sweep) is still the
      // yardstick of the speed-up.
      if (!report_.baseline && configs[k] == reference_config(options_.base))
        report_.baseline = placed[k];
      record(report_.trials.back(), to_progress);
    }
  }
  if (winner != kNone) {
    report_.best = placed[winner];
    report_.decision = verdict->decision;
    return !verdict->settled &&
           open_only_where_raced_again(survivors.configs, *verdict, stage.next_stage);
  } else {
    const std::vector<size_t> ranked = rank_ok_trials(report_.trials);
    if (!ranked.empty()) report_.best = ranked.front();
    report_.decision =
        cat("interleaved re-measurement failed (", failure, "); the sweep's fastest wins");
  }
  return false;
}

}  // namespace tunescope::tuner
