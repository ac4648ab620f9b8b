// What a session writes into its traces for the roofline: each conv layer's algorithm,
// flops and least bytes per pass (hand-computed for LeNet-5), the host CPU and the
// threads of a lane; and that a traced step's conv kernels are found by those entries.
#include <gtest/gtest.h>

#include <set>

#include "core/engine/ConvChoice.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "profiler/Roofline.h"

namespace tunescope {
namespace {

SessionOptions lenet_options() {
  SessionOptions options;
  options.model = "lenet5";
  options.data = "fake";
  options.fake_train_count = 8;
  options.fake_test_count = 4;
  options.batch = 4;
  knobs::threads.set(options.knobs, 2);
  options.conv = parse_conv_choice("gemm");
  options.prefetch = 0;
  return options;
}

TEST(ConvLayersMetadata, LeNetCountsByHand) {
  const TrainingSession session(lenet_options());
  const auto layers = session.conv_layers();
  ASSERT_EQ(layers.size(), 2u);
  // conv1: 4x1x32x32 -> 6 maps 28x28 through 5x5 filters.
  EXPECT_EQ(layers[0].layer, "conv1");
  EXPECT_EQ(layers[0].algorithm, "gemm");
  EXPECT_DOUBLE_EQ(layers[0].flops_per_pass, 2.0 * 4 * 6 * 28 * 28 * 1 * 25);     // 940,800
  EXPECT_DOUBLE_EQ(layers[0].min_bytes_per_pass, 4.0 * (4096 + 6 * 25 + 18816));  // 92,248
  // conv2: 4x6x14x14 (after pooling) -> 16 maps 10x10.
  EXPECT_EQ(layers[1].layer, "conv2");
  EXPECT_DOUBLE_EQ(layers[1].flops_per_pass, 2.0 * 4 * 16 * 10 * 10 * 6 * 25);        // 1,920,000
  EXPECT_DOUBLE_EQ(layers[1].min_bytes_per_pass, 4.0 * (4704 + 16 * 6 * 25 + 6400));  // 54,016

  const auto extra = session.trace_metadata_extra();
  EXPECT_EQ(extra.at(profiler::kKernelThreadsKey), "2");
  EXPECT_FALSE(extra.at(profiler::kHostCpuKey).empty());
  profiler::TraceMetadata metadata;
  metadata.extra = extra;
  const auto back = profiler::conv_layers_of(metadata);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_DOUBLE_EQ(back[1].flops_per_pass, layers[1].flops_per_pass);
  EXPECT_EQ(back[1].problem, layers[1].problem);
}

TEST(ConvLayersMetadata, ATracedStepHasARateForEachPassThatRan) {
  TrainingSession session(lenet_options());
  session.tracer().start();
  session.train_steps(1);
  session.tracer().stop();
  profiler::TraceMetadata metadata;
  metadata.extra = session.trace_metadata_extra();
  const profiler::Trace trace = session.tracer().collect(metadata);
  const auto rates = profiler::conv_pass_rates(trace, profiler::conv_layers_of(trace.metadata));
  std::set<std::string> rows;
  for (const auto& r : rates) {
    rows.insert(r.layer + " " + r.pass);
    EXPECT_EQ(r.calls, 1u) << r.layer << " " << r.pass;
    EXPECT_GT(r.total_ns, 0) << r.layer << " " << r.pass;
    EXPECT_GT(r.gflops, 0) << r.layer << " " << r.pass;
  }
  // conv1 reads the images, so nothing asks for its input gradient.
  EXPECT_EQ(rows, (std::set<std::string>{"conv1 fwd", "conv1 bwd_filter", "conv2 fwd",
                                         "conv2 bwd_data", "conv2 bwd_filter"}));
}

}  // namespace
}  // namespace tunescope
