// Registration of the test-only convolution algorithms (see TestAlgorithms.h); each
// delegates to `direct` so only its deliberate defect differs.
#include "TestAlgorithms.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/SearchSpace.h"
#include "kernels/cpu/ConvWinograd.h"

namespace tunescope::tuner::test_support {

namespace {

enum class Defect {
  wrong,
  filter_off,
  first_filter_off,
  throws,
  nan,
  slow,
  slow_in_network,
  conv1_only,
  segfault,
  abort,
  hang
};

class DefectiveConv final : public ConvAlgorithm {
 public:
  DefectiveConv(std::string name, Defect defect)
      : name_(std::move(name)),
        defect_(defect),
        direct_(Registry::instance().make_conv_algorithm("cpu", "direct")) {}

  std::string name() const override { return name_; }
  std::string unsupported_reason(const ConvProblem& p) const override {
    if (defect_ == Defect::conv1_only && p.input.c != 1) return "only one input channel";
    return direct_->unsupported_reason(p);
  }
  size_t workspace_bytes(const ConvProblem& p) const override {
    return direct_->workspace_bytes(p);
  }

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    if (defect_ == Defect::throws)
      fail(ErrorKind::runtime, name_, ": deliberate failure in forward");
    if (defect_ == Defect::segfault) {
      std::signal(SIGSEGV, SIG_DFL);  // past a sanitizer's handler, which would exit(1) instead
      std::raise(SIGSEGV);
    }
    if (defect_ == Defect::abort) std::abort();
    if (defect_ == Defect::hang) std::this_thread::sleep_for(std::chrono::hours(1));
    pause(call);
    direct_->forward(call, x, w, y);
    if (defect_ == Defect::wrong)
      for (int64_t i = 0; i < y.size(); ++i) y.data()[i] *= 1.5f;
    if (defect_ == Defect::nan) y.fill(std::nanf(""));
  }
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    pause(call);
    direct_->backward_data(call, dy, w, dx);
  }
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    pause(call);
    direct_->backward_filter(call, x, dy, dw);
    const bool first_call = filter_calls_++ == 0;
    if (defect_ == Defect::filter_off || (defect_ == Defect::first_filter_off && first_call))
      for (int64_t i = 0; i < dw.size(); ++i) dw.data()[i] *= kFilterOffScale;
  }

 private:
  void pause(const ConvCall& call) const {
    if (defect_ == Defect::slow) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // A session's calls carry its tracer; the per-layer find's lone layer has none.
    if (defect_ == Defect::slow_in_network && call.exec.tracer)
      std::this_thread::sleep_for(std::chrono::milliseconds(kSlowInNetworkMs));
  }
  std::string name_;
  Defect defect_;
  int64_t filter_calls_ = 0;
  std::unique_ptr<ConvAlgorithm> direct_;
};

class WinogradNoFlip final : public ConvAlgorithm {
 public:
  std::string name() const override { return kWinogradNoFlip; }
  std::string unsupported_reason(const ConvProblem& p) const override {
    return winograd_.unsupported_reason(p);
  }
  size_t workspace_bytes(const ConvProblem& p) const override {
    return winograd_.workspace_bytes(p);
  }
  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    winograd_.forward(call, x, w, y);
  }
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    const Shape4 s = w.shape();
    Tensor rotated(s, w.layout());
    for (int64_t k = 0; k < s.n; ++k)
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t r = 0; r < s.h; ++r)
          for (int64_t q = 0; q < s.w; ++q)
            rotated.at(k, c, r, q) = w.at(k, c, s.h - 1 - r, s.w - 1 - q);
    winograd_.backward_data(call, dy, rotated, dx);
  }
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    winograd_.backward_filter(call, x, dy, dw);
  }

 private:
  cpu::ConvWinograd winograd_;
};

const ConvAlgorithmRegistration winograd_registrations[] = {
    {"cpu", kWinogradNoFlip, [](const KnobValues&) { return std::make_unique<WinogradNoFlip>(); }},
    {"cpu", kWinogradF2,
     [](const KnobValues&) { return std::make_unique<cpu::ConvWinograd>(cpu::WinogradTile::f2); }},
};

ConvAlgorithmRegistration make(const char* name, Defect defect) {
  return ConvAlgorithmRegistration("cpu", name, [name, defect](const KnobValues&) {
    return std::make_unique<DefectiveConv>(name, defect);
  });
}

const ConvAlgorithmRegistration registrations[] = {
    make(kWrong, Defect::wrong),
    make(kFilterOff, Defect::filter_off),
    make(kFirstFilterOff, Defect::first_filter_off),
    make(kThrows, Defect::throws),
    make(kNan, Defect::nan),
    make(kSlow, Defect::slow),
    make(kSlowInNetwork, Defect::slow_in_network),
    make(kConv1Only, Defect::conv1_only),
    make(kSegfault, Defect::segfault),
    make(kAbort, Defect::abort),
    make(kHang, Defect::hang),
};

}  // namespace

SessionOptions tiny_session() {
  SessionOptions options;
  options.model = "lenet5";
  options.data = "fake";
  options.fake_train_count = 64;
  options.fake_test_count = 16;
  options.batch = 8;
  knobs::threads.set(options.knobs, 1);
  return options;
}

RunConfig config_where_supported(const SessionOptions& base, Layout layout,
                                 const std::string& algorithm) {
  SessionOptions options = base;
  knobs::layout.set(options.knobs, layout);
  options.conv = {};
  TrainingSession session(options);
  const auto algo = Registry::instance().make_conv_algorithm("cpu", algorithm);
  RunConfig c = config_with(base, layout, "direct");
  for (const ConvLayerInfo& layer : conv_layers(session.network()))
    if (algo->supports(layer.problem)) c.conv.per_layer[layer.name] = algorithm;
  return c;
}

RunConfig config_with(const SessionOptions& base, Layout layout, const std::string& algorithm) {
  RunConfig c = config_with(base, algorithm);
  knobs::layout.set(c.knobs, layout);
  return c;
}

RunConfig config_with(const SessionOptions& base, const std::string& algorithm) {
  RunConfig c = run_config_of(base);
  c.conv.default_algorithm = algorithm;
  return c;
}

}  // namespace tunescope::tuner::test_support
