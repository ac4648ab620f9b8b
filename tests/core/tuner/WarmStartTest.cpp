// Warm start from the results DB: the per-layer find reuses exactly the stored timings
// of the same machine, conv problem (shape and layout), threads and algorithm, from
// enough repetitions, whichever model found them; and a tune's stored trials are reused
// only for the same machine and problem.
#include <gtest/gtest.h>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/LayerTimingStore.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

ConvProblem problem(Layout layout = Layout::NCHW) {
  ConvProblem p;
  p.input = {8, 6, 14, 14};
  p.out_channels = 16;
  p.kernel_h = p.kernel_w = 5;
  p.layout = layout;
  return p;
}

AlgorithmTiming timing(const std::string& algorithm, double scale) {
  AlgorithmTiming t;
  t.algorithm = algorithm;
  t.passes = {1 * scale, 2 * scale, 3 * scale};
  t.median_ms = 6 * scale;
  return t;
}

MachineSignature other_cpu() {
  MachineSignature m = MachineSignature::local("cpu");
  m.cpu = "Some Other CPU @ 1 GHz";
  return m;
}

TEST(WarmStart, ReusesOnlyTheSameMachineProblemThreadsAlgorithmAndEnoughRepetitions) {
  const test_support::TempResultsDb file("warm-start-store.sqlite");
  ResultsDb db(file.path);
  const MachineSignature here = MachineSignature::local("cpu");
  LayerTimingStore elsewhere(db, other_cpu(), "resnet18-small");
  elsewhere.store(problem(), 1, 5, timing("direct", 100));  // another cpu
  elsewhere.flush();
  LayerTimingStore store(db, here, "lenet5");
  store.store(problem(), 2, 5, timing("direct", 200));  // other threads
  store.store(problem(Layout::NHWC), 1, 5,
              timing("direct", 300));                   // other layout: another conv problem
  store.store(problem(), 1, 5, timing("gemm", 400));    // other algorithm
  store.store(problem(), 1, 1, timing("direct", 500));  // a one-run probe
  EXPECT_FALSE(store.lookup(problem(), 1, "direct", 1)) << "kept until flushed";
  store.flush();

  EXPECT_FALSE(store.lookup(problem(), 1, "direct", 5));
  const std::optional<AlgorithmTiming> probe = store.lookup(problem(), 1, "direct", 1);
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->passes, (PassTimes{500, 1000, 1500}));

  LayerTimingStore another_model(db, here, "resnet18-small");
  another_model.store(problem(), 1, 5, timing("direct", 600));
  another_model.flush();
  const std::optional<AlgorithmTiming> found = store.lookup(problem(), 1, "direct", 5);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->passes, (PassTimes{600, 1200, 1800}));
  EXPECT_EQ(found->median_ms, 3600);
  EXPECT_EQ(store.lookup(problem(), 2, "direct", 5)->median_ms, 1200);
  EXPECT_EQ(store.lookup(problem(Layout::NHWC), 1, "direct", 5)->median_ms, 1800);
  EXPECT_EQ(store.reused(), 4u);
  EXPECT_EQ(store.stored(), 4u);
}

// lenet5 on 1-channel and on 3-channel fake data: two problems (the input shape differs)
// whose conv1 differs and whose conv2 (6 x 14 x 14 -> 16, 5 x 5) is the same.
TuneOptions per_layer_tune(int64_t channels) {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.base.fake_channels = channels;
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct", "gemm"};
  o.strategy = Strategy::per_layer;
  o.measure.warmup = 1;
  o.measure.steps = 3;
  o.measure.max_steps = 3;
  o.racing = false;
  o.find.repetitions = 2;
  o.resume = true;
  return o;
}

TEST(WarmStart, ASecondProblemReusesTheSharedConvProblemsTimingsAndTheSameProblemItsTrials) {
  const test_support::TempResultsDb file("warm-start-tune.sqlite");
  ResultsDb db(file.path);
  const MachineSignature here = MachineSignature::local("cpu");

  LayerTimingStore first_store(db, here, "lenet5");
  TuneOptions first = per_layer_tune(1);
  first.find.cache = &first_store;
  const TuneReport one = Tuner(first, &db).run();
  EXPECT_EQ(first_store.reused(), 0u);
  EXPECT_EQ(first_store.stored(), 4u);  // direct and gemm on conv1 and conv2
  EXPECT_EQ(one.reused, 0u);

  LayerTimingStore second_store(db, here, "lenet5");
  TuneOptions second = per_layer_tune(3);
  second.find.cache = &second_store;
  const TuneReport three = Tuner(second, &db).run();
  EXPECT_EQ(second_store.reused(), 2u);  // conv2's direct and gemm
  EXPECT_EQ(second_store.stored(), 2u);  // conv1 on 3 channels, timed
  EXPECT_EQ(three.reused, 0u);           // another problem: none of the first's trials
  for (const LayerFind& f : three.finds)
    for (const AlgorithmTiming& t : f.timings)
      EXPECT_EQ(t.reused, f.layer == "conv2") << f.layer << " " << t.algorithm;

  // The same problem again: every trial comes from the DB, and every find timing.
  LayerTimingStore third_store(db, here, "lenet5");
  TuneOptions again = per_layer_tune(1);
  again.find.cache = &third_store;
  const TuneReport repeat = Tuner(again, &db).run();
  EXPECT_EQ(third_store.reused(), 4u);
  EXPECT_EQ(third_store.stored(), 0u);
  // Per-layer sweeps no candidate alone: it races the baseline and its picks anew in
  // interleaved rounds, as any tune settles its leaders anew, so no trial is reused.
  EXPECT_EQ(repeat.reused, 0u);
  ASSERT_TRUE(repeat.baseline_trial());
  EXPECT_TRUE(repeat.baseline_trial()->remeasured ||
              repeat.baseline_trial()->figures.stop == StopRule::raced_out);
  EXPECT_EQ(repeat.trials.size(), one.trials.size());
}

}  // namespace
}  // namespace tunescope::tuner
