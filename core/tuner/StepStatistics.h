// The statistics of the tuner's timing (docs/TUNER-MEASUREMENT.md): a quantile of the
// step times with its distribution-free confidence interval (order statistics), the
// rule that stops timing a candidate once that interval is narrow enough, and the
// sign-flip test on paired rounds that settles the final choice. Pure functions of numbers,
// so the rules are tested on synthetic sequences.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tunescope::tuner {

// Which quantile of a candidate's step times estimates its step time: the median
// (chosen by measurement, docs/TUNER-MEASUREMENT.md).
inline constexpr double kStepQuantile = 0.5;
// Coverage of every interval the tuner reports.
inline constexpr double kConfidence = 0.95;
// The fewest steps with a 95% interval of the median (order_statistic_ranks).
inline constexpr int64_t kMinStepsForInterval = 6;
// Significance level of the final interleaved test.
inline constexpr double kAlpha = 0.05;

// P(B <= k) for B ~ Binomial(n, p); 0 for k < 0, 1 for k >= n.
double binomial_cdf(long k, long n, double p);

// 0-based indices [low, high] into n sorted samples such that
// P(x_(low) <= the q-quantile <= x_(high)) >= confidence, each tail at most
// (1 - confidence) / 2 (the binomial order-statistic interval). Empty when n is too
// small for any such pair (the median at 95% needs n >= 6).
std::optional<std::pair<size_t, size_t>> order_statistic_ranks(size_t n, double q,
                                                               double confidence);

// Linear interpolation between closest ranks (what numpy's default percentile does).
double quantile_of_sorted(const std::vector<double>& sorted, double q);

// A quantile of a sample with its confidence interval; unbounded (low/high 0) when the
// sample is too small to bound it.
struct QuantileEstimate {
  size_t n = 0;
  double estimate = 0;
  double low = 0;
  double high = 0;
  bool has_interval = false;
  bool bounded() const { return has_interval; }
  // The larger of (estimate - low) / estimate and (high - estimate) / estimate;
  // infinite when unbounded.
  double relative_half_width() const;
};
QuantileEstimate estimate_quantile(std::vector<double> sample, double q = kStepQuantile,
                                   double confidence = kConfidence);

// The stopping rule of adaptive timing: stop once `minimum` samples are in and the
// interval lies within +-delta/2 of the estimate, or at `maximum` samples.
enum class StopRule {
  none,         // not an adaptive measurement (an older build's row)
  converged,    // the interval reached +-delta/2
  max_steps,    // --max-steps reached first
  time_cap,     // --max-trial-seconds reached first
  raced_out,    // stopped early: slower than the leader with confidence (racing)
  brief,        // a halving round before the last: a fixed, brief count
  interleaved,  // the final interleaved rounds
};
std::string to_string(StopRule rule);
// Throws Error(input) for an unknown name.
StopRule parse_stop_rule(const std::string& text);
// Whether a measurement ended this way is a full one (may win), not cut short.
bool fully_measured(StopRule rule);

struct StoppingRule {
  double delta = 0.02;  // the interval's full relative width: +-delta/2
  size_t minimum = 5;
  size_t maximum = 1000;
};
// converged / max_steps when timing should stop after `step_seconds`, else nullopt.
std::optional<StopRule> should_stop(const std::vector<double>& step_seconds,
                                    const StoppingRule& rule);

// Racing: a candidate whose step-time interval lies entirely above the leader's, with
// its lower end more than delta/2 above the leader's upper end, is slower with
// confidence; it need not be timed further.
bool slower_with_confidence(const QuantileEstimate& candidate, const QuantileEstimate& leader,
                            double delta);

// The per-layer find's stopping rule (it ranks by each algorithm's fastest run): the
// last of `run_seconds` lies within +-delta/2 of the fastest run before it, so a second
// run has confirmed the fastest instead of moving it. False for fewer than two runs.
bool fastest_confirmed(const std::vector<double>& run_seconds, double delta);

// The sign-flip (Fisher-Pitman) permutation test of paired differences against a zero
// mean, with the mean difference and its interval. Under the null hypothesis the two
// members of a pair are exchangeable, so each difference is as likely with either sign:
// p is the share of the 2^n sign flips whose sum is at least as extreme as the observed
// one, enumerated exactly up to kExactSignFlipRounds differences and by the normal
// approximation of that distribution (mean 0, variance the sum of squares) beyond. The
// interval inverts the approximated test: mean +- z sqrt(SS / (n (n - z^2))), SS the
// squared deviations from the mean; bounded once n > z^2 and 2^-n <= (1 - confidence)
// / 2 (the exact test can reject: 6 rounds at 95%). It tests the MEAN, which is
// what training pays (an epoch is the sum of its steps), where a test of the median
// counts only how often one member is faster, not by how much.
//
// With `trim` > 0 the statistic is the trimmed mean instead (g = floor(trim n) differences
// cut from each end) and its interval the same formula over the winsorized differences
// (each beyond the g-th from either end set to it), divided by 1 - 2g/n (Tukey and
// McLaughlin's trimmed-mean interval, with the test's z); the test then uses the normal
// approximation only. g = 0 is the plain mean and the exact test above.
inline constexpr size_t kExactSignFlipRounds = 16;
// The share of a pair's per-round log ratios the rounds cut from each end before their
// mean: a turn of the rounds is slow far more often than a step of a training run is
// (docs/TUNER-MEASUREMENT.md, "The trimmed mean of the rounds").
inline constexpr double kRoundsTrim = 0.1;
// g: how many of n differences a trimmed mean at `trim` cuts from each end,
// floor(trim n), or none where that would leave none.
size_t trimmed_count(size_t n, double trim);
// The mean of the differences and its interval (as above), without the test's p-values:
// what a look's simultaneous intervals need, at no cost of enumerating sign flips.
struct MeanInterval {
  double mean = 0;  // of the differences (trimmed when asked)
  double low = 0, high = 0;
  bool has_interval = false;
  bool bounded() const { return has_interval; }
};
MeanInterval mean_interval(const std::vector<double>& differences, double confidence = kConfidence,
                           double trim = 0);
// The differences at which an interval at `confidence` would narrow to `half_width` either
// side, were the spread of those behind `now` (mean_interval over `n` differences at
// `now_confidence`) to hold: an interval's half-width is z s / sqrt(n - z^2) for a spread s
// (mean_interval), so n' = z^2 + (z s / half_width)^2. What an open comparison of the rounds
// would need (Ranking.h, rounds_to_decide). 0 when `now` is unbounded or `half_width` is not
// positive.
double differences_for_half_width(const MeanInterval& now, size_t n, double now_confidence,
                                  double confidence, double half_width);
struct SignFlipTest : MeanInterval {
  size_t n = 0;          // differences
  size_t positive = 0;   // of them, > 0
  double p_value = 1;    // two-sided: P(|S*| >= |S|), S the sum, S* a sign-flipped sum
  double p_greater = 1;  // one-sided, against a mean <= 0: P(S* >= S)
};
SignFlipTest sign_flip_test(const std::vector<double>& differences, double confidence = kConfidence,
                            double trim = 0);

// Whether one race member's rounds all lie above another's, by more than `factor`: the
// extreme case of the exact rank-sum (Mann-Whitney) test. When the 2n log times of two
// members with the same step-time distribution are exchangeable, each of the C(2n, n)
// ways to split them is as likely, so n rounds of one all above n of the other come with
// chance 1 / C(2n, n): 1/252 for 5 rounds, where paired sign flips cannot go below 2^-n
// (1/32). Time effects shared by a round (the machine's drift) only make such a split
// rarer (docs/TUNER-MEASUREMENT.md, "Early drops"). Needs no pairing, so a member far
// behind can leave the race before the sign-flip test's first look.
struct SeparationTest {
  size_t n = 0;            // rounds of each member
  bool separated = false;  // every round of `slower` > factor x every round of `faster`
  // 1 / C(2n, n) x the looks that could have found it (from kEarliestSeparationLook to
  // n): the chance under the null hypothesis, Bonferroni over those looks.
  double p_value = 1;
};
inline constexpr size_t kEarliestSeparationLook = 5;
SeparationTest separation_test(const std::vector<double>& slower, const std::vector<double>& faster,
                               double factor);

// Mean of the sample without the lowest and highest `trim` share (0.2: the middle 60%).
double trimmed_mean(std::vector<double> sample, double trim);

}  // namespace tunescope::tuner
