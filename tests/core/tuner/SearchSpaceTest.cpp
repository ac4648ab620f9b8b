// SearchSpace enumeration on lenet5's two conv layers: counts, skip reasons, per-layer
// normalisation. Covers layouts {nchw, nhwc} x threads {1, 2} x algorithms.
#include "core/tuner/SearchSpace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "TestAlgorithms.h"
#include "core/base/CpuAffinity.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/Models.h"
#include "core/engine/RunKnobs.h"
#include "tests/core/ExpectError.h"

namespace tunescope::tuner {
namespace {

std::vector<ConvLayerInfo> lenet5_layers() {
  ModelSpec spec;
  spec.input = {8, 1, 32, 32};
  return conv_layers(*build_model(spec));
}

SpaceOptions options(std::vector<std::string> algorithms, bool product = false) {
  SpaceOptions o;
  o.batch = 8;
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW, Layout::NHWC});
  o.knobs.set(knobs::threads, std::vector<int>{1, 2});
  o.knobs.set(knobs::cpu_binding, std::vector<CpuBinding>{CpuBinding::off});  // its own test
  o.algorithms = std::move(algorithms);
  o.per_layer_product = product;
  return o;
}

size_t runnable(const std::vector<Candidate>& list) {
  return static_cast<size_t>(
      std::count_if(list.begin(), list.end(), [](const Candidate& c) { return c.runnable(); }));
}

TEST(SearchSpace, FindsLenetConvLayers) {
  const auto layers = lenet5_layers();
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].name, "conv1");
  EXPECT_EQ(layers[0].problem.input.c, 1);
  EXPECT_EQ(layers[1].name, "conv2");
  EXPECT_EQ(layers[1].problem.input.c, 6);
}

TEST(SearchSpace, GlobalCandidatesAreLayoutTimesThreadsTimesAlgorithms) {
  const SearchSpace space(options({"direct", "gemm"}), lenet5_layers());
  const auto list = space.enumerate();
  EXPECT_EQ(list.size(), 8u);
  EXPECT_EQ(runnable(list), 8u);
  EXPECT_EQ(list.front().config.label(), "nchw conv=direct threads=1");
  for (const auto& c : list) EXPECT_TRUE(c.config.conv.per_layer.empty());
}

TEST(SearchSpace, UnsupportedGlobalAlgorithmIsSkippedWithTheLayerAndWhy) {
  const SearchSpace space(options({"direct", test_support::kConv1Only}), lenet5_layers());
  const auto list = space.enumerate();
  EXPECT_EQ(list.size(), 8u);
  EXPECT_EQ(runnable(list), 4u);
  for (const auto& c : list) {
    if (c.runnable()) continue;
    EXPECT_EQ(c.config.conv.default_algorithm, test_support::kConv1Only);
    EXPECT_NE(c.skip_reason.find("layer conv2"), std::string::npos) << c.skip_reason;
    EXPECT_NE(c.skip_reason.find("only one input channel"), std::string::npos) << c.skip_reason;
  }
}

TEST(SearchSpace, PerLayerProductUsesOnlySupportingAlgorithms) {
  const SearchSpace space(options({"direct", "gemm", test_support::kConv1Only}, true),
                          lenet5_layers());
  const auto list = space.enumerate();
  // Per (layout, threads): conv1 has 3 options, conv2 2 -> 6 combinations, plus one
  // skipped entry saying why test-conv1-only is out for conv2.
  EXPECT_EQ(list.size(), 4u * 7u);
  EXPECT_EQ(runnable(list), 4u * 6u);
  size_t with_override = 0;
  for (const auto& c : list) {
    if (!c.runnable()) {
      EXPECT_NE(c.skip_reason.find("layer conv2"), std::string::npos) << c.skip_reason;
      continue;
    }
    with_override += c.config.override_count() > 0;
    EXPECT_NE(c.config.conv.for_layer("conv2"), test_support::kConv1Only) << c.config.label();
  }
  EXPECT_EQ(with_override, 4u * 4u);  // 2 of the 6 combinations are uniform
}

TEST(SearchSpace, PerLayerConfigIsNormalisedAroundTheCommonAlgorithm) {
  const SearchSpace space(options({"direct", "gemm"}), lenet5_layers());
  const Candidate mixed = space.per_layer(Layout::NCHW, 1, {"gemm", "direct"});
  EXPECT_TRUE(mixed.runnable());
  EXPECT_EQ(mixed.config.conv.default_algorithm, "gemm");  // tie: the first layer's
  EXPECT_EQ(mixed.config.conv.per_layer, (std::map<std::string, std::string>{{"conv2", "direct"}}));
  const Candidate uniform = space.per_layer(Layout::NCHW, 1, {"direct", "direct"});
  EXPECT_EQ(uniform.config, space.global(Layout::NCHW, 1, "direct").config);
}

// A backend whose default conv algorithm is not `direct` (as cuda's is
// cudnn:implicit_gemm), and which has no `direct` at all: the CPU backend under another
// name with one algorithm, registered for this test only.
constexpr const char* kOtherBackend = "test-other-default";
constexpr const char* kOtherDefault = "test-other-default-conv";
const bool other_backend_registered = [] {
  BackendRegistration(kOtherBackend, kOtherDefault,
                      [] { return Registry::instance().make_backend("cpu"); });
  ConvAlgorithmRegistration(kOtherBackend, kOtherDefault, [](const KnobValues& options) {
    return Registry::instance().make_conv_algorithm("cpu", "direct", options);
  });
  return true;
}();

TEST(SearchSpace, NetWithoutConvLayersGetsTheBackendsDefaultConvAlgorithm) {
  ASSERT_TRUE(other_backend_registered);
  SpaceOptions o = options({});
  o.backend = kOtherBackend;
  const SearchSpace space(o, {});
  const Candidate none = space.per_layer(Layout::NCHW, 1, {});
  EXPECT_TRUE(none.runnable()) << none.skip_reason;
  EXPECT_EQ(none.config.conv.default_algorithm, kOtherDefault);
  EXPECT_TRUE(none.config.conv.per_layer.empty());
  // On cpu the default is direct.
  EXPECT_EQ(
      SearchSpace(options({}), {}).per_layer(Layout::NHWC, 2, {}).config.conv.default_algorithm,
      "direct");
}

TEST(SearchSpace, PerLayerProductOfADeepNetIsRefusedNamingTheKey) {
  ModelSpec spec;
  spec.name = "resnet18-small";
  spec.input = {8, 3, 32, 32};
  const auto layers = conv_layers(*build_model(spec));
  ASSERT_EQ(layers.size(), 20u);  // 2^20 combinations of two algorithms, far over the cap
  tunescope::test_support::expect_error(
      ErrorKind::usage,
      [&] {
        SearchSpace(options({"direct", "gemm"}, true), layers).enumerate();
      },
      {"per_layer_product: ", "1048576 algorithm combinations", "more than the 4096",
       "strategy per-layer"});
}

TEST(SearchSpace, RejectsBadOptions) {
  EXPECT_THROW(SearchSpace(options({"strassen"}), lenet5_layers()), Error);
  SpaceOptions no_threads = options({"direct"});
  tunescope::test_support::expect_error(
      ErrorKind::usage, [&] { no_threads.knobs.set(knobs::threads, std::vector<int>{}); },
      {"threads_list: the list is empty"});
  SpaceOptions zero_threads = options({"direct"});
  zero_threads.knobs.set(knobs::threads, std::vector<int>{0});
  tunescope::test_support::expect_error(ErrorKind::usage,
                                        [&] { SearchSpace(zero_threads, lenet5_layers()); },
                                        {"threads_list: thread counts must be >= 1, got 0"});
  SpaceOptions huge_streams = options({"direct"});
  huge_streams.knobs.set(knobs::streams, std::vector<int>{1, 100000});
  tunescope::test_support::expect_error(ErrorKind::usage,
                                        [&] { SearchSpace(huge_streams, lenet5_layers()); },
                                        {"streams_list: must be in 1..64, got 100000"});
}

TEST(SearchSpace, DefaultAlgorithmsAreEveryRegisteredOne) {
  const SearchSpace space(options({}), lenet5_layers());
  const auto& algorithms = space.algorithms();
  for (const char* name : {"direct", "gemm", test_support::kSlow})
    EXPECT_NE(std::find(algorithms.begin(), algorithms.end(), name), algorithms.end()) << name;
}

TEST(SearchSpace, ConcurrencyKnobsMultiplyTheCandidatesAndBadSplitsAreSkipped) {
  SpaceOptions o = options({"direct"});
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.knobs.set(knobs::streams, std::vector<int>{1, 2});
  o.knobs.set(knobs::replicas, std::vector<int>{1, 3});  // 3 does not divide 8
  o.knobs.set(knobs::async_update, std::vector<bool>{false, true});
  const SearchSpace space(o, lenet5_layers());
  const auto list = space.enumerate();
  ASSERT_EQ(list.size(), 2u * 2u * 2u);
  EXPECT_EQ(runnable(list), 4u);
  EXPECT_EQ(list.front().config.concurrency(), Concurrency{});  // the plain config first
  for (const Candidate& c : list) {
    EXPECT_EQ(c.runnable(), c.config.concurrency().replicas == 1) << c.config.label();
    if (!c.runnable()) {
      EXPECT_NE(c.skip_reason.find("does not split into 3 replicas"), std::string::npos)
          << c.skip_reason;
    }
  }
  SpaceOptions bad = o;
  EXPECT_THROW(bad.knobs.set(knobs::streams, std::vector<int>{}), Error);
  bad.knobs.set(knobs::micro_batches, std::vector<int>{0});
  EXPECT_THROW(SearchSpace(bad, lenet5_layers()), Error);
}

// cpu_binding's tune default is off and cores, crossed only with the runs of two or more
// executor threads (KnobSpec::applies_to): a lone thread never shares a core with another.
// A bound run with more threads than the CPUs this process may use is skipped, saying why.
TEST(SearchSpace, BindingIsTriedWhereTwoExecutorThreadsCouldShareACore) {
  SpaceOptions o = options({"direct"});
  o.knobs = KnobLists{};
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  const int cpus = static_cast<int>(allowed_cpus().size());
  o.knobs.set(knobs::threads, std::vector<int>{1, 2, cpus + 1});
  o.knobs.set(knobs::streams, std::vector<int>{1, 2});
  const auto list = SearchSpace(o, lenet5_layers()).enumerate();
  std::map<std::string, std::string> reasons;  // label -> skip reason
  for (const Candidate& c : list) reasons[c.config.label()] = c.skip_reason;
  EXPECT_EQ(reasons.size(), list.size()) << "a config listed twice";
  // One thread, one lane: off only. One thread per lane on two lanes, or two threads on
  // one: both.
  EXPECT_EQ(reasons.count("nchw conv=direct threads=1"), 1u);
  EXPECT_EQ(reasons.count("nchw conv=direct threads=1 bind=cores"), 0u);
  for (const char* label :
       {"nchw conv=direct threads=1 streams=2", "nchw conv=direct threads=1 streams=2 bind=cores",
        "nchw conv=direct threads=2", "nchw conv=direct threads=2 bind=cores"})
    EXPECT_EQ(reasons.count(label), 1u) << label;
  if (cpus >= 2) {
    EXPECT_EQ(reasons["nchw conv=direct threads=2 bind=cores"], "");
  }
  const std::string too_many = "nchw conv=direct threads=" + std::to_string(cpus + 1);
  EXPECT_EQ(reasons[too_many], "");
  const std::string refused = reasons[too_many + " bind=cores"];
  for (const std::string& part :
       {std::string("cpu_binding: cores"), std::to_string(cpus + 1) + " threads",
        "only " + std::to_string(cpus) + " CPUs"})
    EXPECT_NE(refused.find(part), std::string::npos) << refused;
  // Asked for cores alone, a lone thread still runs once, unbound.
  o.knobs.set(knobs::cpu_binding, std::vector<CpuBinding>{CpuBinding::cores});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.knobs.set(knobs::streams, std::vector<int>{1});
  const auto lone = SearchSpace(o, lenet5_layers()).enumerate();
  ASSERT_EQ(lone.size(), 1u);
  EXPECT_EQ(lone.front().config.label(), "nchw conv=direct threads=1");
}

TEST(SearchSpace, UpdateOnListCrossesEveryConfig) {
  SpaceOptions o = options({"direct"});
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.knobs.set(knobs::async_update, std::vector<bool>{false, true});
  o.knobs.set(knobs::update_on, std::vector<UpdateOn>{UpdateOn::device, UpdateOn::host});
  const auto list = SearchSpace(o, lenet5_layers()).enumerate();
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[1].config.label(), "nchw conv=direct threads=1 update=host");
  EXPECT_EQ(list[3].config.label(), "nchw conv=direct threads=1 async update=host");
  EXPECT_THROW(o.knobs.set(knobs::update_on, std::vector<UpdateOn>{}), Error);
}

}  // namespace
}  // namespace tunescope::tuner
