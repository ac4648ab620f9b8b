// The engine on a backend whose memory the host may not read (tests/core/SeparateMemory.h)
// and whose lanes have streams: every tensor is allocated in the backend's space, batches
// go in and results come out only through the backend's copies, lanes finish their
// streams, and training gives the same weights as on the plain CPU backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "kernels/shared/FftWorkspace.h"
#include "tests/core/SeparateMemory.h"

namespace tunescope {
namespace {

test_support::SeparateMemory& separate_memory() {
  static test_support::SeparateMemory memory;
  return memory;
}
std::atomic<int> g_stream_finishes{0};

// The CPU's ops (they run on the underlying host memory) behind a separate memory space
// and one stream token per lane.
class SeparateBackend final : public Backend {
 public:
  std::string name() const override { return "separate"; }
  std::string device_description() const override { return "CPU ops on separate memory"; }
  OpKernels& ops() override { return cpu_->ops(); }
  MemorySpace& memory() override { return separate_memory(); }
  NativeStream lane_stream(int lane, int) override {
    return NativeStream(&streams_.at(static_cast<size_t>(lane)));
  }
  void finish_stream(NativeStream stream) override {
    EXPECT_TRUE(stream);
    ++g_stream_finishes;
  }

 private:
  std::unique_ptr<Backend> cpu_ = Registry::instance().make_backend("cpu");
  std::array<int, 16> streams_{};
};

const BackendRegistration separate_backend("separate", "direct",
                                           [] { return std::make_unique<SeparateBackend>(); });
const ConvAlgorithmRegistration separate_direct("separate", "direct",
                                                [](const KnobValues& options) {
                                                  return Registry::instance().make_conv_algorithm(
                                                      "cpu", "direct", options);
                                                });
const ConvAlgorithmRegistration separate_fft("separate", "fft-own", [](const KnobValues& options) {
  return Registry::instance().make_conv_algorithm("cpu", "fft-own", options);
});

SessionOptions separate_options(const std::string& backend_name) {
  SessionOptions options;
  options.backend = backend_name;
  options.data = "fake";
  options.fake_train_count = 64;
  options.fake_test_count = 12;  // a partial last eval batch: padded by the backend's scatter
  options.batch = 8;
  knobs::threads.set(options.knobs, 2);
  options.conv = parse_conv_choice("direct,conv2=fft-own");
  fft_workspace_knob.set(options.knobs, FftWorkspace::cache);
  knobs::streams.set(options.knobs, 2);
  knobs::replicas.set(options.knobs, 2);
  knobs::async_update.set(options.knobs, true);
  return options;
}

TEST(SeparateMemoryTraining, AllocatesInTheBackendsSpaceAndMatchesCpu) {
  TrainingSession cpu(separate_options("cpu"));
  const int allocations_before = separate_memory().allocations;
  TrainingSession separate(separate_options("separate"));
  EXPECT_GT(separate_memory().allocations, allocations_before);
  for (const Parameter* p : separate.network().parameters()) {
    EXPECT_FALSE(p->value.on_host()) << p->name;
    EXPECT_FALSE(p->grad.on_host()) << p->name;
  }
  EXPECT_GT(separate_memory().copies_in, 0);  // weights initialised on the host, copied in

  const int finishes_before = g_stream_finishes;
  const EpochResult want = cpu.train_steps(3);
  const EpochResult got = separate.train_steps(3);
  EXPECT_GT(g_stream_finishes, finishes_before);
  EXPECT_NEAR(got.stats.mean_loss(), want.stats.mean_loss(),
              1e-5 * std::abs(want.stats.mean_loss()));

  // Same kernels in the same order: the weights agree to float rounding (1e-5 relative).
  const auto want_params = cpu.network().parameters();
  const auto got_params = separate.network().parameters();
  ASSERT_EQ(want_params.size(), got_params.size());
  for (size_t i = 0; i < want_params.size(); ++i) {
    const Tensor host = to_host(got_params[i]->value);
    const Tensor& ref = want_params[i]->value;
    double scale = 0, error = 0;
    for (int64_t k = 0; k < ref.size(); ++k) {
      scale = std::max(scale, static_cast<double>(std::abs(ref.data()[k])));
      error = std::max(error, static_cast<double>(std::abs(host.data()[k] - ref.data()[k])));
    }
    EXPECT_LE(error, 1e-5 * scale) << want_params[i]->name;
  }

  const int copies_out_before = separate_memory().copies_out;
  const StepStats want_eval = cpu.evaluate();
  const StepStats got_eval = separate.evaluate();
  EXPECT_GT(separate_memory().copies_out, copies_out_before);  // logits read back
  EXPECT_EQ(got_eval.examples, 12);
  EXPECT_EQ(got_eval.correct, want_eval.correct);
  EXPECT_NEAR(got_eval.mean_loss(), want_eval.mean_loss(), 1e-5 * std::abs(want_eval.mean_loss()));
}

}  // namespace
}  // namespace tunescope
