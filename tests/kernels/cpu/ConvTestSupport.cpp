// Reference convolution and helpers for the convolution tests (see ConvTestSupport.h).
#include "ConvTestSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/ExecContext.h"
#include "core/base/Registry.h"
#include "kernels/cpu/FftTileChoice.h"

namespace tunescope::conv_test {

void fill_uniform(Tensor& t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = dist(rng);
}

ConvOperands random_operands(const ConvProblem& p, uint32_t seed) {
  ConvOperands ops{Tensor(p.input, p.layout), Tensor(p.filter(), p.layout),
                   Tensor(p.output(), p.layout)};
  fill_uniform(ops.x, seed);
  fill_uniform(ops.w, seed + 1);
  fill_uniform(ops.dy, seed + 2);
  return ops;
}

namespace {

// Calls visit(n, k, p, q, c, f, r, s, h, w) for every tap that reads inside the input:
// input channel c is filter channel f of output channel k (f = c but for groups > 1,
// where k sees only its group's input channels).
template <typename Visit>
void for_each_tap(const ConvProblem& pr, Visit visit) {
  const Shape4 out = pr.output();
  const int64_t group_inputs = pr.input.c / pr.groups;
  const int64_t group_outputs = pr.out_channels / pr.groups;
  for (int64_t n = 0; n < pr.input.n; ++n)
    for (int64_t k = 0; k < pr.out_channels; ++k)
      for (int64_t p = 0; p < out.h; ++p)
        for (int64_t q = 0; q < out.w; ++q)
          for (int64_t f = 0; f < group_inputs; ++f)
            for (int64_t r = 0; r < pr.kernel_h; ++r)
              for (int64_t s = 0; s < pr.kernel_w; ++s) {
                const int64_t c = k / group_outputs * group_inputs + f;
                const int64_t h = p * pr.stride_h + r - pr.pad_h;
                const int64_t w = q * pr.stride_w + s - pr.pad_w;
                if (h >= 0 && h < pr.input.h && w >= 0 && w < pr.input.w)
                  visit(n, k, p, q, c, f, r, s, h, w);
              }
}

// Accumulates in double by logical index, then stores into a float tensor.
struct DoubleTensor {
  Shape4 shape;
  std::vector<double> values;
  explicit DoubleTensor(Shape4 s) : shape(s), values(static_cast<size_t>(s.count()), 0.0) {}
  double& at(int64_t n, int64_t c, int64_t h, int64_t w) {
    return values[static_cast<size_t>(((n * shape.c + c) * shape.h + h) * shape.w + w)];
  }
  Tensor to_tensor(Layout layout) {
    Tensor t(shape, layout);
    for (int64_t n = 0; n < shape.n; ++n)
      for (int64_t c = 0; c < shape.c; ++c)
        for (int64_t h = 0; h < shape.h; ++h)
          for (int64_t w = 0; w < shape.w; ++w)
            t.at(n, c, h, w) = static_cast<float>(at(n, c, h, w));
    return t;
  }
};

// `t` where `backend`'s kernels read it (a copy in its memory), or `t` itself.
const Tensor& placed(const Tensor& t, Backend* backend, Tensor& copy) {
  if (!backend || &t.memory() == &backend->memory()) return t;
  copy = to_memory(t, backend->memory());
  return copy;
}

template <typename Pass>
Tensor run_pass(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool, Shape4 out_shape,
                Backend* backend, Pass pass) {
  MemorySpace& memory = backend ? backend->memory() : host_memory();
  Tensor out(out_shape, p.layout, memory);
  out.fill(std::numeric_limits<float>::quiet_NaN());
  const size_t bytes = algo.workspace_bytes(p);
  AlignedBuffer workspace(bytes, memory);
  const NativeStream stream = backend ? backend->lane_stream(0, 0) : NativeStream{};
  const ExecContext exec{pool, nullptr, 0, 0, stream};
  const ConvCall call{p, exec, bytes ? workspace.data() : nullptr, bytes};
  pass(call, out);
  if (backend) backend->finish_stream(stream);
  return out.on_host() ? out : to_host(out);
}

}  // namespace

Tensor reference_forward(const ConvProblem& p, const Tensor& x, const Tensor& w) {
  DoubleTensor y(p.output());
  for_each_tap(p, [&](int64_t n, int64_t k, int64_t op, int64_t oq, int64_t c, int64_t f, int64_t r,
                      int64_t s, int64_t h, int64_t iw) {
    y.at(n, k, op, oq) += static_cast<double>(x.at(n, c, h, iw)) * w.at(k, f, r, s);
  });
  return y.to_tensor(p.layout);
}

Tensor reference_backward_data(const ConvProblem& p, const Tensor& dy, const Tensor& w) {
  DoubleTensor dx(p.input);
  for_each_tap(p, [&](int64_t n, int64_t k, int64_t op, int64_t oq, int64_t c, int64_t f, int64_t r,
                      int64_t s, int64_t h, int64_t iw) {
    dx.at(n, c, h, iw) += static_cast<double>(dy.at(n, k, op, oq)) * w.at(k, f, r, s);
  });
  return dx.to_tensor(p.layout);
}

Tensor reference_backward_filter(const ConvProblem& p, const Tensor& x, const Tensor& dy) {
  DoubleTensor dw(p.filter());
  for_each_tap(p, [&](int64_t n, int64_t k, int64_t op, int64_t oq, int64_t c, int64_t f, int64_t r,
                      int64_t s, int64_t h, int64_t iw) {
    dw.at(k, f, r, s) += static_cast<double>(dy.at(n, k, op, oq)) * x.at(n, c, h, iw);
  });
  return dw.to_tensor(p.layout);
}

std::vector<std::string> cpu_algorithms() {
  std::vector<std::string> names = Registry::instance().conv_algorithms("cpu");
  names.push_back("fft-fftw@8");
  names.push_back("fft-own@8");
  return names;
}

std::unique_ptr<ConvAlgorithm> make_algorithm(const std::string& name, const std::string& backend) {
  const size_t at = name.find('@');
  if (at == std::string::npos) return Registry::instance().make_conv_algorithm(backend, name);
  KnobValues knobs;
  fft_tile_knob.set(knobs, *parse_fft_tile_choice(name.substr(at + 1)));
  return Registry::instance().make_conv_algorithm(backend, name.substr(0, at), knobs);
}

Backend* test_backend(const std::string& name, std::string* reason) {
  struct Made {
    std::unique_ptr<Backend> backend;
    std::string reason;
  };
  static std::map<std::string, Made> made;
  auto [it, inserted] = made.try_emplace(name);
  if (inserted) {
    try {
      it->second.backend = Registry::instance().make_backend(name);
    } catch (const Error& error) {
      it->second.reason = error.what();
    }
  }
  if (reason) *reason = it->second.reason;
  return it->second.backend.get();
}

ConvCall call_over(const ConvProblem& p, const ExecContext& exec, AlignedBuffer& workspace,
                   AlignedBuffer* saved) {
  return ConvCall{p,
                  exec,
                  workspace.data(),
                  workspace.bytes(),
                  saved ? saved->data() : nullptr,
                  saved ? saved->bytes() : 0};
}

Tensor run_forward(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool, const Tensor& x,
                   const Tensor& w, Backend* backend) {
  Tensor x_copy, w_copy;
  const Tensor& bx = placed(x, backend, x_copy);
  const Tensor& bw = placed(w, backend, w_copy);
  return run_pass(algo, p, pool, p.output(), backend,
                  [&](const ConvCall& call, Tensor& y) { algo.forward(call, bx, bw, y); });
}

Tensor run_backward_data(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool,
                         const Tensor& dy, const Tensor& w, Backend* backend) {
  Tensor dy_copy, w_copy;
  const Tensor& bdy = placed(dy, backend, dy_copy);
  const Tensor& bw = placed(w, backend, w_copy);
  return run_pass(algo, p, pool, p.input, backend,
                  [&](const ConvCall& call, Tensor& dx) { algo.backward_data(call, bdy, bw, dx); });
}

Tensor run_backward_filter(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool,
                           const Tensor& x, const Tensor& dy, Backend* backend) {
  Tensor x_copy, dy_copy;
  const Tensor& bx = placed(x, backend, x_copy);
  const Tensor& bdy = placed(dy, backend, dy_copy);
  return run_pass(algo, p, pool, p.filter(), backend, [&](const ConvCall& call, Tensor& dw) {
    algo.backward_filter(call, bx, bdy, dw);
  });
}

double tolerance_for(const std::string& algorithm, const std::string& backend) {
  const auto starts = [&](const char* prefix) { return algorithm.rfind(prefix, 0) == 0; };
  if (backend == "cuda") {
    if (starts("cudnn:winograd") || algorithm == "cudnn:find") return 5e-3;
    if (starts("cudnn:fft") || starts("fft")) return 2e-3;
    return 1e-3;
  }
  const bool transforms =
      starts("fft") || algorithm == "onednn:winograd" || algorithm == "onednn:auto";
  return transforms ? 1e-3 : 1e-4;
}

double relative_error(const Tensor& a, const Tensor& reference) {
  if (!(a.shape() == reference.shape())) return std::numeric_limits<double>::infinity();
  const Shape4 s = a.shape();
  double max_diff = 0.0, max_ref = 0.0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) {
          const double got = a.at(n, c, h, w), want = reference.at(n, c, h, w);
          if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
          max_diff = std::max(max_diff, std::abs(got - want));
          max_ref = std::max(max_ref, std::abs(want));
        }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

Tensor to_layout(const Tensor& t, Layout layout) {
  Tensor out(t.shape(), layout);
  convert_layout(t, out);
  return out;
}

ConvProblem with_layout(ConvProblem problem, Layout layout) {
  problem.layout = layout;
  return problem;
}

ConvProblem make_problem(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r,
                         int64_t s, int64_t stride_h, int64_t stride_w, int64_t pad_h,
                         int64_t pad_w, int64_t groups) {
  ConvProblem p;
  p.groups = groups;
  p.input = {n, c, h, w};
  p.out_channels = k;
  p.kernel_h = r;
  p.kernel_w = s;
  p.stride_h = stride_h;
  p.stride_w = stride_w;
  p.pad_h = pad_h;
  p.pad_w = pad_w;
  return p;
}

}  // namespace tunescope::conv_test
