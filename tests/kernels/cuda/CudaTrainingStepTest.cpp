// Whole training steps of lenet5 on the cuda backend against the cpu backend from the
// same seed and fake data: cuda runs its default conv algorithm (cudnn:implicit_gemm)
// and the CUDA ops, cpu runs `direct` and the CPU ops, so the two differ only by the
// order float terms are added in. Tolerances: the loss within 1e-4 relative; each
// gradient and weight within 1e-3 of the largest magnitude in its tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "CudaTestSupport.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"

namespace tunescope::cuda {
namespace {

SessionOptions lenet5_on(const std::string& backend, Layout layout) {
  SessionOptions options;
  options.backend = backend;
  options.model = "lenet5";
  options.data = "fake";
  options.fake_train_count = 256;
  options.fake_test_count = 40;  // a partial last eval batch: the device scatter pads it
  options.batch = 32;
  knobs::layout.set(options.knobs, layout);
  knobs::threads.set(options.knobs, 2);
  return options;
}

// Largest |got - want| over the largest |want| of one tensor.
double relative_error(const Tensor& got_device, const Tensor& want) {
  const Tensor got = to_host(got_device);
  double scale = 0, error = 0;
  for (int64_t k = 0; k < want.size(); ++k) {
    scale = std::max(scale, static_cast<double>(std::abs(want.data()[k])));
    error = std::max(error, static_cast<double>(std::abs(got.data()[k] - want.data()[k])));
  }
  return error / std::max(scale, 1e-12);
}

void expect_same_training(const SessionOptions& cpu_options, const SessionOptions& cuda_options,
                          int64_t steps) {
  TrainingSession cpu(cpu_options);
  TrainingSession cuda(cuda_options);
  EXPECT_EQ(cuda.options().conv.default_algorithm, "cudnn:implicit_gemm");
  for (const Parameter* p : cuda.network().parameters())
    EXPECT_FALSE(p->value.on_host()) << p->name;

  const EpochResult want = cpu.train_steps(steps);
  const EpochResult got = cuda.train_steps(steps);
  EXPECT_NEAR(got.stats.mean_loss(), want.stats.mean_loss(),
              1e-4 * std::abs(want.stats.mean_loss()));
  EXPECT_EQ(got.stats.examples, want.stats.examples);

  const auto want_params = cpu.network().parameters();
  const auto got_params = cuda.network().parameters();
  ASSERT_EQ(want_params.size(), got_params.size());
  for (size_t i = 0; i < want_params.size(); ++i) {
    EXPECT_LE(relative_error(got_params[i]->grad, want_params[i]->grad), 1e-3)
        << want_params[i]->name << " grad";
    EXPECT_LE(relative_error(got_params[i]->value, want_params[i]->value), 1e-3)
        << want_params[i]->name;
  }

  const StepStats want_eval = cpu.evaluate();
  const StepStats got_eval = cuda.evaluate();
  EXPECT_EQ(got_eval.examples, 40);
  EXPECT_NEAR(got_eval.mean_loss(), want_eval.mean_loss(), 1e-4 * std::abs(want_eval.mean_loss()));
}

TEST(CudaTrainingStep, Lenet5StepMatchesCpuNchw) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  expect_same_training(lenet5_on("cpu", Layout::NCHW), lenet5_on("cuda", Layout::NCHW), 1);
}

// Two lanes (real streams), two replicas all-reduced on the device and the update
// overlapping the next step, in NHWC: the executor's events must order device work.
TEST(CudaTrainingStep, Lenet5StreamsReplicasAsyncNhwcMatchCpu) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  SessionOptions cpu = lenet5_on("cpu", Layout::NHWC), cuda = lenet5_on("cuda", Layout::NHWC);
  for (SessionOptions* o : {&cpu, &cuda}) {
    knobs::streams.set(o->knobs, 2);
    knobs::replicas.set(o->knobs, 2);
    knobs::async_update.set(o->knobs, true);
  }
  expect_same_training(cpu, cuda, 3);
}

// Replicas against one replica on the same device count: two replicas of 16 examples
// average two shard means, one replica takes the mean of all 32, so the trajectories
// differ only by summation order. With two or more devices the replicas run one per
// device (NCCL reduction, peer broadcast) and the trace shows replica 1's kernels on
// device 1 (CUPTI's device id); with one device both share device 0. Tolerances as
// above: loss 1e-4 relative, weights 1e-3 of each tensor's largest magnitude, 3 steps.
TEST(CudaTrainingStep, Lenet5TwoReplicasMatchOneReplica) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  SessionOptions one = lenet5_on("cuda", Layout::NCHW), two = one;
  knobs::replicas.set(two.knobs, 2);
  TrainingSession single(one);
  TrainingSession split(two);
  split.tracer().start();
  const EpochResult want = single.train_steps(3);
  const EpochResult got = split.train_steps(3);
  split.tracer().stop();
  split.trainer().synchronize();
  EXPECT_NEAR(got.stats.mean_loss(), want.stats.mean_loss(),
              1e-4 * std::abs(want.stats.mean_loss()));
  const auto want_params = single.network().parameters();
  const auto got_params = split.network().parameters();
  ASSERT_EQ(want_params.size(), got_params.size());
  for (size_t i = 0; i < want_params.size(); ++i)
    EXPECT_LE(relative_error(got_params[i]->value, to_host(want_params[i]->value)), 1e-3)
        << want_params[i]->name;

  const profiler::Trace trace = split.tracer().collect({});
  std::set<int> devices;
  for (const auto& a : trace.activities)
    if (a.kind == profiler::ActivityKind::kernel) devices.insert(a.device);
  if (require_cuda_devices() >= 2)
    EXPECT_EQ(devices, (std::set<int>{0, 1}));
  else
    EXPECT_EQ(devices, (std::set<int>{0}));
}

// Batches are assembled in the backend's pinned staging memory (so their upload is an
// asynchronous DMA), and training from them matches the cpu backend (tolerances above).
TEST(CudaTrainingStep, BatchesComeFromPinnedStagingAndMatchCpu) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  TrainingSession probe(lenet5_on("cuda", Layout::NCHW));
  EXPECT_EQ(probe.backend().staging_memory().name(), "pinned host");
  probe.train_loader().start_epoch();
  const auto batch = probe.train_loader().next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(&batch->images.memory(), &probe.backend().staging_memory());
  expect_same_training(lenet5_on("cpu", Layout::NCHW), lenet5_on("cuda", Layout::NCHW), 3);
}

}  // namespace
}  // namespace tunescope::cuda
