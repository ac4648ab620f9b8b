// The "gemm" convolution algorithm: im2col + OpenBLAS sgemm for both layouts, backward
// data as sgemm + col2im, backward filter as sgemm summed over the batch.
//
// OpenBLAS runs single-threaded (BlasThreads.cpp), so parallelism is ours: the batch is
// processed in waves of images whose column matrices fit a cache-sized budget; within a
// wave im2col runs over images and sgemm over (image, output tile) items. Backward
// filter sums per-group partial filters (groups depend only on the problem, so the
// workspace does not depend on the pool) and reduces them at the end.
#include <cblas.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/base/ConvAlgorithm.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/Im2col.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/WorkspaceLayout.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {
namespace {

// Column matrices of one wave stay below this, so sgemm reads them from cache soon
// after im2col wrote them; larger waves only add memory traffic.
constexpr int64_t kColumnBudgetBytes = 8 << 20;
// sgemm tiles narrower than this lose more to call overhead than they gain in balance.
constexpr int64_t kMinTileColumns = 64;

struct GemmPlan {
  int64_t wave = 1;          // images whose column matrices are live at once
  int64_t groups = 1;        // backward-filter partial sums; 1 = accumulate straight into dw
  int64_t col_elements = 0;  // per image; 0 when the image is its own column matrix
  size_t col_offset = 0;
  size_t partial_offset = 0;
  size_t bytes = 0;
};

GemmPlan make_plan(const ConvProblem& p) {
  GemmPlan plan;
  const int64_t n = p.input.n;
  plan.col_elements = col_is_identity(p) ? 0 : col_elements(p);
  plan.wave = n;
  if (plan.col_elements > 0) {
    const int64_t fit = std::clamp<int64_t>(
        kColumnBudgetBytes / (plan.col_elements * static_cast<int64_t>(sizeof(float))), 1, n);
    plan.wave = ceil_div(n, ceil_div(n, fit));  // equal waves rather than a short last one
  }
  plan.groups = std::min(plan.wave, parallel_slots(p));
  WorkspaceLayout layout;
  plan.col_offset = layout.add_floats(plan.wave * plan.col_elements);
  plan.partial_offset = layout.add_floats(plan.groups > 1 ? plan.groups * p.filter().count() : 0);
  plan.bytes = layout.total_bytes();
  return plan;
}

struct Dims {
  int64_t C, K, CRS, PQ, image_in, image_out;
  explicit Dims(const ConvProblem& p)
      : C(p.input.c),
        K(p.out_channels),
        CRS(p.input.c * p.kernel_h * p.kernel_w),
        PQ(p.output().h * p.output().w),
        image_in(p.input.item_count()),
        image_out(p.output().item_count()) {}
};

// y_image[:, t0:t1] = W * col (NCHW) or y_image[t0:t1, :] = col * W^T (NHWC), where
// [t0, t1) are output pixels.
void forward_tile(const ConvProblem& p, const Dims& d, const float* w, const float* col, float* y,
                  int64_t t0, int64_t t1) {
  const int n = static_cast<int>(t1 - t0), K = static_cast<int>(d.K), CRS = static_cast<int>(d.CRS),
            PQ = static_cast<int>(d.PQ);
  if (p.layout == Layout::NCHW)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, n, CRS, 1.0f, w, CRS, col + t0, PQ,
                0.0f, y + t0, PQ);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, K, CRS, 1.0f, col + t0 * CRS, CRS, w,
                CRS, 0.0f, y + t0 * K, K);
}

// dcol[:, t0:t1] = W^T * dy (NCHW) or dcol[t0:t1, :] = dy * W (NHWC).
void backward_data_tile(const ConvProblem& p, const Dims& d, const float* w, const float* dy,
                        float* dcol, int64_t t0, int64_t t1) {
  const int n = static_cast<int>(t1 - t0), K = static_cast<int>(d.K), CRS = static_cast<int>(d.CRS),
            PQ = static_cast<int>(d.PQ);
  if (p.layout == Layout::NCHW)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, CRS, n, K, 1.0f, w, CRS, dy + t0, PQ, 0.0f,
                dcol + t0, PQ);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, CRS, K, 1.0f, dy + t0 * K, K, w, CRS,
                0.0f, dcol + t0 * CRS, CRS);
}

// dw = beta * dw + dy * col^T (NCHW) or dy^T * col (NHWC); dw is K x CRS either way.
void backward_filter_image(const ConvProblem& p, const Dims& d, const float* dy, const float* col,
                           float* dw, float beta) {
  const int K = static_cast<int>(d.K), CRS = static_cast<int>(d.CRS), PQ = static_cast<int>(d.PQ);
  if (p.layout == Layout::NCHW)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, K, CRS, PQ, 1.0f, dy, PQ, col, PQ, beta,
                dw, CRS);
  else
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, CRS, PQ, 1.0f, dy, K, col, CRS, beta,
                dw, CRS);
}

// Output pixels per sgemm tile so that a wave of `images` yields about two items per thread.
int64_t tile_pixels(const Dims& d, int64_t images, const ThreadPool& pool) {
  const int64_t max_tiles = std::max<int64_t>(1, d.PQ / kMinTileColumns);
  const int64_t tiles = std::clamp<int64_t>(ceil_div(2 * pool.size(), images), 1, max_tiles);
  return ceil_div(d.PQ, tiles);
}

// Runs body(image_in_wave, t0, t1) over every (image, pixel tile) of a wave in parallel.
template <typename Body>
void for_each_tile(ThreadPool& pool, const Dims& d, int64_t images, Body body) {
  const int64_t tile = tile_pixels(d, images, pool);
  const int64_t tiles = ceil_div(d.PQ, tile);
  pool.parallel_for(images * tiles, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t0 = item % tiles * tile;
      body(item / tiles, t0, std::min(d.PQ, t0 + tile));
    }
  });
}

class ConvGemm final : public ConvAlgorithm {
 public:
  std::string name() const override { return "gemm"; }
  std::string unsupported_reason(const ConvProblem& problem) const override {
    return invalid_problem_reason(problem);
  }
  size_t workspace_bytes(const ConvProblem& problem) const override {
    return make_plan(problem).bytes;
  }

  // What every pass does first: checks the tensors and the workspace, then plans the
  // waves of images whose column matrices fit the workspace.
  GemmPlan begin_pass(const ConvCall& call, ConvPass pass, const Tensor& a, const Tensor& b,
                      const Tensor& out) const {
    check_conv_args(name(), pass, call.problem, a, b, out);
    GemmPlan plan = make_plan(call.problem);
    check_workspace(name(), call, plan.bytes);
    return plan;
  }

  // Unfolds `images` images starting at x0 into their column matrices, one per image.
  static void im2col_wave(const ExecContext& ex, const char* kernel, const ConvProblem& p,
                          const Dims& d, const GemmPlan& plan, const float* x0, int64_t images,
                          float* cols) {
    profiler::KernelScope k(ex.tracer, kernel, ex.device, ex.lane, 0,
                            images * (d.image_in + plan.col_elements) * 4.0);
    ex.pool.parallel_for(images, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) im2col(p, x0 + i * d.image_in, cols + i * plan.col_elements);
    });
  }

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    const ConvProblem& p = call.problem;
    const GemmPlan plan = begin_pass(call, ConvPass::forward, x, w, y);
    const Dims d(p);
    const ExecContext& ex = call.exec;
    float* cols = WorkspaceLayout::at(call.workspace, plan.col_offset);
    for (int64_t first = 0; first < p.input.n; first += plan.wave) {
      const int64_t images = std::min(plan.wave, p.input.n - first);
      const float* x0 = x.data() + first * d.image_in;
      if (plan.col_elements > 0) im2col_wave(ex, "gemm.fwd.im2col", p, d, plan, x0, images, cols);
      profiler::KernelScope k(ex.tracer, "gemm.fwd.sgemm", ex.device, ex.lane,
                              p.flops() * images / p.input.n,
                              images * (d.CRS * d.PQ + d.image_out) * 4.0 + w.bytes());
      for_each_tile(ex.pool, d, images, [&](int64_t i, int64_t t0, int64_t t1) {
        const float* col =
            plan.col_elements > 0 ? cols + i * plan.col_elements : x0 + i * d.image_in;
        forward_tile(p, d, w.data(), col, y.data() + (first + i) * d.image_out, t0, t1);
      });
    }
  }

  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    const ConvProblem& p = call.problem;
    const GemmPlan plan = begin_pass(call, ConvPass::backward_data, dy, w, dx);
    const Dims d(p);
    const ExecContext& ex = call.exec;
    float* cols = WorkspaceLayout::at(call.workspace, plan.col_offset);
    for (int64_t first = 0; first < p.input.n; first += plan.wave) {
      const int64_t images = std::min(plan.wave, p.input.n - first);
      float* dx0 = dx.data() + first * d.image_in;
      {
        profiler::KernelScope k(ex.tracer, "gemm.bwd_data.sgemm", ex.device, ex.lane,
                                p.flops() * images / p.input.n,
                                images * (d.CRS * d.PQ + d.image_out) * 4.0 + w.bytes());
        for_each_tile(ex.pool, d, images, [&](int64_t i, int64_t t0, int64_t t1) {
          float* dcol = plan.col_elements > 0 ? cols + i * plan.col_elements : dx0 + i * d.image_in;
          backward_data_tile(p, d, w.data(), dy.data() + (first + i) * d.image_out, dcol, t0, t1);
        });
      }
      if (plan.col_elements > 0) {
        profiler::KernelScope k(ex.tracer, "gemm.bwd_data.col2im", ex.device, ex.lane,
                                static_cast<double>(images * plan.col_elements),
                                images * (d.image_in + plan.col_elements) * 4.0);
        ex.pool.parallel_for(images, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i)
            col2im(p, cols + i * plan.col_elements, dx0 + i * d.image_in);
        });
      }
    }
  }

  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    const ConvProblem& p = call.problem;
    const GemmPlan plan = begin_pass(call, ConvPass::backward_filter, x, dy, dw);
    const Dims d(p);
    const ExecContext& ex = call.exec;
    const int64_t filter_elements = p.filter().count();
    float* cols = WorkspaceLayout::at(call.workspace, plan.col_offset);
    float* partials = WorkspaceLayout::at(call.workspace, plan.partial_offset);
    // Each group owns one partial (or dw itself when alone); its first image overwrites it.
    std::vector<char> started(static_cast<size_t>(plan.groups), 0);
    for (int64_t first = 0; first < p.input.n; first += plan.wave) {
      const int64_t images = std::min(plan.wave, p.input.n - first);
      const float* x0 = x.data() + first * d.image_in;
      if (plan.col_elements > 0)
        im2col_wave(ex, "gemm.bwd_filter.im2col", p, d, plan, x0, images, cols);
      profiler::KernelScope k(ex.tracer, "gemm.bwd_filter.sgemm", ex.device, ex.lane,
                              p.flops() * images / p.input.n,
                              images * (d.CRS * d.PQ + d.image_out) * 4.0 + dw.bytes());
      ex.pool.parallel_for(plan.groups, [&](int64_t gb, int64_t ge) {
        for (int64_t g = gb; g < ge; ++g) {
          float* target = plan.groups > 1 ? partials + g * filter_elements : dw.data();
          for (int64_t i = g * images / plan.groups; i < (g + 1) * images / plan.groups; ++i) {
            const float* col =
                plan.col_elements > 0 ? cols + i * plan.col_elements : x0 + i * d.image_in;
            backward_filter_image(p, d, dy.data() + (first + i) * d.image_out, col, target,
                                  started[g] ? 1.0f : 0.0f);
            started[g] = 1;
          }
        }
      });
    }
    if (plan.groups > 1) {
      profiler::KernelScope k(ex.tracer, "gemm.bwd_filter.reduce", ex.device, ex.lane,
                              static_cast<double>(plan.groups * filter_elements),
                              (plan.groups + 1) * filter_elements * 4.0);
      ex.pool.parallel_for(
          filter_elements,
          [&](int64_t b, int64_t e) {
            float* out = dw.data();
            std::copy(partials + b, partials + e, out + b);
            for (int64_t g = 1; g < plan.groups; ++g) {
              const float* part = partials + g * filter_elements;
              for (int64_t i = b; i < e; ++i) out[i] += part[i];
            }
          },
          1024);
    }
  }
};

const ConvAlgorithmRegistration registration("cpu", "gemm", [](const KnobValues&) {
  return std::make_unique<ConvGemm>();
});

}  // namespace
}  // namespace tunescope::cpu
