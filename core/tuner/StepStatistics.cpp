// Order-statistic intervals, the stopping rule, racing and the sign-flip test.
#include "core/tuner/StepStatistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/base/Error.h"

namespace tunescope::tuner {

namespace {

// P(B <= k) for k = 0..n, B ~ Binomial(n, p), 0 < p < 1; pmf terms in log space so that
// n in the thousands neither overflows the binomial coefficient nor underflows p^n.
std::vector<double> binomial_cdf_table(long n, double p) {
  std::vector<double> cdf(static_cast<size_t>(n) + 1);
  const double log_p = std::log(p), log_q = std::log1p(-p);
  const double log_n_fact = std::lgamma(static_cast<double>(n) + 1);
  double sum = 0;
  for (long k = 0; k <= n; ++k) {
    const auto kd = static_cast<double>(k), nd = static_cast<double>(n);
    sum += std::exp(log_n_fact - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) + kd * log_p +
                    (nd - kd) * log_q);
    cdf[static_cast<size_t>(k)] = std::min(sum, 1.0);
  }
  return cdf;
}

// Rounding slack when comparing a tail with alpha/2 (n = 6, median: 1/64 exactly).
constexpr double kTailSlack = 1e-12;

}  // namespace

double binomial_cdf(long k, long n, double p) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  return binomial_cdf_table(n, p)[static_cast<size_t>(k)];
}

std::optional<std::pair<size_t, size_t>> order_statistic_ranks(size_t n, double q,
                                                               double confidence) {
  if (n == 0 || !(q > 0 && q < 1) || !(confidence > 0 && confidence < 1)) return std::nullopt;
  const double tail = (1 - confidence) / 2;
  const std::vector<double> cdf = binomial_cdf_table(static_cast<long>(n), q);
  // x_(l) (1-based) is below the quantile unless B <= l - 1: the largest l with that tail <=
  // alpha/2.
  if (cdf[0] > tail + kTailSlack) return std::nullopt;
  size_t low = 1;
  while (low + 1 <= n && cdf[low] <= tail + kTailSlack) ++low;
  // x_(u) is above the quantile unless B >= u: the smallest u with 1 - P(B <= u - 1) <= alpha/2.
  if (1 - cdf[n - 1] > tail + kTailSlack) return std::nullopt;
  size_t high = n;
  while (high - 1 >= 1 && 1 - cdf[high - 2] <= tail + kTailSlack) --high;
  if (low > high) return std::nullopt;
  return std::pair(low - 1, high - 1);
}

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

double QuantileEstimate::relative_half_width() const {
  if (!bounded() || estimate == 0) return std::numeric_limits<double>::infinity();
  return std::max(estimate - low, high - estimate) / std::abs(estimate);
}

QuantileEstimate estimate_quantile(std::vector<double> sample, double q, double confidence) {
  QuantileEstimate e;
  e.n = sample.size();
  if (sample.empty()) return e;
  std::sort(sample.begin(), sample.end());
  e.estimate = quantile_of_sorted(sample, q);
  if (const auto ranks = order_statistic_ranks(sample.size(), q, confidence)) {
    e.low = sample[ranks->first];
    e.high = sample[ranks->second];
    e.has_interval = true;
  }
  return e;
}

std::string to_string(StopRule rule) {
  switch (rule) {
    case StopRule::none: return "none";
    case StopRule::converged: return "converged";
    case StopRule::max_steps: return "max_steps";
    case StopRule::time_cap: return "time_cap";
    case StopRule::raced_out: return "raced_out";
    case StopRule::brief: return "brief";
    case StopRule::interleaved: return "interleaved";
  }
  return "?";
}

StopRule parse_stop_rule(const std::string& text) {
  for (StopRule r : {StopRule::none, StopRule::converged, StopRule::max_steps, StopRule::time_cap,
                     StopRule::raced_out, StopRule::brief, StopRule::interleaved})
    if (to_string(r) == text) return r;
  fail(ErrorKind::input, "unknown stop rule '", text, "'");
}

bool fully_measured(StopRule rule) {
  return rule != StopRule::raced_out && rule != StopRule::brief;
}

std::optional<StopRule> should_stop(const std::vector<double>& step_seconds,
                                    const StoppingRule& rule) {
  const size_t n = step_seconds.size();
  if (n >= rule.maximum) return StopRule::max_steps;
  if (n < rule.minimum) return std::nullopt;
  if (estimate_quantile(step_seconds).relative_half_width() <= rule.delta / 2)
    return StopRule::converged;
  return std::nullopt;
}

bool fastest_confirmed(const std::vector<double>& run_seconds, double delta) {
  if (run_seconds.size() < 2) return false;
  const double fastest_before = *std::min_element(run_seconds.begin(), run_seconds.end() - 1);
  return std::abs(run_seconds.back() - fastest_before) <= delta / 2 * fastest_before;
}

bool slower_with_confidence(const QuantileEstimate& candidate, const QuantileEstimate& leader,
                            double delta) {
  if (!candidate.bounded() || !leader.bounded()) return false;
  return candidate.low > leader.high * (1 + delta / 2);
}

namespace {

// P(Z >= z) for a standard normal Z.
double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// The z with P(Z >= z) = tail, 0 < tail < 1 (bisection: called a few times per look).
double normal_upper_quantile(double tail) {
  double low = -40, high = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (low + high) / 2;
    (normal_upper_tail(mid) > tail ? low : high) = mid;
  }
  return (low + high) / 2;
}

// The differences cut and winsorized for a trimmed mean: g values from each end.
struct Trimmed {
  size_t cut = 0;                  // g
  double mean = 0;                 // of the middle n - 2g
  std::vector<double> winsorized;  // each beyond the g-th from either end set to it
};
Trimmed trimmed(const std::vector<double>& differences, double trim) {
  Trimmed t;
  const size_t n = differences.size();
  t.cut = trimmed_count(n, trim);
  double sum = 0;
  if (t.cut == 0) {
    t.winsorized = differences;
    for (double d : differences) sum += d;
    t.mean = n ? sum / static_cast<double>(n) : 0;
    return t;
  }
  std::vector<double> sorted = differences;
  std::sort(sorted.begin(), sorted.end());
  const double low = sorted[t.cut], high = sorted[n - t.cut - 1];
  for (double d : differences) t.winsorized.push_back(std::clamp(d, low, high));
  for (size_t i = t.cut; i + t.cut < n; ++i) sum += sorted[i];
  t.mean = sum / static_cast<double>(n - 2 * t.cut);
  return t;
}

// The (trimmed) mean and its interval (mean_interval).
MeanInterval interval_of(const Trimmed& t, double confidence) {
  MeanInterval interval;
  const size_t count = t.winsorized.size();
  if (count == 0) return interval;
  const auto n = static_cast<double>(count);
  interval.mean = t.mean;
  if (confidence > 0 && confidence < 1) {
    // Bounded only where the exact test could reject a mean at all (2^-n <= the tail: from
    // 6 rounds at 95%), so that n rounds that all agree are no interval of their point.
    const double tail = (1 - confidence) / 2;
    const double z = normal_upper_quantile(tail);
    if (n > z * z &&
        std::ldexp(1.0, -static_cast<int>(std::min<size_t>(count, 1000))) <= tail + kTailSlack) {
      double sum = 0;
      for (double w : t.winsorized) sum += w;
      const double centre = sum / n;
      double deviations = 0;
      for (double w : t.winsorized) deviations += (w - centre) * (w - centre);
      const double kept = 1 - 2 * static_cast<double>(t.cut) / n;
      const double half = z * std::sqrt(deviations / (n * (n - z * z))) / kept;
      interval.low = interval.mean - half;
      interval.high = interval.mean + half;
      interval.has_interval = true;
    }
  }
  return interval;
}

}  // namespace

size_t trimmed_count(size_t n, double trim) {
  const size_t cut = trim > 0 ? static_cast<size_t>(std::floor(trim * static_cast<double>(n))) : 0;
  return 2 * cut < n ? cut : 0;
}

MeanInterval mean_interval(const std::vector<double>& differences, double confidence, double trim) {
  return interval_of(trimmed(differences, trim), confidence);
}

double differences_for_half_width(const MeanInterval& now, size_t n, double now_confidence,
                                  double confidence, double half_width) {
  const auto valid = [](double c) { return c > 0 && c < 1; };
  if (!now.bounded() || !(half_width > 0) || !valid(now_confidence) || !valid(confidence)) return 0;
  const double z_now = normal_upper_quantile((1 - now_confidence) / 2);
  const double spread =
      (now.high - now.low) / 2 * std::sqrt(static_cast<double>(n) - z_now * z_now) / z_now;
  const double z = normal_upper_quantile((1 - confidence) / 2);
  return z * z + (z * spread / half_width) * (z * spread / half_width);
}

SignFlipTest sign_flip_test(const std::vector<double>& differences, double confidence,
                            double trim) {
  SignFlipTest test;
  test.n = differences.size();
  if (test.n == 0) return test;
  const Trimmed t = trimmed(differences, trim);
  static_cast<MeanInterval&>(test) = interval_of(t, confidence);
  double sum = 0, squares = 0, magnitude = 0;
  for (double d : t.winsorized) {
    sum += d;
    squares += d * d;
    magnitude += std::abs(d);
  }
  for (double d : differences)
    if (d > 0) ++test.positive;
  if (t.cut == 0 && test.n <= kExactSignFlipRounds) {
    // Every sign flip; ties within rounding of the observed sum count as extreme.
    const double slack = 1e-12 * magnitude;
    const size_t flips = size_t{1} << test.n;
    size_t greater = 0, extreme = 0;
    for (size_t mask = 0; mask < flips; ++mask) {
      double flipped = 0;
      for (size_t i = 0; i < test.n; ++i)
        flipped += (mask >> i & 1) ? -differences[i] : differences[i];
      if (flipped >= sum - slack) ++greater;
      if (std::abs(flipped) >= std::abs(sum) - slack) ++extreme;
    }
    test.p_greater = static_cast<double>(greater) / static_cast<double>(flips);
    test.p_value = static_cast<double>(extreme) / static_cast<double>(flips);
  } else if (squares > 0) {
    // The sum's sign-flip spread is sqrt(squares); the trimmed mean stands for the sum of
    // the n - 2g values it keeps, scaled to n.
    const double n = static_cast<double>(test.n);
    const double z = test.mean * (n - 2 * static_cast<double>(t.cut)) / std::sqrt(squares);
    test.p_greater = normal_upper_tail(z);
    test.p_value = std::min(1.0, 2 * normal_upper_tail(std::abs(z)));
  } else {
    test.p_greater = test.p_value = 1;  // all zero
  }
  return test;
}

double trimmed_mean(std::vector<double> sample, double trim) {
  if (sample.empty()) return 0;
  std::sort(sample.begin(), sample.end());
  const auto cut = static_cast<size_t>(std::floor(trim * static_cast<double>(sample.size())));
  double sum = 0;
  size_t count = 0;
  for (size_t i = cut; i + cut < sample.size(); ++i, ++count) sum += sample[i];
  return count ? sum / static_cast<double>(count) : quantile_of_sorted(sample, 0.5);
}

SeparationTest separation_test(const std::vector<double>& slower, const std::vector<double>& faster,
                               double factor) {
  SeparationTest test;
  test.n = std::min(slower.size(), faster.size());
  if (test.n < kEarliestSeparationLook) return test;
  const double lowest = *std::min_element(slower.begin(), slower.begin() + test.n);
  const double highest = *std::max_element(faster.begin(), faster.begin() + test.n);
  test.separated = lowest > highest * factor;
  // C(2n, n) in doubles: exact far past any round count a race reaches.
  double splits = 1;
  for (size_t k = 1; k <= test.n; ++k)
    splits = splits * static_cast<double>(test.n + k) / static_cast<double>(k);
  test.p_value = std::min(1.0, static_cast<double>(test.n - kEarliestSeparationLook + 1) / splits);
  return test;
}

}  // namespace tunescope::tuner
