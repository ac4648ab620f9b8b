// The onednn:* algorithms (kernels/onednn) beyond what every cpu algorithm is tested for
// (ConvAlgorithmsMatchDirectTest, ConvAlgorithmContractTest): they are registered exactly
// when oneDNN is built in; every conv layer of LeNet-5 and resnet18-small matches
// `direct` in both layouts and all three passes (tolerances: tolerance_for); the trace
// names oneDNN's implementation and every reorder; one instance serves backward data and
// backward filter from two lanes at once; and oneDNN starts no threads of its own.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ConvTestSupport.h"
#include "bench/ConvBenchLayers.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Registry.h"
#include "profiler/Tracer.h"

namespace tunescope::conv_test {
namespace {

#ifdef TUNESCOPE_HAVE_ONEDNN
constexpr bool kOnednnBuilt = true;
#else
constexpr bool kOnednnBuilt = false;
#endif

const std::vector<std::string> kOnednnAlgorithms = {"onednn:direct", "onednn:auto",
                                                    "onednn:winograd"};

#define SKIP_WITHOUT_ONEDNN() \
  if (!kOnednnBuilt)          \
  GTEST_SKIP() << "built without oneDNN (TUNESCOPE_ONEDNN=OFF or libdnnl-dev missing)"

TEST(Onednn, RegisteredExactlyWhenBuiltIn) {
  const auto names = Registry::instance().conv_algorithms("cpu");
  const std::set<std::string> have(names.begin(), names.end());
  for (const std::string& name : kOnednnAlgorithms)
    EXPECT_EQ(have.count(name), kOnednnBuilt ? 1u : 0u) << name;
}

// Batch 5: the batch split over parallel_slots() parts leaves parts of two sizes on
// machines with 2 to 4 hardware threads, and single images beyond.
constexpr int64_t kModelBatch = 5;

using ModelParam = std::tuple<std::string, bench::ConvLayer, Layout, int>;

class OnednnModelLayer : public ::testing::TestWithParam<ModelParam> {};

TEST_P(OnednnModelLayer, AllPassesMatchDirect) {
  SKIP_WITHOUT_ONEDNN();
  const auto& [algorithm, layer, layout, threads] = GetParam();
  ConvProblem p = with_layout(layer.problem, layout);
  p.input.n = kModelBatch;
  auto algo = Registry::instance().make_conv_algorithm("cpu", algorithm);
  if (algorithm == "onednn:winograd" && !algo->supports(p))
    GTEST_SKIP() << algo->unsupported_reason(p);
  // oneDNN's direct convolution covers every layer of both models.
  ASSERT_TRUE(algo->supports(p)) << algo->unsupported_reason(p);
  auto direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  ThreadPool pool(threads), reference_pool(2);
  const ConvOperands ops = random_operands(p, 71);
  const double tolerance = tolerance_for(algorithm);
  EXPECT_LE(relative_error(run_forward(*algo, p, pool, ops.x, ops.w),
                           run_forward(*direct, p, reference_pool, ops.x, ops.w)),
            tolerance);
  EXPECT_LE(relative_error(run_backward_data(*algo, p, pool, ops.dy, ops.w),
                           run_backward_data(*direct, p, reference_pool, ops.dy, ops.w)),
            tolerance);
  EXPECT_LE(relative_error(run_backward_filter(*algo, p, pool, ops.x, ops.dy),
                           run_backward_filter(*direct, p, reference_pool, ops.x, ops.dy)),
            tolerance);
}

INSTANTIATE_TEST_SUITE_P(LenetAndResnet, OnednnModelLayer,
                         ::testing::Combine(::testing::ValuesIn(kOnednnAlgorithms),
                                            ::testing::ValuesIn(bench::model_conv_layers()),
                                            ::testing::Values(Layout::NCHW, Layout::NHWC),
                                            ::testing::Values(1, 4)),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" +
                                              std::get<1>(info.param).name + "_" +
                                              to_string(std::get<2>(info.param)) + "_threads" +
                                              std::to_string(std::get<3>(info.param));
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// Each pass traces one compute kernel "<algorithm>.<pass>.<implementation>" carrying the
// pass's flops, and otherwise only reorders of the pass's operands and the backward
// filter's sum of partial filters.
TEST(Onednn, TraceNamesTheImplementationAndEveryReorder) {
  SKIP_WITHOUT_ONEDNN();
  const std::set<std::string> steps = {
      "reorder_src",      "reorder_weights",      "reorder_dst", "reorder_diff_dst",
      "reorder_diff_src", "reorder_diff_weights", "reduce"};
  ThreadPool pool(2);
  profiler::Tracer tracer;
  const ExecContext exec{pool, &tracer};
  for (const char* algorithm : {"onednn:direct", "onednn:auto"}) {
    auto algo = Registry::instance().make_conv_algorithm("cpu", algorithm);
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      const ConvProblem p = with_layout(make_problem(4, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1), layout);
      const ConvOperands ops = random_operands(p, 72);
      AlignedBuffer workspace(algo->workspace_bytes(p));
      const ConvCall call{p, exec, workspace.data(), workspace.bytes()};
      Tensor y(p.output(), p.layout), dx(p.input, p.layout), dw(p.filter(), p.layout);
      tracer.start();
      algo->forward(call, ops.x, ops.w, y);
      algo->backward_data(call, ops.dy, ops.w, dx);
      algo->backward_filter(call, ops.x, ops.dy, dw);
      tracer.stop();
      std::map<std::string, int> computes;
      for (const profiler::Activity& a : tracer.collect({}).activities) {
        const size_t pass_end = a.name.str().find('.', std::string(algorithm).size() + 1);
        ASSERT_NE(pass_end, std::string::npos) << a.name;
        const std::string pass = a.name.str().substr(0, pass_end),
                          step = a.name.str().substr(pass_end + 1);
        if (steps.count(step)) continue;
        ++computes[pass];
        EXPECT_FALSE(step.empty()) << a.name;
        EXPECT_EQ(a.flops, p.flops()) << a.name;
      }
      const std::string prefix = algorithm;
      EXPECT_EQ(computes,
                (std::map<std::string, int>{
                    {prefix + ".fwd", 1}, {prefix + ".bwd_data", 1}, {prefix + ".bwd_filter", 1}}))
          << to_string(layout);
    }
  }
}

// Separable backward runs a layer's backward filter on another lane than its backward
// data, possibly at once: both use the one instance (its cached primitives) meanwhile.
TEST(Onednn, OneInstanceServesTwoLanesAtOnce) {
  SKIP_WITHOUT_ONEDNN();
  for (const char* algorithm : {"onednn:direct", "onednn:auto"}) {
    auto algo = Registry::instance().make_conv_algorithm("cpu", algorithm);
    const ConvProblem p =
        with_layout(make_problem(6, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1), Layout::NCHW);
    const ConvOperands ops = random_operands(p, 73);
    ThreadPool pool_a(2), pool_b(2);
    const Tensor dx_alone = run_backward_data(*algo, p, pool_a, ops.dy, ops.w);
    const Tensor dw_alone = run_backward_filter(*algo, p, pool_b, ops.x, ops.dy);
    for (int round = 0; round < 5; ++round) {
      Tensor dx, dw;
      std::thread lane([&] { dw = run_backward_filter(*algo, p, pool_b, ops.x, ops.dy); });
      dx = run_backward_data(*algo, p, pool_a, ops.dy, ops.w);
      lane.join();
      // The batch split is fixed by the problem, so each part's sums run in the same order.
      EXPECT_EQ(relative_error(dx, dx_alone), 0.0) << algorithm << " round " << round;
      EXPECT_EQ(relative_error(dw, dw_alone), 0.0) << algorithm << " round " << round;
    }
  }
}

int process_threads() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

// oneDNN runs single-threaded on each of our pool's threads: its OpenMP runtime never
// starts a team of its own that would compete with (and spin beside) our threads.
TEST(Onednn, StartsNoThreadsOfItsOwn) {
  SKIP_WITHOUT_ONEDNN();
  if (process_threads() < 0) GTEST_SKIP() << "no /proc/self/status here";
  ThreadPool pool(3);
  const int before = process_threads();
  for (const char* algorithm : {"onednn:direct", "onednn:auto"}) {
    auto algo = Registry::instance().make_conv_algorithm("cpu", algorithm);
    const ConvProblem p = make_problem(8, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1);
    const ConvOperands ops = random_operands(p, 74);
    run_forward(*algo, p, pool, ops.x, ops.w);
    run_backward_data(*algo, p, pool, ops.dy, ops.w);
    run_backward_filter(*algo, p, pool, ops.x, ops.dy);
  }
  EXPECT_EQ(process_threads(), before);
}

}  // namespace
}  // namespace tunescope::conv_test
