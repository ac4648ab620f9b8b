// The ranking rule, the choice of the leaders to settle and the verdict of their rounds.
#include "core/tuner/Ranking.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {

namespace {

// "2.31%" / "0.0042": figures for the decision text, to 3 significant digits.
std::string figure(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}
std::string percent(double share) { return figure(share * 100) + "%"; }

bool overlaps(const TimingFigures& a, const TimingFigures& b) {
  if (!a.has_interval() || !b.has_interval()) return true;
  return a.eps_low <= b.eps_high && b.eps_low <= a.eps_high;
}

// A round a member did not run: NaN (kNotInRound), the rounds of an earlier stage that
// only some members ran.
bool ran(double seconds) { return !std::isnan(seconds); }

// The two members' round times over the rounds both ran.
std::pair<std::vector<double>, std::vector<double>> both_ran(const std::vector<double>& a,
                                                             const std::vector<double>& b) {
  std::pair<std::vector<double>, std::vector<double>> out;
  for (size_t r = 0; r < a.size() && r < b.size(); ++r)
    if (ran(a[r]) && ran(b[r])) {
      out.first.push_back(a[r]);
      out.second.push_back(b[r]);
    }
  return out;
}

// Round by round, log(member j's step time / member base's): the paired samples every
// comparison of the rounds tests, over the rounds both ran.
std::vector<double> paired_log_ratios(const std::vector<std::vector<double>>& round_seconds,
                                      size_t j, size_t base) {
  const auto [times, base_times] = both_ran(round_seconds[j], round_seconds[base]);
  std::vector<double> out;
  for (size_t r = 0; r < times.size(); ++r) out.push_back(std::log(times[r] / base_times[r]));
  return out;
}

// The indifference zone's claim about a member: "with confidence 1 - level, it is not
// more than delta faster than the fastest" (`log_ratios`: its paired log step-time ratios
// to the fastest). The claim reads only the low end of the mean's interval, so the bound
// is one-sided at `level`, as race_drops' claim "slower" is one-sided at the same level.
MeanInterval one_sided(const std::vector<double>& log_ratios, double level, double trim) {
  return mean_interval(log_ratios, 1 - 2 * level, trim);
}

// The ratio's lower bound of that interval; 0 while there are too few rounds for one.
double zone_low(const MeanInterval& interval) {
  return interval.bounded() ? std::exp(interval.low) : 0;
}

bool within_zone(double low, double delta) { return low > 0 && 1 - low < delta; }

// The members of `members` other than `fastest`, in order, with their paired log ratios to
// it: what the zone's claims and the verdict's comparisons read.
struct AgainstFastest {
  std::vector<size_t> others;
  std::vector<std::vector<double>> log_ratios;
};
AgainstFastest against_fastest(const std::vector<std::vector<double>>& round_seconds,
                               const std::vector<size_t>& members, size_t fastest) {
  AgainstFastest out;
  for (size_t j : members)
    if (j != fastest) {
      out.others.push_back(j);
      out.log_ratios.push_back(paired_log_ratios(round_seconds, j, fastest));
    }
  return out;
}

// The indifference zone's claims against the fastest, one per other member (`log_ratios`:
// each one's paired log ratios to the fastest), under Holm's step-down: with k claims not
// yet shown, each is tested at alpha / k, and every claim shown lowers k for the rest. So
// the claims hold all at once at alpha, as when each is tested at alpha / (m - 1)
// (Bonferroni), and never fewer are shown: members already shown far from the pick no
// longer make a close member's bound stricter.
struct ZoneClaim {
  double mean = 0;   // the trimmed mean log ratio
  double low = 0;    // the ratio's one-sided lower bound at `level` (0: too few rounds)
  double level = 0;  // where it was shown, or where it is tested next
  bool shown = false;
};
std::vector<ZoneClaim> zone_claims(const std::vector<std::vector<double>>& log_ratios, double delta,
                                   double alpha, double trim) {
  std::vector<ZoneClaim> claims(log_ratios.size());
  size_t open = claims.size();
  for (bool progress = true; progress && open > 0;) {
    progress = false;
    const double level = alpha / static_cast<double>(open);
    for (size_t j = 0; j < claims.size(); ++j) {
      if (claims[j].shown) continue;
      const MeanInterval bound = one_sided(log_ratios[j], level, trim);
      claims[j] = {.mean = bound.mean, .low = zone_low(bound), .level = level, .shown = false};
      if (within_zone(claims[j].low, delta)) {
        claims[j].shown = true;
        --open;
        progress = true;
      }
    }
  }
  return claims;
}

// The rounds in all at which an open comparison (`log_ratios` against the fastest) would
// be decided were its mean and spread to hold: the fewer of what its 95% interval needs to
// clear 0 (significant) and what its one-sided zone bound at `zone_level` needs to rise
// above log(1 - delta). 0 while there are too few rounds for an interval.
size_t rounds_to_decide(const std::vector<double>& log_ratios, double delta, double zone_level,
                        double trim) {
  const size_t n = log_ratios.size();
  const MeanInterval now = mean_interval(log_ratios, kConfidence, trim);
  if (!now.bounded()) return 0;
  double rounds = INFINITY;
  if (now.mean != 0)
    rounds = differences_for_half_width(now, n, kConfidence, kConfidence, std::abs(now.mean));
  if (const double room = now.mean - std::log1p(-delta); room > 0)
    rounds =
        std::min(rounds, differences_for_half_width(now, n, kConfidence, 1 - 2 * zone_level, room));
  constexpr double kMostToSay = 1e9;  // beyond it, "about 1e9" says as much
  return std::max(n + 1, static_cast<size_t>(std::ceil(std::min(rounds, kMostToSay))));
}

}  // namespace

bool simpler(const RunConfig& a, const RunConfig& b) {
  // Fewer per-layer overrides, then fewer knobs away from their defaults (nhwc, streams,
  // async update, fft_tile ...), then fewer threads, then smaller counts in catalog order.
  auto key = [](const RunConfig& c) {
    size_t changed = 0;
    std::vector<int64_t> counts;
    for (const KnobSpec& spec : KnobCatalog::instance().specs()) {
      if (spec.key == knobs::threads.key()) continue;
      if (c.knobs.differs_from_default(spec.key)) ++changed;
      if (spec.type == KnobType::integer) counts.push_back(std::stoll(c.knobs.text(spec.key)));
    }
    return std::tuple(c.override_count(), changed, c.threads(), counts);
  };
  return key(a) < key(b);
}

bool in_final_rounds(const TrialResult& trial) {
  return trial.remeasured || (trial.figures.stop == StopRule::raced_out &&
                              trial.reason.rfind(kRemeasureReason, 0) == 0);
}

std::vector<RankTier> rank_tiers(const std::vector<TrialResult>& trials) {
  int64_t legacy_steps = 0;  // the most steps of an older build's ok row
  for (const TrialResult& t : trials)
    if (t.status == TrialStatus::ok && !t.remeasured && t.figures.stop == StopRule::none)
      legacy_steps = std::max(legacy_steps, t.figures.steps);
  std::vector<RankTier> tiers;
  for (const TrialResult& t : trials) {
    const StopRule stop = t.figures.stop;
    if (t.status != TrialStatus::ok)
      tiers.push_back(RankTier::cut_short);
    else if (in_final_rounds(t))
      tiers.push_back(RankTier::remeasured);
    else if (stop == StopRule::none)
      tiers.push_back(t.figures.steps < legacy_steps ? RankTier::cut_short : RankTier::full);
    else
      tiers.push_back(fully_measured(stop) ? RankTier::full : RankTier::cut_short);
  }
  return tiers;
}

std::vector<size_t> rank_ok_trials(const std::vector<TrialResult>& trials) {
  const std::vector<RankTier> tiers = rank_tiers(trials);
  std::vector<size_t> ranked;
  for (size_t i = 0; i < trials.size(); ++i)
    if (trials[i].status == TrialStatus::ok) ranked.push_back(i);
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    const TimingFigures& x = trials[a].figures;
    const TimingFigures& y = trials[b].figures;
    if (tiers[a] != tiers[b]) return tiers[a] < tiers[b];
    if (x.stop == StopRule::none && y.stop == StopRule::none && x.steps != y.steps)
      return x.steps > y.steps;
    return x.median_eps > y.median_eps;
  });
  return ranked;
}

std::vector<size_t> ranking_led_by(const std::vector<TrialResult>& trials, size_t winner) {
  std::vector<size_t> ranked = rank_ok_trials(trials);
  const auto at = std::find(ranked.begin(), ranked.end(), winner);
  if (at == ranked.end())
    fail(ErrorKind::runtime, "the declared winner (trial ", winner, ") is not an ok trial");
  std::rotate(ranked.begin(), at, at + 1);
  return ranked;
}

std::vector<size_t> settle_candidates(const std::vector<TrialResult>& trials, size_t top,
                                      size_t cap) {
  const std::vector<RankTier> tiers = rank_tiers(trials);
  std::vector<size_t> full, others;
  for (size_t i : rank_ok_trials(trials))
    if (tiers[i] == RankTier::full)
      full.push_back(i);
    else if (tiers[i] == RankTier::cut_short && trials[i].figures.stop == StopRule::raced_out)
      others.push_back(i);
  if (full.size() < 2) return {};
  std::vector<size_t> group;
  for (size_t k = 0; k < full.size() && group.size() < std::min(top, cap); ++k)
    group.push_back(full[k]);
  for (size_t k = group.size(); k < full.size(); ++k) others.push_back(full[k]);
  std::stable_sort(others.begin(), others.end(), [&](size_t a, size_t b) {
    return trials[a].figures.median_eps > trials[b].figures.median_eps;
  });
  for (size_t i : others)
    if (group.size() < cap && overlaps(trials[i].figures, trials[full[0]].figures))
      group.push_back(i);
  return group;
}

std::string sweep_race_reason(const TimingFigures& figures, const TrialResult& leader) {
  const TimingFigures& l = leader.figures;
  char ratio[32], rate[96];
  std::snprintf(ratio, sizeof ratio, "%.2fx",
                l.median_eps > 0 ? figures.median_eps / l.median_eps : 0.0);
  std::snprintf(rate, sizeof rate, "%.1f [%.1f, %.1f] ex/s", l.median_eps, l.eps_low, l.eps_high);
  return cat(kSweepRaceReason, ratio, " the speed of ", leader.config.label(),
             " as measured then (", rate, "): slower with confidence");
}

std::vector<size_t> second_stage_candidates(const std::vector<RunConfig>& members,
                                            const std::vector<double>& members_eps,
                                            const std::vector<RunConfig>& candidates) {
  auto same_run_knobs = [](const RunConfig& a, const RunConfig& b) {
    for (const KnobSpec& spec : KnobCatalog::instance().specs())
      if (spec.scope == KnobScope::run && a.knobs.text(spec.key) != b.knobs.text(spec.key))
        return false;
    return true;
  };
  std::vector<size_t> out;
  for (size_t k = 0; k < candidates.size(); ++k) {
    const RunConfig* fastest = nullptr;
    double fastest_eps = 0;
    for (size_t m = 0; m < members.size(); ++m)
      if (members[m].layout() == candidates[k].layout() &&
          members[m].threads() == candidates[k].threads() &&
          (!fastest || members_eps.at(m) > fastest_eps)) {
        fastest = &members[m];
        fastest_eps = members_eps.at(m);
      }
    if (fastest) {
      if (same_run_knobs(*fastest, candidates[k])) out.push_back(k);
      continue;
    }
    // A (layout, threads) with no survivor: a survivor's own algorithms there (another
    // thread count's find's picks, with every run knob): a find beside another process
    // can pick wrongly at one thread count, and its (layout, threads) then lost the
    // first stage with picks the other count's find would not have made.
    if (std::any_of(members.begin(), members.end(), [&](const RunConfig& m) {
          return m.layout() == candidates[k].layout() && m.conv == candidates[k].conv;
        }))
      out.push_back(k);
  }
  return out;
}

std::vector<size_t> racing_members(const std::vector<std::vector<double>>& round_seconds) {
  size_t most = 0;
  for (const auto& series : round_seconds) most = std::max(most, series.size());
  std::vector<size_t> racing;
  for (size_t i = 0; i < round_seconds.size(); ++i)
    if (most > 0 && round_seconds[i].size() == most) racing.push_back(i);
  return racing;
}

std::optional<size_t> racing_leader_of(const std::vector<TrialResult>& trials) {
  const std::vector<RankTier> tiers = rank_tiers(trials);
  for (size_t i : rank_ok_trials(trials))
    if (tiers[i] == RankTier::full && trials[i].figures.has_interval()) return i;
  return std::nullopt;
}

std::vector<std::vector<double>> pooled_rounds(
    const std::vector<std::vector<double>>& mine,
    const std::vector<std::vector<std::vector<double>>>& theirs) {
  std::vector<std::vector<double>> pooled(mine.size());
  for (size_t member = 0; member < mine.size(); ++member) {
    const auto has = [&](const std::vector<std::vector<double>>& rank, size_t round) {
      return member < rank.size() && round < rank[member].size();
    };
    for (size_t round = 0;; ++round) {
      bool any = false;
      if (has(mine, round)) pooled[member].push_back(mine[member][round]), any = true;
      for (const auto& rank : theirs)
        if (has(rank, round)) pooled[member].push_back(rank[member][round]), any = true;
      if (!any) break;
    }
  }
  return pooled;
}

namespace {

// The member still racing that the rounds' statistic puts first: the lowest trimmed mean
// of its log round times less each round's mean over the members (a slow round of the
// machine then weighs on no one), moved on to any member whose trimmed mean paired log
// ratio against it is below 0, so that no comparison with the fastest reads "faster". With
// no trim this is the lowest mean log round time, which no pair contradicts.
size_t fastest_racing(const std::vector<std::vector<double>>& round_seconds,
                      const std::vector<size_t>& racing, double trim) {
  const size_t rounds = round_seconds[racing.front()].size();
  std::vector<double> level(rounds, 0);
  for (size_t r = 0; r < rounds; ++r) {
    size_t members = 0;
    for (size_t i : racing)
      if (ran(round_seconds[i][r])) {
        level[r] += std::log(round_seconds[i][r]);
        ++members;
      }
    if (members > 0) level[r] /= static_cast<double>(members);
  }
  size_t fastest = racing.front();
  double fastest_score = INFINITY;
  for (size_t i : racing) {
    std::vector<double> relative;
    for (size_t r = 0; r < rounds; ++r)
      if (ran(round_seconds[i][r])) relative.push_back(std::log(round_seconds[i][r]) - level[r]);
    if (const double score = trimmed_mean(relative, trim); score < fastest_score) {
      fastest_score = score;
      fastest = i;
    }
  }
  for (size_t moves = 0; moves < racing.size(); ++moves) {
    size_t faster = fastest;
    double most = 0;
    for (size_t j : racing)
      if (j != fastest)
        if (const double m = trimmed_mean(paired_log_ratios(round_seconds, j, fastest), trim);
            m < most) {
          most = m;
          faster = j;
        }
    if (faster == fastest) break;
    fastest = faster;
  }
  return fastest;
}

}  // namespace

namespace {

// Which test, if any, finds member j slower than the fastest by more than delta/2 at
// `level` (race_drops).
enum class SlowerBy { none, sign_flips, separation };
SlowerBy slower_by(const std::vector<std::vector<double>>& round_seconds, size_t j, size_t fastest,
                   double delta, double level, double trim) {
  // One-sided: the question is only whether j is slower (2^-n for n clearly slower
  // rounds, so a clear loser of five members leaves after 7 rounds, not 8).
  const SignFlipTest test =
      sign_flip_test(paired_log_ratios(round_seconds, j, fastest), kConfidence, trim);
  if (test.p_greater < level && std::exp(test.mean) > 1 + delta / 2) return SlowerBy::sign_flips;
  // Or every round of j above every round of the fastest by delta/2: a clear loser
  // leaves after 5 rounds, before the sign flips' first look (6 to 8 rounds).
  const auto [slower, faster] = both_ran(round_seconds[j], round_seconds[fastest]);
  const SeparationTest apart = separation_test(slower, faster, 1 + delta / 2);
  if (apart.separated && apart.p_value < level) return SlowerBy::separation;
  return SlowerBy::none;
}

// race_drops with the test that found each.
std::vector<std::pair<size_t, SlowerBy>> slower_members(
    const std::vector<std::vector<double>>& round_seconds, double delta, double alpha,
    double trim) {
  const std::vector<size_t> racing = racing_members(round_seconds);
  if (racing.size() < 2) return {};
  const size_t fastest = fastest_racing(round_seconds, racing, trim);
  const double level = alpha / static_cast<double>(racing.size() - 1);
  std::vector<std::pair<size_t, SlowerBy>> out;
  for (size_t j : racing)
    if (j != fastest)
      if (const SlowerBy by = slower_by(round_seconds, j, fastest, delta, level, trim);
          by != SlowerBy::none)
        out.emplace_back(j, by);
  return out;
}

}  // namespace

std::vector<size_t> race_drops(const std::vector<std::vector<double>>& round_seconds, double delta,
                               double alpha, double trim) {
  std::vector<size_t> drops;
  for (const auto& [j, by] : slower_members(round_seconds, delta, alpha, trim)) drops.push_back(j);
  return drops;
}

std::vector<size_t> indifferent_drops(const std::vector<RunConfig>& configs,
                                      const std::vector<std::vector<double>>& round_seconds,
                                      double delta, double alpha, double trim) {
  if (configs.size() != round_seconds.size())
    fail(ErrorKind::runtime, "indifferent_drops: ", configs.size(), " configs but ",
         round_seconds.size(), " round series");
  const std::vector<size_t> racing = racing_members(round_seconds);
  if (racing.size() < 2) return {};
  const size_t fastest = fastest_racing(round_seconds, racing, trim);
  const AgainstFastest against = against_fastest(round_seconds, racing, fastest);
  const std::vector<ZoneClaim> claims = zone_claims(against.log_ratios, delta, alpha, trim);
  std::vector<size_t> drops;
  for (size_t k = 0; k < against.others.size(); ++k) {
    const size_t j = against.others[k];
    if (claims[k].shown && claims[k].mean >= 0 && !simpler(configs[j], configs[fastest]))
      drops.push_back(j);
  }
  return drops;
}

RoundsVerdict rounds_verdict(const std::vector<RunConfig>& configs,
                             const std::vector<std::vector<double>>& round_seconds, double delta,
                             double alpha, double trim) {
  if (configs.size() != round_seconds.size() || configs.empty())
    fail(ErrorKind::runtime, "rounds_verdict: ", configs.size(), " configs but ",
         round_seconds.size(), " round series");
  const size_t rounds = round_seconds.front().size();
  for (const auto& series : round_seconds)
    if (series.size() != rounds)
      fail(ErrorKind::runtime, "rounds_verdict: round series of different lengths");
  RoundsVerdict verdict;
  std::vector<size_t> all(configs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  // No member's trimmed mean paired ratio against the fastest is below 1, so the verdict
  // never reads "X is faster, p < alpha: the fastest wins" with X losing (the median of
  // each series could disagree with the pairing so).
  verdict.fastest = fastest_racing(round_seconds, all, trim);
  verdict.winner = verdict.fastest;
  verdict.settled = true;
  const std::string& fastest = configs[verdict.fastest].label();
  const AgainstFastest against = against_fastest(round_seconds, all, verdict.fastest);
  // "Picking the fastest costs at most delta" must hold against every member at once.
  const std::vector<ZoneClaim> claims = zone_claims(against.log_ratios, delta, alpha, trim);
  std::string findings;
  for (size_t k = 0; k < against.others.size(); ++k) {
    const size_t j = against.others[k];
    PairedComparison c;
    c.other = j;
    const ZoneClaim& claim = claims[k];
    const std::vector<double>& log_ratios = against.log_ratios[k];
    c.test = sign_flip_test(log_ratios, kConfidence, trim);
    c.ratio = std::exp(c.test.mean);
    if (c.test.bounded()) {
      c.ratio_low = std::exp(c.test.low);
      c.ratio_high = std::exp(c.test.high);
    }
    c.significant = c.test.p_value < alpha;
    const bool bounded = c.ratio_high > 0;
    c.below_delta = bounded ? c.ratio_high - 1 < delta && 1 - c.ratio_low < delta
                            : std::abs(c.ratio - 1) < delta;
    c.zone_level = claim.level;
    c.zone_low = claim.low;
    c.settled = c.significant || claim.shown;
    if (!c.settled) c.rounds_to_decide = rounds_to_decide(log_ratios, delta, c.zone_level, trim);
    verdict.settled = verdict.settled && c.settled;
    verdict.rounds_to_decide = std::max(verdict.rounds_to_decide, c.rounds_to_decide);
    if (c.tie() && simpler(configs[j], configs[verdict.winner])) verdict.winner = j;
    findings += cat("; ", configs[j].label(), " is ", percent(std::abs(c.ratio - 1)),
                    c.ratio >= 1 ? " slower" : " faster",
                    c.ratio_high > 0 ? cat(" (ratio ", figure(c.ratio), ", 95% CI [",
                                           figure(c.ratio_low), ", ", figure(c.ratio_high), "])")
                                     : std::string(),
                    ", p = ", figure(c.test.p_value), c.significant ? " < " : " >= ", figure(alpha),
                    c.tie() ? cat(", below delta ", percent(delta), ": a tie")
                    : !c.significant && c.settled
                        ? cat(", in the indifference zone (one-sided bound ", figure(c.zone_low),
                              " > 1 - delta at ", figure(c.zone_level), ")")
                        : std::string(),
                    c.settled ? std::string()
                    : c.rounds_to_decide > 0
                        ? cat(", open (about ", c.rounds_to_decide, " rounds would decide it)")
                        : std::string(", open"));
    verdict.comparisons.push_back(c);
  }
  const std::string test = cat(trimmed_count(rounds, trim) > 0
                                   ? cat("test of the ", std::lround(trim * 100), "%-trimmed mean")
                                   : std::string("sign-flip test of the mean"),
                               " paired log step-time ratio over ", rounds,
                               " interleaved rounds, against the fastest, ", fastest, findings);
  const std::string open = verdict.settled ? std::string() : ": undecided (a comparison is open)";
  if (verdict.winner == verdict.fastest)
    verdict.decision =
        cat(test, open, verdict.settled ? ": the fastest wins" : ", the fastest so far wins");
  else
    verdict.decision = cat(test, open, ": tie rule (not significant and below delta): the simpler ",
                           configs[verdict.winner].label(), " wins");
  return verdict;
}

std::string undecided_ending(const RoundsVerdict& verdict, size_t rounds,
                             const std::vector<std::vector<double>>& member_rounds,
                             int64_t steps_a_turn, const std::string& cause) {
  std::string ending = cat("; the rounds stopped after ", rounds, " rounds ", cause);
  const auto mean_of = [&](size_t i) {
    if (i >= member_rounds.size() || member_rounds[i].empty()) return 0.0;
    double sum = 0;
    for (double seconds : member_rounds[i]) sum += seconds;
    return sum / static_cast<double>(member_rounds[i].size());
  };
  double round_seconds = mean_of(verdict.fastest);
  for (const PairedComparison& c : verdict.comparisons)
    if (!c.settled) round_seconds += mean_of(c.other);
  if (verdict.rounds_to_decide > rounds && round_seconds > 0) {
    const double more = static_cast<double>(verdict.rounds_to_decide - rounds) * round_seconds *
                        static_cast<double>(std::max<int64_t>(steps_a_turn, 1));
    ending += cat(": deciding every open comparison would take about ", verdict.rounds_to_decide,
                  " rounds in all at this spread, some ", figure(more), " s more of steps");
  }
  return ending;
}

bool open_only_where_raced_again(const std::vector<RunConfig>& configs,
                                 const RoundsVerdict& verdict,
                                 const std::vector<RunConfig>& next_stage) {
  const RunConfig& fastest = configs.at(verdict.fastest);
  const auto same_group = [&](const RunConfig& c) {
    return c.layout() == fastest.layout() && c.threads() == fastest.threads();
  };
  if (std::none_of(next_stage.begin(), next_stage.end(), same_group)) return false;
  return std::all_of(
      verdict.comparisons.begin(), verdict.comparisons.end(),
      [&](const PairedComparison& c) { return c.settled || same_group(configs.at(c.other)); });
}

RoundDrops round_drops(const std::vector<RunConfig>& configs,
                       const std::vector<std::vector<double>>& round_seconds, double delta,
                       double alpha, double trim) {
  RoundDrops drops;
  for (const auto& [j, by] : slower_members(round_seconds, delta, alpha, trim)) {
    drops.slower.push_back(j);
    if (by == SlowerBy::separation) drops.by_separation.push_back(j);
  }
  for (size_t i : indifferent_drops(configs, round_seconds, delta, alpha, trim))
    if (std::find(drops.slower.begin(), drops.slower.end(), i) == drops.slower.end())
      drops.indifferent.push_back(i);
  if (racing_members(round_seconds).size() < drops.slower.size() + drops.indifferent.size() + 2)
    return {};
  return drops;
}

std::vector<size_t> last_look_drops(const std::vector<std::vector<double>>& round_seconds,
                                    const RoundsVerdict& verdict, double delta, double alpha,
                                    double trim) {
  std::vector<size_t> drops = race_drops(round_seconds, delta, alpha, trim);
  // The verdict's own losers too: rounds that stop settled at 6 rounds stopped on its
  // two-sided test at alpha (6 of 6 rounds slower: p = 0.031), where race_drops needs
  // alpha / (m - 1) one-sided (1/64 > 0.0125 for 5 members), so they dropped no one.
  for (const PairedComparison& c : verdict.comparisons)
    if (c.significant && c.ratio > 1 + delta / 2) drops.push_back(c.other);
  std::sort(drops.begin(), drops.end());
  drops.erase(std::unique(drops.begin(), drops.end()), drops.end());
  std::erase_if(drops, [&](size_t d) { return d == verdict.winner || d == verdict.fastest; });
  return drops;
}

InterleavedVerdict legacy_interleaved_verdict(const TrialResult& first, const TrialResult& second) {
  const double a = first.figures.median_eps, b = second.figures.median_eps;
  const double gap = std::abs(a - b) / std::max(a, b);
  const double noise = std::max(first.figures.spread, second.figures.spread);
  if (gap <= noise)
    return {simpler(second.config, first.config),
            cat("tie within noise (gap ", gap * 100, "% <= spread ", noise * 100,
                "%): the simpler config wins")};
  return {b > a, cat("confirmed by interleaved re-measurement (gap ", gap * 100, "% > spread ",
                     noise * 100, "%)")};
}

}  // namespace tunescope::tuner
