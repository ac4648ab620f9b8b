// How trials are ranked and how the final interleaved rounds among the leaders declare
// the winner: shared by the tune itself and by `report` reading a results DB, so both
// print the same ranking (docs/TUNER-MEASUREMENT.md).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "core/tuner/Measurement.h"

namespace tunescope::tuner {

// Simpler first: fewer per-layer overrides, then fewer knobs away from their defaults,
// then fewer threads, then smaller knob counts. Ties within noise go to the simpler config.
bool simpler(const RunConfig& a, const RunConfig& b);

// The one ranking rule, in tiers, each by median ex/s (fastest first):
//   0: measured in the final interleaved rounds (in_final_rounds): the leaders still
//      racing at their end (remeasured) and those raced out of them, whose rounds' figures
//      are as comparable as the survivors' (a survivor the verdict found slower may be
//      slower than a member dropped earlier),
//   1: fully measured candidates (timing converged or reached a cap),
//   2: candidates cut short: raced out, or eliminated in a brief halving round.
// Rows of an older build (stop none) have no stop rule: among them, fewer timed steps
// than the most any of them had means an earlier halving round (tier 2), and more steps
// rank first within a tier.
enum class RankTier { remeasured = 0, full = 1, cut_short = 2 };
// The tier of each ok trial (same order as `trials`; non-ok trials get cut_short).
std::vector<RankTier> rank_tiers(const std::vector<TrialResult>& trials);
// Whether a trial's figures are of the final interleaved rounds: re-measured there, or raced
// out of them (stop raced_out with the rounds' reason, kRemeasureReason).
bool in_final_rounds(const TrialResult& trial);
// Indices of the ok trials, best first, by that rule.
std::vector<size_t> rank_ok_trials(const std::vector<TrialResult>& trials);
// rank_ok_trials with the declared winner moved to the front (the tie rule may crown a
// slightly slower, simpler config).
std::vector<size_t> ranking_led_by(const std::vector<TrialResult>& trials, size_t winner);

// The leader to race a candidate against: the fastest fully measured trial with an
// interval.
std::optional<size_t> racing_leader_of(const std::vector<TrialResult>& trials);
// The leaders to settle in interleaved rounds: the top `top` fully measured trials (in
// ranking order; the top of the ranking must be fully measured), then every other fully
// measured or raced-out trial whose interval overlaps the leader's (or that has none: a
// noisy sweep races a candidate out on a few steps, and the paired rounds may tell
// otherwise), at most `cap` in all. Empty when fewer than two fully measured trials.
inline constexpr size_t kSettledTop = 4;
inline constexpr size_t kMaxSettled = 6;
std::vector<size_t> settle_candidates(const std::vector<TrialResult>& trials,
                                      size_t top = kSettledTop, size_t cap = kMaxSettled);

// A round a member did not run, in a series of round times: per-layer's second stage
// carries the first stage's rounds of the members that race on, and the members new to
// it have none there. Every comparison below pairs the rounds both members ran.
inline constexpr double kNotInRound = std::numeric_limits<double>::quiet_NaN();

// A race in interleaved rounds (measure_interleaved with a RoundsDrop): the members
// still racing are those with the most rounds (a dropped or invalid member has fewer).
std::vector<size_t> racing_members(const std::vector<std::vector<double>>& round_seconds);
// The rounds of several ranks that raced the same members at once, pooled for the
// paired tests: round i of rank 0, then round i of each other rank, for i = 0, 1, ...
// Each round is one rank's (one machine's) step of every member, so each paired ratio
// compares the members on one machine. Members' series stay aligned round by round when
// each other rank gives every member the same number of rounds (or none), at most the
// fewest of this rank's members: so the partners run their share without drops.
// `theirs`: per other rank, per member, its round seconds.
std::vector<std::vector<double>> pooled_rounds(
    const std::vector<std::vector<double>>& mine,
    const std::vector<std::vector<std::vector<double>>>& theirs);
// The members to drop: against the fastest still racing (fastest_racing: by the mean log
// ratios trimmed by `trim`), each whose trimmed mean paired log step-time ratio is
// significantly positive by the one-sided test at alpha / (members - 1) (every member is compared
// at every look) and whose ratio exceeds 1 + delta/2, or whose every round lies above every round
// of the fastest by that much, with the separation test's p below the same level (separation_test:
// from 5 rounds, where the sign flips need 6 to 8).
std::vector<size_t> race_drops(const std::vector<std::vector<double>>& round_seconds, double delta,
                               double alpha = kAlpha, double trim = kRoundsTrim);
// The members that can no longer change the pick (the indifference zone): against the
// fastest still racing, each that is not simpler than it (so it cannot win the tie
// rule), measured no faster (trimmed mean paired ratio >= 1), and whose ratio's one-sided
// lower bound shows it is not more than delta faster: each such claim against the fastest
// is tested by Holm's step-down over the other members, at alpha / k with k the claims not
// yet shown (alpha / (members - 1) for the first). Racing them on cannot make the pick more
// than delta slower than they are.
std::vector<size_t> indifferent_drops(const std::vector<RunConfig>& configs,
                                      const std::vector<std::vector<double>>& round_seconds,
                                      double delta, double alpha = kAlpha,
                                      double trim = kRoundsTrim);

// The fastest of a group against one other, over their paired interleaved rounds.
struct PairedComparison {
  size_t other = 0;                      // index in the group
  SignFlipTest test;                     // of log(other's step time / fastest's) per round
  double ratio = 1;                      // exp(trimmed mean log ratio): > 1 when `other` is slower
  double ratio_low = 0, ratio_high = 0;  // its 95% interval (0: too few rounds)
  bool significant = false;              // test.p_value < alpha
  // Below delta: the interval within +-delta (the point estimate, |ratio - 1| < delta,
  // while there are too few rounds for an interval). A tie: not significant and below
  // delta, so a simpler member that wins a tie is known to be within delta.
  bool below_delta = false;
  bool tie() const { return !significant && below_delta; }
  // Decided: significant, or the one-sided lower bound of the ratio shows that `other` is
  // not more than delta faster than the fastest: picking the fastest then costs at most
  // delta against it, whatever more rounds would say (an indifference zone). The claims
  // against the members are tested by Holm's step-down, so that they hold against every
  // member at once: with k claims not yet shown each is tested at alpha / k.
  bool settled = false;
  double zone_low = 0;    // that lower bound of the ratio (0: too few rounds)
  double zone_level = 0;  // its level: where the claim was shown, or is tested next
  // Open (not settled): the rounds in all at which it would be decided, were its mean and
  // spread to hold (its 95% interval clear of 1, or its zone bound above 1 - delta): what
  // rounds that stop at a cap leave undecided. 0 when settled or too few rounds to say.
  size_t rounds_to_decide = 0;
};

struct RoundsVerdict {
  size_t fastest = 0;                         // group index first by the trimmed mean log ratios
  size_t winner = 0;                          // the fastest, or the simplest config tied with it
  std::vector<PairedComparison> comparisons;  // the fastest against each other member
  bool settled = false;                       // every comparison is decided
  size_t rounds_to_decide = 0;  // the most of the open comparisons' (0: none, or unknown)
  // The test, each effect size and p, and the rule applied; "undecided" when a comparison
  // is open (the fastest so far, or the simplest tied with it, still wins).
  std::string decision;
};
// The trim every look of a tune's rounds uses (`trim` below): kRoundsTrim on a quiet
// machine, where a slow turn is mostly the interleaving's; none where other processes
// load it (`free_cores` > 0, MeasureOptions), whose slow turns are the load's and cost
// training as much (docs/TUNER-MEASUREMENT.md, "The trimmed mean of the rounds").
inline double rounds_trim(double free_cores) { return free_cores > 0 ? 0 : kRoundsTrim; }

// The verdict of interleaved rounds: round_seconds[i][r] is member i's step time in
// round r (equal lengths). The fastest by the trimmed mean paired log ratio wins, unless
// a simpler member's difference from it is both insignificant (two-sided test of that
// trimmed mean, p >= alpha: the exact sign-flip test of the mean while the trim cuts
// none) and below delta (its interval within +-delta); the simplest such wins then. A
// mean, not the median: a member fast in most rounds but much slower in the others costs
// a training run what its mean says; trimmed by `trim` (kRoundsTrim, as every look of the
// rounds; 0: the plain mean), because a turn of the rounds is slow far more often than a
// step of training is (docs/TUNER-MEASUREMENT.md).
RoundsVerdict rounds_verdict(const std::vector<RunConfig>& configs,
                             const std::vector<std::vector<double>>& round_seconds, double delta,
                             double alpha = kAlpha, double trim = kRoundsTrim);

// What a decision adds when its rounds stopped with `verdict` open (`cause`: why they
// stopped, "at a cap (...)"): "; the rounds stopped after N rounds CAUSE", then, where the
// verdict can say, the rounds in all deciding every open comparison would take at this
// spread and the seconds of steps that many more would cost. Those are a round of the
// fastest and the members open against it (`member_rounds`: the verdict's members' round
// times, their mean each) times `steps_a_turn` (settle and timed steps).
std::string undecided_ending(const RoundsVerdict& verdict, size_t rounds,
                             const std::vector<std::vector<double>>& member_rounds,
                             int64_t steps_a_turn, const std::string& cause);

// Per-layer's first stage may stop before its verdict is settled: when every comparison
// still open is with a member of the fastest's layout and thread count, and the next
// stage (`next_stage`, its candidates) races that (layout, threads) again. Those members
// go on to it still racing, and it settles them beside its own candidates: settling
// twins that differ only in a run knob to the zone's bound took resnet18-small's first
// stage to 28-86 rounds, and the second stage raced them again from its first round.
bool open_only_where_raced_again(const std::vector<RunConfig>& configs,
                                 const RoundsVerdict& verdict,
                                 const std::vector<RunConfig>& next_stage);

// One look's drops of the rounds: race_drops, then indifferent_drops of the others;
// none when fewer than two members would be left racing (the verdict's test decides
// between the last two, and its decision says so).
struct RoundDrops {
  std::vector<size_t> slower, indifferent;
  std::vector<size_t> by_separation;  // of `slower`, those the separation test found
};
RoundDrops round_drops(const std::vector<RunConfig>& configs,
                       const std::vector<std::vector<double>>& round_seconds, double delta,
                       double alpha = kAlpha, double trim = kRoundsTrim);

// race_drops at the last look of rounds that stopped because `verdict` was settled (the
// rounds stop before that look's drops), and the members the verdict itself found
// significantly slower by more than delta/2 (what settled it), never the verdict's
// winner or fastest: per-layer's first stage, whose losers' (layout, threads) are not
// raced again.
std::vector<size_t> last_look_drops(const std::vector<std::vector<double>>& round_seconds,
                                    const RoundsVerdict& verdict, double delta,
                                    double alpha = kAlpha, double trim = kRoundsTrim);

// The decision when every ok candidate but the top one was cut short.
inline constexpr const char* kOnlyFullyMeasuredDecision =
    "the only fully measured candidate: every other was slower with confidence (raced out) or "
    "eliminated in a "
    "brief halving round";

// Reason prefix of the winner's row of the interleaved rounds (it starts with
// kRemeasureReason, like every row of the rounds); the decision follows it.
inline constexpr const char* kRemeasureWinnerReason = "interleaved re-measurement winner: ";

// The verdict of builds before the interleaved rounds (two configs, the larger spread as
// the noise): kept to reread their results DBs as they were declared.
struct InterleavedVerdict {
  bool second_wins = false;
  std::string decision;
};
InterleavedVerdict legacy_interleaved_verdict(const TrialResult& first, const TrialResult& second);

// The reason of a candidate raced out of the sweep (`figures`) against `leader` as it was
// measured then: "raced out of the sweep at 0.92x the speed of X as measured then (13500.2
// [13300.1, 13700.5] ex/s): slower with confidence". Its figures and the leader's are of
// the same moment; the leader's row may show the later rounds' figures instead.
std::string sweep_race_reason(const TimingFigures& figures, const TrialResult& leader);

// Per-layer's second stage of rounds: the indices of `candidates` (in order) raced with
// `members`, the first stage's survivors (`members_eps`: their ex/s there). A candidate
// joins when it has the run knobs (layout, threads, concurrency, cpu_binding: every knob
// but the conv algorithms' own) of the fastest survivor of its layout and thread count:
// the first stage decides each (layout, threads)'s run knobs, the second its algorithms.
// Where no survivor has its layout and thread count, it joins when it has a survivor's
// layout and conv algorithms (that survivor's picks at another thread count, every run
// knob): beside a busy loop resnet18-small's two-thread find chose direct on layers the
// one-thread find did not, its (layout, 2 threads) lost the first stage with those picks,
// and the one-thread picks at two threads bound, the truth's best, never raced.
std::vector<size_t> second_stage_candidates(const std::vector<RunConfig>& members,
                                            const std::vector<double>& members_eps,
                                            const std::vector<RunConfig>& candidates);

}  // namespace tunescope::tuner
