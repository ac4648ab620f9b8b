// Shape-fixed partitions and the pool-split sgemm of the CPU op kernels.
#include "kernels/cpu/CpuOpsSupport.h"

#include <cblas.h>

#include "core/base/Error.h"
#include "kernels/cpu/ChannelRuns.h"
#include "kernels/cpu/ElementwiseIsa.h"

namespace tunescope::cpu::ops {

namespace {

// Multiply-adds below which another sgemm panel is not worth a thread hand-off.
constexpr int64_t kGemmPanelWork = int64_t{1} << 18;
constexpr int64_t kMaxGemmPanels = 16;

}  // namespace

Chunks fixed_chunks(int64_t count, int64_t min_size, int64_t max_chunks) {
  Chunks chunks;
  chunks.count = count;
  chunks.size = std::max<int64_t>({1, min_size, ceil_div(count, std::max<int64_t>(1, max_chunks))});
  chunks.number = count > 0 ? ceil_div(count, chunks.size) : 0;
  return chunks;
}

void channel_sums(ThreadPool& pool, const Tensor& t, float* out) {
  const Shape4 s = t.shape();
  // One pixel per plane is stored alike in both layouts; the row form reads it in runs.
  const Layout layout = s.h * s.w == 1 ? Layout::NHWC : t.layout();
  const float* d = t.data();
  const ElementwiseKernelTable& k = elementwise_kernels();
  const auto sums = sum_channel_runs<1>(
      pool, s, layout, [&](int64_t offset, ChannelRun run, int64_t, double* const* sum) {
        k.channel_sum(d + offset, run, sum[0]);
      });
  for (int64_t c = 0; c < s.c; ++c) out[c] = static_cast<float>(sums[0][c]);
}

void parallel_sgemm(ThreadPool& pool, const Gemm& g) {
  if (g.m <= 0 || g.n <= 0) return;
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc}) blas_int(v);
  // Panels along the longer side of C keep each sgemm call as square as possible.
  const bool by_rows = g.m * 2 >= g.n;
  const int64_t side = by_rows ? g.m : g.n;
  const int64_t across = by_rows ? g.n : g.m;
  const int64_t min_side = std::max<int64_t>(
      by_rows ? 8 : 16, ceil_div(kGemmPanelWork, std::max<int64_t>(1, across * g.k)));
  const Chunks panels = fixed_chunks(side, min_side, kMaxGemmPanels);
  const auto ta = g.trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = g.trans_b ? CblasTrans : CblasNoTrans;
  pool.parallel_for(panels.number, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      const int64_t lo = panels.begin(p), len = panels.end(p) - lo;
      const float* a = g.a;
      const float* b = g.b;
      float* c = g.c;
      int64_t m = g.m, n = g.n;
      if (by_rows) {
        a += g.trans_a ? lo : lo * g.lda;
        c += lo * g.ldc;
        m = len;
      } else {
        b += g.trans_b ? lo * g.ldb : lo;
        c += lo;
        n = len;
      }
      cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(g.k), 1.0f, a, static_cast<int>(g.lda), b,
                  static_cast<int>(g.ldb), g.beta, c, static_cast<int>(g.ldc));
    }
  });
}

}  // namespace tunescope::cpu::ops
