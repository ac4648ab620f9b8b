// The fully connected layer on the CPU: three sgemm calls on flattened items. x and the
// weight share a layout, so a row of either is one contiguous run in the same physical
// order and no layout needs a transpose. The products are split into panels over the
// pool by parallel_sgemm because OpenBLAS itself runs single-threaded. Forward transposes
// the weight first: OpenBLAS ran x * weight^T on LeNet-5's small panels much slower than
// the plain product (docs/BENCHMARKS.md).
#include <algorithm>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

namespace {

// dst[cols x rows] = src[rows x cols]^T, written in order (the faster loop order on fc1's
// 120 x 400 weight, and faster than 16 x 16 tiles).
void transpose_matrix(const float* src, int64_t rows, int64_t cols, float* dst) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) dst[c * rows + r] = src[r * cols + c];
}

double gemm_flops(int64_t batch, int64_t outputs, int64_t features) {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(outputs) *
         static_cast<double>(features);
}

}  // namespace

void CpuOps::fc_forward(const ExecContext& ctx, const Tensor& x, const Tensor& weight,
                        const Tensor& bias, Tensor& y) {
  check_fc_weight("fc.fwd", "x", x, "weight", weight);
  const int64_t batch = x.shape().n, outputs = weight.shape().n, features = x.shape().item_count();
  check_channel_param("fc.fwd", "bias", bias, outputs);
  check_fc_outputs("fc.fwd", "y", y, batch, outputs, x.layout());
  profiler::KernelScope scope(ctx.tracer, "fc.fwd", ctx.device, ctx.lane,
                              gemm_flops(batch, outputs, features),
                              static_cast<double>(x.bytes() + weight.bytes() + y.bytes()));
  // Seeding y with the bias lets sgemm add it for free (beta = 1).
  float* yd = y.data();
  for (int64_t n = 0; n < batch; ++n) std::copy_n(bias.data(), outputs, yd + n * outputs);
  // y = x * weight_t with weight_t = weight^T made here: every panel a plain product.
  thread_local std::vector<float> weight_t;  // the calling lane's; reused across steps
  weight_t.resize(static_cast<size_t>(features * outputs));
  transpose_matrix(weight.data(), outputs, features, weight_t.data());
  parallel_sgemm(ctx.pool, Gemm{.trans_a = false,
                                .trans_b = false,
                                .m = batch,
                                .n = outputs,
                                .k = features,
                                .a = x.data(),
                                .lda = features,
                                .b = weight_t.data(),
                                .ldb = outputs,
                                .beta = 1.0f,
                                .c = yd,
                                .ldc = outputs});
}

void CpuOps::fc_backward_data(const ExecContext& ctx, const Tensor& dy, const Tensor& weight,
                              Tensor& dx) {
  check_fc_weight("fc.bwd_data", "dx", dx, "weight", weight);
  const int64_t batch = dx.shape().n, outputs = weight.shape().n,
                features = dx.shape().item_count();
  check_fc_outputs("fc.bwd_data", "dy", dy, batch, outputs, dx.layout());
  profiler::KernelScope scope(ctx.tracer, "fc.bwd_data", ctx.device, ctx.lane,
                              gemm_flops(batch, outputs, features),
                              static_cast<double>(dx.bytes() + weight.bytes() + dy.bytes()));
  // dx[N, D] = dy[N, OUT] * weight[OUT, D]
  parallel_sgemm(ctx.pool, Gemm{.trans_a = false,
                                .trans_b = false,
                                .m = batch,
                                .n = features,
                                .k = outputs,
                                .a = dy.data(),
                                .lda = outputs,
                                .b = weight.data(),
                                .ldb = features,
                                .beta = 0.0f,
                                .c = dx.data(),
                                .ldc = features});
}

void CpuOps::fc_backward_weight(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                                Tensor& dweight, Tensor& dbias) {
  check_fc_weight("fc.bwd_weight", "x", x, "dweight", dweight);
  const int64_t batch = x.shape().n, outputs = dweight.shape().n, features = x.shape().item_count();
  check_fc_outputs("fc.bwd_weight", "dy", dy, batch, outputs, x.layout());
  check_channel_param("fc.bwd_weight", "dbias", dbias, outputs);
  profiler::KernelScope scope(ctx.tracer, "fc.bwd_weight", ctx.device, ctx.lane,
                              gemm_flops(batch, outputs, features),
                              static_cast<double>(x.bytes() + dweight.bytes() + dy.bytes()));
  // dweight[OUT, D] = dy[N, OUT]^T * x[N, D]
  parallel_sgemm(ctx.pool, Gemm{.trans_a = true,
                                .trans_b = false,
                                .m = outputs,
                                .n = features,
                                .k = batch,
                                .a = dy.data(),
                                .lda = outputs,
                                .b = x.data(),
                                .ldb = features,
                                .beta = 0.0f,
                                .c = dweight.data(),
                                .ldc = features});
  channel_sums(ctx.pool, dy, dbias.data());
}

}  // namespace tunescope::cpu
