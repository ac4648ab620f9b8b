// Whole tunes on tiny lenet5: the sweep survives bad candidates and records them, the
// clearly slower candidate loses (ordering with a huge margin, no time thresholds), the
// per-layer strategy's find never picks the slow or the wrong algorithm, the budget
// stops new candidates, and a tune with no success is an error.
#include "core/tuner/Tuner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Ranking.h"
#include "core/tuner/StoredTune.h"
#include "core/tuner/TuneContext.h"

namespace tunescope::tuner {
namespace {

TuneOptions tiny_tune(std::vector<std::string> algorithms) {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  // Unbound only: a test that adds streams gets no bound twins (SearchSpaceTest covers them).
  o.knobs.set(knobs::cpu_binding, std::vector<CpuBinding>{CpuBinding::off});
  o.algorithms = std::move(algorithms);
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.find.repetitions = 2;
  o.racing = false;  // every ok candidate fully measured: the leaders are settled in rounds
  return o;
}

const TrialResult* find_trial(const TuneReport& report, const std::string& algorithm) {
  for (const auto& t : report.trials)
    if (t.config.conv.default_algorithm == algorithm && t.config.conv.per_layer.empty()) return &t;
  return nullptr;
}

TEST(Tuner, SweepGoesOnPastWrongThrowingAndUnsupportedCandidatesAndRecordsThem) {
  const test_support::TempResultsDb file("tuner-sweep.sqlite");
  ResultsDb db(file.path);
  TuneOptions o = tiny_tune(
      {test_support::kWrong, test_support::kThrows, test_support::kConv1Only, "gemm", "direct"});
  const TuneReport report = Tuner(o, &db).run();

  ASSERT_NE(find_trial(report, test_support::kWrong), nullptr);
  EXPECT_EQ(find_trial(report, test_support::kWrong)->status, TrialStatus::invalid);
  EXPECT_EQ(find_trial(report, test_support::kThrows)->status, TrialStatus::failed);
  EXPECT_EQ(find_trial(report, test_support::kConv1Only)->status, TrialStatus::skipped);
  EXPECT_EQ(find_trial(report, "gemm")->status, TrialStatus::ok);  // measured after the failures
  ASSERT_TRUE(report.baseline_trial());
  EXPECT_EQ(report.baseline_trial()->config.conv.default_algorithm, "direct");
  ASSERT_TRUE(report.best_trial());
  EXPECT_EQ(report.best_trial()->status, TrialStatus::ok);
  const std::string winner = report.winner().config.conv.default_algorithm;
  EXPECT_TRUE(winner == "gemm" || winner == "direct") << winner;
  EXPECT_TRUE(report.winner().remeasured);
  EXPECT_TRUE(report.winner().trace);
  EXPECT_TRUE(report.baseline_trial()->trace);

  // One row per candidate plus the two interleaved re-measurements.
  const auto rows = db.trials();
  EXPECT_EQ(rows.size(), report.trials.size() + 2);
  size_t invalid = 0;
  for (const auto& r : rows) invalid += r.status == TrialStatus::invalid;
  EXPECT_EQ(invalid, 1u);
  const RunConfig tuned = report.tuned_config();
  ASSERT_TRUE(tuned.measured);
  EXPECT_EQ(tuned.measured->strategy, "exhaustive");
  EXPECT_EQ(tuned.measured->strategy_reason, "requested (strategy exhaustive)");
  EXPECT_GT(tuned.measured->speedup_vs_baseline, 0);
}

TEST(Tuner, ExhaustivePicksTheFastestWhenOneIsClearlySlower) {
  // test-slow sleeps 20 ms in each of its 6 conv passes per step; direct's step takes ~1 ms.
  const TuneReport report = Tuner(tiny_tune({test_support::kSlow, "direct"})).run();
  EXPECT_EQ(report.winner().config.conv.default_algorithm, "direct");
  const TrialResult* slow = find_trial(report, test_support::kSlow);
  ASSERT_TRUE(slow && slow->status == TrialStatus::ok);
  EXPECT_LT(slow->figures.median_eps, report.winner().figures.median_eps);
}

TEST(Tuner, PerLayerFindNeverPicksTheSlowOrTheWrongAlgorithm) {
  TuneOptions o =
      tiny_tune({test_support::kSlow, test_support::kWrong, test_support::kConv1Only, "direct"});
  o.strategy = Strategy::per_layer;
  const TuneReport report = Tuner(o).run();
  ASSERT_EQ(report.finds.size(), 2u);  // conv1, conv2 for the one (layout, threads)
  for (const LayerFind& f : report.finds) {
    EXPECT_NE(f.best, test_support::kSlow) << f.layer;
    EXPECT_NE(f.best, test_support::kWrong) << f.layer;
    for (const AlgorithmTiming& t : f.timings) {
      if (t.algorithm == test_support::kWrong) {
        EXPECT_NE(t.skip_reason.find("wrong results"), std::string::npos) << t.skip_reason;
      }
      if (t.algorithm == test_support::kConv1Only && f.layer == "conv2") {
        EXPECT_NE(t.skip_reason.find("only one input channel"), std::string::npos) << t.skip_reason;
      }
    }
  }
  for (const auto& t : report.trials) {
    EXPECT_NE(t.config.conv.for_layer("conv1"), test_support::kSlow);
    EXPECT_NE(t.config.conv.for_layer("conv2"), test_support::kSlow);
  }
  EXPECT_EQ(report.winner().status, TrialStatus::ok);
}

TEST(Tuner, PerLayerCrossesItsPicksWithTheConcurrencyKnobs) {
  TuneOptions o = tiny_tune({"direct", "gemm"});
  o.strategy = Strategy::per_layer;
  o.knobs.set(knobs::streams, std::vector<int>{1, 2});
  o.knobs.set(knobs::async_update, std::vector<bool>{false, true});
  const TuneReport report = Tuner(o).run();
  // The find's picks race in the first stage with each of the 4 knob settings; the other
  // candidates of the second stage only with the settings of the first stage's fastest
  // survivor (second_stage_candidates).
  std::map<std::string, std::set<std::pair<int, bool>>> knobs_of;
  for (const auto& t : report.trials) {
    RunConfig choice = t.config;
    knobs::set_concurrency(choice.knobs, {});
    knobs_of[choice.label()].insert(
        {t.config.concurrency().streams, t.config.concurrency().async_update});
  }
  // The baseline (nchw direct, one lane) races besides, so its algorithm choice has its own
  // setting too: 1 or 2 settings as a second-stage candidate, 4 when the find picked it
  // (timing decides which).
  const std::string baseline = report.baseline_trial()->config.label();
  size_t crossed = 0;
  for (const auto& [choice, knobs] : knobs_of) {
    crossed += knobs.size() == 4;
    if (choice == baseline)
      EXPECT_TRUE(knobs.size() == 4 || knobs.size() <= 2) << choice << ": " << knobs.size();
    else
      EXPECT_TRUE(knobs.size() == 4 || knobs.size() == 1) << choice << ": " << knobs.size();
  }
  EXPECT_GE(crossed, 1u);
}

TEST(Tuner, BudgetStopsNewCandidatesButTheBaselineRuns) {
  TuneOptions o = tiny_tune({"direct", "gemm", "fft-fftw"});
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW, Layout::NHWC});
  o.budget_seconds = 1e-9;
  const TuneReport report = Tuner(o).run();
  EXPECT_TRUE(report.budget_exhausted);
  size_t ok = 0, budget_skipped = 0;
  for (const auto& t : report.trials) {
    ok += t.status == TrialStatus::ok;
    budget_skipped += t.reason.find("not started: budget ") != std::string::npos;
  }
  EXPECT_EQ(ok, 1u);
  EXPECT_EQ(budget_skipped, report.trials.size() - 1);
  EXPECT_EQ(report.winner().config, report.baseline_trial()->config);
}

TEST(Tuner, NoSuccessfulCandidateIsAnError) {
  TuneOptions o = tiny_tune({"direct", "gemm"});
  o.base.sgd.learning_rate = 1e30f;  // the first step checks out, the next ones diverge
  o.measure.warmup = 2;
  try {
    Tuner(o).run();
    FAIL() << "a tune without success returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_NE(std::string(e.what()).find("no candidate succeeded"), std::string::npos) << e.what();
  }
}

TEST(Tuner, TiesGoToTheSimplerConfig) {
  RunConfig plain;
  RunConfig overridden = plain;
  overridden.conv.per_layer["conv2"] = "gemm";
  RunConfig nhwc = plain;
  knobs::layout.set(nhwc.knobs, Layout::NHWC);
  RunConfig threads = plain;
  knobs::threads.set(threads.knobs, 2);
  EXPECT_TRUE(simpler(plain, overridden));
  EXPECT_TRUE(simpler(nhwc, overridden));
  EXPECT_TRUE(simpler(plain, nhwc));
  EXPECT_TRUE(simpler(threads, nhwc));
  EXPECT_TRUE(simpler(plain, threads));
  EXPECT_FALSE(simpler(plain, plain));
}

TEST(Tuner, RejectsBadOptions) {
  EXPECT_THROW(parse_strategy("random"), Error);
  TuneOptions o = tiny_tune({"direct"});
  o.measure.steps = 0;
  EXPECT_THROW(Tuner{o}, Error);
  // The adaptive timing's bounds are checked before anything runs.
  auto refused = [](auto change, const std::string& option) {
    TuneOptions bad = tiny_tune({"direct"});
    change(bad.measure);
    try {
      Tuner tuner(bad);
      ADD_FAILURE() << option << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
    }
  };
  refused([](MeasureOptions& m) { m.max_steps = 1; }, "max_steps must");  // below steps 2
  refused([](MeasureOptions& m) { m.max_steps = kMaxTimedSteps + 1; }, "max_steps must");
  refused([](MeasureOptions& m) { m.delta = 0; }, "delta must");
  refused([](MeasureOptions& m) { m.delta = 2; }, "delta must");
  refused([](MeasureOptions& m) { m.max_timing_seconds = 0; }, "max_timing_seconds must");
  refused([](MeasureOptions& m) { m.max_timing_seconds = kMaxTimingSeconds * 2; },
          "max_timing_seconds must");
  o = tiny_tune({"strassen"});
  EXPECT_THROW(Tuner(o).run(), Error);
}

// Racing: test-slow (20 ms per pass) is measured after the baseline, direct, and is
// slower than it with confidence once its interval exists: raced out, recorded ok with
// its figures and the stop rule, ranked below the fully measured, never the winner.
TEST(Tuner, ARacedOutCandidateIsRecordedOkAndNeverWins) {
  const test_support::TempResultsDb file("tuner-racing.sqlite");
  ResultsDb db(file.path);
  TuneOptions o = tiny_tune({"direct", test_support::kSlow});
  o.racing = true;
  // A delta no interval reaches: test-slow's sleep-paced steps could otherwise converge
  // at the 6 steps where racing can first act (convergence is checked first).
  o.measure.delta = 1e-4;
  const TuneReport report = Tuner(o, &db).run();
  const TrialResult* slow = find_trial(report, test_support::kSlow);
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->status, TrialStatus::ok) << slow->reason;
  EXPECT_EQ(slow->figures.stop, StopRule::raced_out);
  EXPECT_GE(slow->figures.steps, 6) << "no interval, no racing";
  EXPECT_GT(slow->figures.median_eps, 0);
  // Its reason names what it was compared on: the leader (direct) as measured then.
  const TrialResult& leader = report.winner();
  EXPECT_EQ(slow->reason.rfind(kSweepRaceReason, 0), 0u) << slow->reason;
  EXPECT_NE(slow->reason.find(cat("the speed of ", leader.config.label(), " as measured then")),
            std::string::npos)
      << slow->reason;
  EXPECT_EQ(slow->reason, sweep_race_reason(slow->figures, leader));
  EXPECT_EQ(report.winner().config.conv.default_algorithm, "direct");
  EXPECT_EQ(report.decision, kOnlyFullyMeasuredDecision);
  ASSERT_EQ(report.ranking.size(), 2u);
  EXPECT_EQ(report.trials[report.ranking.back()].config.conv.default_algorithm,
            test_support::kSlow);
  bool stored = false;
  for (const auto& row : db.trials())
    if (row.config_json == to_json_text(slow->config)) {
      stored = true;
      EXPECT_EQ(row.status, TrialStatus::ok);
      EXPECT_EQ(row.figures.stop, StopRule::raced_out);
      EXPECT_EQ(row.figures.eps_low, slow->figures.eps_low);
      EXPECT_EQ(row.reason, slow->reason);
    }
  EXPECT_TRUE(stored);
  // `report` reads the same ranking and decision back.
  const auto [machine, problem] = db.tuned_pairs().front();
  const TuneReport back = stored_tune(db, machine, problem);
  ASSERT_TRUE(back.best_trial());
  EXPECT_EQ(back.best_trial()->config, report.winner().config);
  EXPECT_EQ(back.decision, report.decision);
  ASSERT_EQ(back.ranking.size(), 2u);
  EXPECT_EQ(back.trials[back.ranking.back()].figures.stop, StopRule::raced_out);
}

// The winner comes from interleaved rounds among the leaders and the decision names the
// test, the effect and p; the leaders' figures are the rounds', in the ranking first.
TEST(Tuner, LeadersAreSettledInInterleavedRoundsByTheSignFlipTest) {
  TuneOptions o = tiny_tune({"direct", "gemm"});
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW, Layout::NHWC});
  const TuneReport report = Tuner(o).run();
  size_t settled = 0, dropped = 0;  // still racing at the end / dropped from the rounds
  for (const TrialResult& t : report.trials) {
    if (t.remeasured) {
      ++settled;
      EXPECT_EQ(t.figures.stop, StopRule::interleaved);
      EXPECT_GE(t.figures.steps, 6);  // the sign-flip test's minimum of rounds
    } else if (t.reason.rfind(kRemeasureReason, 0) == 0) {
      ++dropped;
      EXPECT_EQ(t.figures.stop, StopRule::raced_out);
      EXPECT_GE(t.figures.steps, static_cast<int64_t>(kEarliestSeparationLook));
    } else {
      continue;
    }
    EXPECT_LE(t.figures.steps, o.measure.max_steps);
  }
  EXPECT_GE(settled, 1u);
  EXPECT_GE(settled + dropped, 2u);
  EXPECT_LE(settled + dropped, kMaxSettled);
  // The rounds' members rank first, survivors and race-outs together by their figures.
  for (size_t r = 0; r < settled + dropped; ++r)
    EXPECT_TRUE(in_final_rounds(report.trials[report.ranking[r]])) << r;
  EXPECT_TRUE(report.winner().remeasured);
  EXPECT_NE(report.decision.find("mean paired log step-time ratio"), std::string::npos)
      << report.decision;
  EXPECT_NE(report.decision.find("p = "), std::string::npos) << report.decision;
}

// The rounds report as they go: after every round, its number (from 1 in each stage, one
// more each time), the stage's members, those still racing and those new to the tune
// (exhaustive's rounds re-measure trials of its sweep, so none joins). Every trial is
// announced under the number it is recorded with, the rounds' new members too.
TEST(Tuner, TheRoundsReportEveryRoundAsTheyGo) {
  for (Strategy strategy : {Strategy::exhaustive, Strategy::per_layer}) {
    TuneOptions o = tiny_tune({"direct", "gemm"});
    o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW, Layout::NHWC});
    o.strategy = strategy;
    std::vector<RoundsProgress> seen;
    std::vector<size_t> indices;
    std::map<size_t, std::string> started, finished;  // trial index -> candidate
    const TuneReport report = Tuner(o).run([&](const TuneProgress& p) {
      if (!p.rounds) {
        (p.last ? finished : started)[p.index] = p.candidate;
        return;
      }
      EXPECT_TRUE(p.candidate.empty());
      EXPECT_EQ(p.last, nullptr);
      seen.push_back(*p.rounds);
      indices.push_back(p.index);
    });
    ASSERT_FALSE(seen.empty()) << to_string(strategy);
    EXPECT_EQ(seen.front().round, 1u);
    size_t most_rounds = 0;
    for (size_t i = 0; i < seen.size(); ++i) {
      const RoundsProgress& r = seen[i];
      if (i > 0 && r.round != 1) {
        EXPECT_EQ(r.round, seen[i - 1].round + 1) << i;
      }
      EXPECT_GE(r.members, 2u);
      EXPECT_LE(r.racing, r.members);
      EXPECT_GE(r.racing, 1u);
      EXPECT_LE(r.joining, r.members);
      // Exhaustive re-measures its sweep's trials; per-layer's first stage adds every
      // member, its second those that did not race in the first.
      const bool first_stage = std::none_of(seen.begin(), seen.begin() + static_cast<long>(i),
                                            [](const RoundsProgress& s) { return s.round == 1; });
      if (strategy == Strategy::exhaustive) {
        EXPECT_EQ(r.joining, 0u);
      } else if (first_stage) {
        EXPECT_EQ(r.joining, r.members);
      }
      EXPECT_EQ(r.least, 6u);  // the sign-flip test's minimum (steps 2)
      EXPECT_EQ(r.most, static_cast<size_t>(o.measure.max_steps));
      EXPECT_LE(indices[i], report.trials.size());
      most_rounds = std::max(most_rounds, r.round);
    }
    // Every trial was announced under its own number, the rounds' new members too.
    EXPECT_EQ(started, finished) << to_string(strategy);
    // Exhaustive's one stage: its winner ran every round reported.
    if (strategy == Strategy::exhaustive) {
      EXPECT_EQ(most_rounds, static_cast<size_t>(report.winner().figures.steps));
    }
  }
}

// The cost accounting (TuneCost.h): every phase is timed once, the measurement cost is
// choice + finds + sweep + rounds and lies within the tune's seconds with the reference;
// exhaustive spends its measurement in the sweep and the rounds, per-layer in its finds
// and the rounds, never in a sweep (it sweeps nothing: the rounds time its candidates).
TEST(Tuner, CostIsAccountedPerPhaseAndTheMeasurementCostIsTheirSum) {
  for (Strategy strategy : {Strategy::exhaustive, Strategy::per_layer}) {
    TuneOptions o = tiny_tune({"direct", "gemm"});
    o.strategy = strategy;
    const TuneReport report = Tuner(o).run();
    const TuneCost& c = report.cost;
    const PhaseCost total = c.measurement();
    EXPECT_DOUBLE_EQ(total.wall_seconds, c.choice.wall_seconds + c.finds.wall_seconds +
                                             c.sweep.wall_seconds + c.rounds.wall_seconds);
    EXPECT_DOUBLE_EQ(total.cpu_seconds, c.choice.cpu_seconds + c.finds.cpu_seconds +
                                            c.sweep.cpu_seconds + c.rounds.cpu_seconds);
    for (const PhaseCost* p : {&c.reference, &c.choice, &c.finds, &c.sweep, &c.rounds}) {
      EXPECT_GE(p->wall_seconds, 0);
      EXPECT_GE(p->cpu_seconds, 0);
    }
    EXPECT_GT(c.reference.wall_seconds, 0);
    EXPECT_GT(c.rounds.wall_seconds, 0) << "the leaders were settled in rounds";
    // Phases do not overlap: with the reference they fit in the tune's own seconds.
    EXPECT_LE(c.reference.wall_seconds + total.wall_seconds, report.seconds + 1e-6);
    if (strategy == Strategy::exhaustive) {
      EXPECT_GT(c.sweep.wall_seconds, 0);
    } else {
      EXPECT_GT(c.finds.wall_seconds, 0);
      EXPECT_LT(c.sweep.wall_seconds, c.rounds.wall_seconds);
    }
    const std::string summary = c.summary();
    for (const char* phase :
         {"reference ", "choice ", "finds ", "sweep ", "rounds ", "measurement cost "})
      EXPECT_NE(summary.find(phase), std::string::npos) << summary;
  }
}

TEST(Tuner, CandidateFilterSeesTheListAndThePriorTrialsAndDecidesWhatIsMeasured) {
  const test_support::TempResultsDb file("tuner-filter.sqlite");
  ResultsDb db(file.path);
  TuneOptions o = tiny_tune({"direct", "gemm", test_support::kSlow});
  Tuner(o, &db).run();  // the first tune: its trials are the second one's prior
  size_t seen = 0, prior_rows = 0;
  o.resume = false;
  o.filter = [&](std::vector<Candidate> candidates, TuneContext& context) {
    seen = candidates.size();
    prior_rows = context.prior().rows().size();
    // Keep the baseline (first) and gemm: a pruner that predicted the rest slower.
    std::erase_if(candidates, [&](const Candidate& c) {
      return &c != &candidates.front() && c.config.conv.default_algorithm != "gemm";
    });
    return candidates;
  };
  const TuneReport report = Tuner(o, &db).run();
  EXPECT_EQ(seen, 3u);  // direct (the baseline), gemm, test-slow
  EXPECT_GE(prior_rows, 3u);
  ASSERT_EQ(report.trials.size(), 2u);
  EXPECT_EQ(report.trials[0].config.conv.default_algorithm, "direct");
  EXPECT_EQ(report.trials[1].config.conv.default_algorithm, "gemm");
  EXPECT_EQ(report.reused, 0u);
}

}  // namespace
}  // namespace tunescope::tuner
