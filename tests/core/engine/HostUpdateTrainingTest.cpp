// The update on the host (Concurrency::update_on = host) on a backend whose memory the
// host may not read (tests/core/SeparateMemory.h; CPU ops underneath): the gradients go
// down to host copies (memcpy.dtoh on the update lane), SGD runs on a host lane, the
// weights come back (memcpy.htod on the upload lane), and the trajectory is the device
// update's. With async update the host's SGD overlaps the next step's forward pass; a
// backend whose memory is the host's refuses the knob. What the cuda backend relies on,
// checked without a GPU.
//
// Tolerance: the weights after 3 steps (momentum 0.9, weight decay 5e-4) equal the device
// update's to 1e-6 of each tensor's largest |weight|: both run the same CPU SGD kernel on
// the same gradients in the same order, so only a missed dependency (a stale weight, a
// gradient read before it was downloaded), which moves them by 1e-3 or more, can differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "tests/core/SeparateMemory.h"

namespace tunescope {
namespace {

test_support::SeparateMemory& separate_memory() {
  static test_support::SeparateMemory memory;
  return memory;
}

// Holds the host SGD of one chosen call until the device has run a forward kernel
// (relu.fwd) of the next step, or until a timeout. With async update the next step's
// forward of the early layers needs only their updates, so it runs while the last
// layer's host SGD of this step is held; with sync update it cannot, and the hold times
// out. Forward kernels are counted from arming: the first `this_step` are this step's.
class OverlapGate {
 public:
  // The `call`-th SGD call from now (1-based) is held for at most `timeout`.
  void arm(int call, int this_step, std::chrono::milliseconds timeout) {
    std::lock_guard lock(mutex_);
    countdown_ = call;
    this_step_ = this_step;
    forward_kernels_ = 0;
    timeout_ = timeout;
    overlapped_ = false;
  }
  void before_sgd() {
    std::unique_lock lock(mutex_);
    if (countdown_ <= 0 || --countdown_ > 0) return;
    overlapped_ = changed_.wait_for(lock, timeout_, [&] { return forward_kernels_ > this_step_; });
  }
  // After a relu.fwd kernel has run (and been traced) in full.
  void after_forward_kernel() {
    std::lock_guard lock(mutex_);
    ++forward_kernels_;
    changed_.notify_all();
  }
  bool overlapped() {
    std::lock_guard lock(mutex_);
    return overlapped_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int countdown_ = 0, this_step_ = 0, forward_kernels_ = 0;
  std::chrono::milliseconds timeout_{0};
  bool overlapped_ = false;
};

OverlapGate& gate() {
  static OverlapGate g;
  return g;
}

// The cpu backend's ops, with the gate around sgd_update and relu_forward.
class GatedOps final : public OpKernels {
 public:
  explicit GatedOps(OpKernels& inner) : in_(inner) {}
  void sgd_update(const ExecContext& ctx, const SgdParams& params, Tensor& weight,
                  const Tensor& grad, Tensor& velocity) override {
    gate().before_sgd();
    in_.sgd_update(ctx, params, weight, grad, velocity);
  }
  void relu_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) override {
    in_.relu_forward(ctx, x, y);
    gate().after_forward_kernel();
  }

  // The rest forwards unchanged.
  void batchnorm_forward_train(const ExecContext& c, const BatchNormParams& p, const Tensor& x,
                               const Tensor& g, const Tensor& b, Tensor& rm, Tensor& rv,
                               BatchNormSaved& s, Tensor& y) override {
    in_.batchnorm_forward_train(c, p, x, g, b, rm, rv, s, y);
  }
  void batchnorm_forward_infer(const ExecContext& c, const BatchNormParams& p, const Tensor& x,
                               const Tensor& g, const Tensor& b, const Tensor& rm, const Tensor& rv,
                               Tensor& y) override {
    in_.batchnorm_forward_infer(c, p, x, g, b, rm, rv, y);
  }
  void batchnorm_backward(const ExecContext& c, const Tensor& x, const Tensor& dy, const Tensor& g,
                          const BatchNormSaved& s, Tensor& dx, Tensor& dg, Tensor& db) override {
    in_.batchnorm_backward(c, x, dy, g, s, dx, dg, db);
  }
  void relu_backward(const ExecContext& c, const Tensor& y, const Tensor& dy, Tensor& dx) override {
    in_.relu_backward(c, y, dy, dx);
  }
  void maxpool_forward(const ExecContext& c, const PoolParams& p, const Tensor& x,
                       Tensor& y) override {
    in_.maxpool_forward(c, p, x, y);
  }
  void maxpool_backward(const ExecContext& c, const PoolParams& p, const Tensor& x,
                        const Tensor& dy, Tensor& dx) override {
    in_.maxpool_backward(c, p, x, dy, dx);
  }
  void avgpool_forward(const ExecContext& c, const PoolParams& p, const Tensor& x,
                       Tensor& y) override {
    in_.avgpool_forward(c, p, x, y);
  }
  void avgpool_backward(const ExecContext& c, const PoolParams& p, const Tensor& dy,
                        Tensor& dx) override {
    in_.avgpool_backward(c, p, dy, dx);
  }
  void global_avgpool_forward(const ExecContext& c, const Tensor& x, Tensor& y) override {
    in_.global_avgpool_forward(c, x, y);
  }
  void global_avgpool_backward(const ExecContext& c, const Tensor& dy, Tensor& dx) override {
    in_.global_avgpool_backward(c, dy, dx);
  }
  void fc_forward(const ExecContext& c, const Tensor& x, const Tensor& w, const Tensor& b,
                  Tensor& y) override {
    in_.fc_forward(c, x, w, b, y);
  }
  void fc_backward_data(const ExecContext& c, const Tensor& dy, const Tensor& w,
                        Tensor& dx) override {
    in_.fc_backward_data(c, dy, w, dx);
  }
  void fc_backward_weight(const ExecContext& c, const Tensor& x, const Tensor& dy, Tensor& dw,
                          Tensor& db) override {
    in_.fc_backward_weight(c, x, dy, dw, db);
  }
  void bias_forward(const ExecContext& c, const Tensor& b, Tensor& y) override {
    in_.bias_forward(c, b, y);
  }
  void bias_backward(const ExecContext& c, const Tensor& dy, Tensor& db) override {
    in_.bias_backward(c, dy, db);
  }
  void add(const ExecContext& c, const Tensor& a, const Tensor& b, Tensor& y) override {
    in_.add(c, a, b, y);
  }
  void accumulate(const ExecContext& c, const Tensor& x, Tensor& y) override {
    in_.accumulate(c, x, y);
  }
  void zero(const ExecContext& c, Tensor& y) override { in_.zero(c, y); }
  void copy(const ExecContext& c, const Tensor& x, Tensor& y) override { in_.copy(c, x, y); }
  float softmax_cross_entropy(const ExecContext& c, const Tensor& logits,
                              std::span<const int32_t> labels, Tensor* dlogits,
                              int64_t* correct) override {
    return in_.softmax_cross_entropy(c, logits, labels, dlogits, correct);
  }
  void transpose(const ExecContext& c, const Tensor& x, Tensor& y) override {
    in_.transpose(c, x, y);
  }
  void scatter_rows(const ExecContext& c, const Tensor& batch, int64_t first,
                    Tensor& shard) override {
    in_.scatter_rows(c, batch, first, shard);
  }
  void allreduce_sum(const ExecContext& c, std::span<const Tensor* const> sources, float scale,
                     Tensor& out) override {
    in_.allreduce_sum(c, sources, scale, out);
  }
  void broadcast(const ExecContext& c, const Tensor& source,
                 std::span<Tensor* const> targets) override {
    in_.broadcast(c, source, targets);
  }
  void copy_to_host(const ExecContext& c, const Tensor& src, Tensor& host_dst) override {
    in_.copy_to_host(c, src, host_dst);
  }
  void copy_from_host(const ExecContext& c, const Tensor& host_src, Tensor& dst) override {
    in_.copy_from_host(c, host_src, dst);
  }

 private:
  OpKernels& in_;
};

// Separate memory, one stream token per lane, the gated CPU ops; its host ops are the
// same ops (Backend's default), as the cpu backend's are for cuda.
class SeparateBackend final : public Backend {
 public:
  std::string name() const override { return "host-update-separate"; }
  std::string device_description() const override {
    return "CPU ops on separate memory, gated SGD";
  }
  OpKernels& ops() override { return ops_; }
  MemorySpace& memory() override { return separate_memory(); }
  NativeStream lane_stream(int lane, int) override {
    return NativeStream(&streams_.at(static_cast<size_t>(lane)));
  }

 private:
  std::unique_ptr<Backend> cpu_ = Registry::instance().make_backend("cpu");
  GatedOps ops_{cpu_->ops()};
  std::array<int, 16> streams_{};
};

const BackendRegistration host_update_backend("host-update-separate", "direct",
                                              [] { return std::make_unique<SeparateBackend>(); });
const ConvAlgorithmRegistration host_update_direct(
    "host-update-separate", "direct", [](const KnobValues& options) {
      return Registry::instance().make_conv_algorithm("cpu", "direct", options);
    });

SessionOptions host_update_options(const std::string& backend_name, UpdateOn where, bool async) {
  SessionOptions options;
  options.backend = backend_name;
  options.data = "fake";
  options.fake_train_count = 64;
  options.fake_test_count = 8;
  options.batch = 8;
  knobs::threads.set(options.knobs, 2);
  options.prefetch = 0;
  options.conv = parse_conv_choice("direct");
  options.sgd = SgdParams{0.02f, 0.9f, 5e-4f};  // momentum and weight decay on
  knobs::streams.set(options.knobs, 2);
  knobs::replicas.set(options.knobs, 2);  // the reduction and the broadcast of the new weights too
  knobs::async_update.set(options.knobs, async);
  knobs::update_on.set(options.knobs, where);
  // The counts below are unfused lenet5's: relu1..relu4 and 5 parameter layers.
  knobs::fuse.set(options.knobs, false);
  return options;
}

class HostUpdate : public ::testing::TestWithParam<bool> {};  // async update?

TEST_P(HostUpdate, FollowsTheDeviceUpdateAndRunsSgdOnTheHostLane) {
  const bool async = GetParam();
  TrainingSession on_device(host_update_options("host-update-separate", UpdateOn::device, async));
  TrainingSession on_host(host_update_options("host-update-separate", UpdateOn::host, async));
  const EpochResult want = on_device.train_steps(3);
  on_host.tracer().start();
  const EpochResult got = on_host.train_steps(3);
  on_host.tracer().stop();
  EXPECT_NEAR(got.stats.mean_loss(), want.stats.mean_loss(),
              1e-6 * std::abs(want.stats.mean_loss()));

  const auto want_params = on_device.network().parameters();
  const auto got_params = on_host.network().parameters();
  ASSERT_EQ(want_params.size(), got_params.size());
  for (size_t i = 0; i < want_params.size(); ++i) {
    EXPECT_FALSE(got_params[i]->value.on_host()) << "the weights stay in the backend's memory";
    const Tensor got_w = to_host(got_params[i]->value), want_w = to_host(want_params[i]->value);
    double scale = 0, error = 0;
    for (int64_t k = 0; k < want_w.size(); ++k) {
      scale = std::max(scale, static_cast<double>(std::abs(want_w.data()[k])));
      error = std::max(error, static_cast<double>(std::abs(got_w.data()[k] - want_w.data()[k])));
    }
    EXPECT_LE(error, 1e-6 * scale) << want_params[i]->name;
  }

  // Lanes: 0..3 the replicas' (2 streams each; lane 1 updates), 4 uploads, 5 is the host's.
  const profiler::Trace trace = on_host.tracer().collect({});
  std::map<std::string, std::set<int>> lanes_of;
  for (const profiler::Activity& a : trace.activities) lanes_of[a.name].insert(a.stream);
  EXPECT_EQ(lanes_of["sgd"], (std::set<int>{5}));
  EXPECT_EQ(lanes_of["memcpy.dtoh"], (std::set<int>{1}));
  EXPECT_EQ(lanes_of["memcpy.htod"], (std::set<int>{4}));
  std::set<std::string> host_lane_ranges;
  for (const profiler::Range& r : trace.ranges)
    if (r.lane == 5) host_lane_ranges.insert(r.name);
  EXPECT_TRUE(host_lane_ranges.count("host update")) << "the host's SGD has its own phase range";
  EXPECT_TRUE(host_lane_ranges.count("fc3")) << "and a layer range per layer";
}

INSTANTIATE_TEST_SUITE_P(SyncAndAsync, HostUpdate, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "async" : "sync";
                         });

constexpr int kReluPerStep = 4 * 2;  // lenet5's relu1..relu4, in each of the 2 replicas

TEST(HostUpdateOverlap, AsyncUpdateRunsTheNextForwardWhileTheHostUpdates) {
  TrainingSession session(host_update_options("host-update-separate", UpdateOn::host, true));
  const int parameters = static_cast<int>(session.network().parameters().size());
  // Hold the last SGD call of the first step (the last layer's bias) until the device
  // has run a forward kernel of the second step; the timeout only ends a failure.
  gate().arm(parameters, kReluPerStep, std::chrono::seconds(60));
  session.tracer().start();
  session.train_steps(2);
  session.tracer().stop();
  EXPECT_TRUE(gate().overlapped())
      << "no forward kernel of step 2 ran before the host finished step 1's update";

  // The trace shows it: a relu.fwd kernel of step 2 on a compute lane (0 or 2) ends
  // before the host lane (5) ends step 1's last host-update range (the 5th of lenet5's
  // 5 parameter layers).
  const profiler::Trace trace = session.tracer().collect({});
  std::vector<const profiler::Range*> host_updates;
  for (const profiler::Range& r : trace.ranges)
    if (r.name == "host update" && r.lane == 5) host_updates.push_back(&r);
  ASSERT_EQ(host_updates.size(), 10u);
  std::sort(host_updates.begin(), host_updates.end(),
            [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  const int64_t step1_updated = host_updates[4]->end_ns;
  bool overlapped = false;
  for (int lane : {0, 2}) {
    std::vector<int64_t> relu_ends;
    for (const profiler::Activity& a : trace.activities)
      if (a.name == "relu.fwd" && a.stream == lane) relu_ends.push_back(a.end_ns);
    ASSERT_EQ(relu_ends.size(), 8u) << "lane " << lane;
    std::sort(relu_ends.begin(), relu_ends.end());
    overlapped = overlapped || relu_ends[4] < step1_updated;  // step 2's first relu
  }
  EXPECT_TRUE(overlapped)
      << "the trace shows no forward kernel of step 2 before step 1's host update ended";
}

TEST(HostUpdateOverlap, SyncUpdateFinishesTheHostUpdateBeforeTheNextForward) {
  TrainingSession session(host_update_options("host-update-separate", UpdateOn::host, false));
  const int parameters = static_cast<int>(session.network().parameters().size());
  // The control: a synchronous step ends with its updates, so the hold must time out.
  gate().arm(parameters, kReluPerStep, std::chrono::milliseconds(300));
  session.train_steps(2);
  EXPECT_FALSE(gate().overlapped());
}

TEST(HostUpdateRefusal, ABackendWhoseMemoryIsTheHostsRefusesIt) {
  SessionOptions options = host_update_options("cpu", UpdateOn::host, true);
  try {
    TrainingSession session(options);
    FAIL() << "cpu accepted the update on the host";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    const std::string message = e.what();
    EXPECT_NE(message.find("update_on host"), std::string::npos) << message;
    EXPECT_NE(message.find("backend cpu keeps its tensors in host memory"), std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace tunescope
