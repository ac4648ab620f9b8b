// The fully connected layer on the device: three cuBLAS SGEMM calls in FP32 on the lane
// stream's handle (StreamHandles.h keeps CUBLAS_DEFAULT_MATH, so no TF32 and results
// compare with the CPU's sgemm). cuBLAS is column-major: a row-major R x C matrix is
// its C x R transpose there, so each row-major product below is written as the
// column-major product of the transposes, e.g. y = x * W^T becomes y^T = W * x^T.
#include <cublas_v2.h>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/CudaOpsSupport.h"
#include "kernels/cuda/StreamHandles.h"

namespace tunescope::cuda {

using namespace op_checks;

namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

cublasHandle_t cublas_of(const ExecContext& ctx) { return handles_for(stream_of(ctx)).cublas; }

}  // namespace

void CudaOps::fc_forward(const ExecContext& ctx, const Tensor& x, const Tensor& weight,
                         const Tensor& bias, Tensor& y) {
  check_fc_weight("fc.fwd", "x", x, "weight", weight);
  const int64_t batch = x.shape().n, outputs = weight.shape().n, features = x.shape().item_count();
  check_channel_param("fc.fwd", "bias", bias, outputs);
  check_fc_outputs("fc.fwd", "y", y, batch, outputs, x.layout());
  check_on_device("fc.fwd", {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}});
  OpRange range(ctx, "fc.fwd");
  // Seeding y with the bias lets the GEMM add it (beta = 1).
  TS_CUDA_CHECK(launch_fill_rows(bias.data(), y.data(), batch, outputs, stream_of(ctx)));
  // y^T[OUT, N] = W[OUT, D] (W^T column-major, transposed back) * x^T[D, N].
  TS_CUDA_CHECK(cublasSgemm(cublas_of(ctx), CUBLAS_OP_T, CUBLAS_OP_N, blas_int(outputs),
                            blas_int(batch), blas_int(features), &kOne, weight.data(),
                            blas_int(features), x.data(), blas_int(features), &kOne, y.data(),
                            blas_int(outputs)));
}

void CudaOps::fc_backward_data(const ExecContext& ctx, const Tensor& dy, const Tensor& weight,
                               Tensor& dx) {
  check_fc_weight("fc.bwd_data", "dx", dx, "weight", weight);
  const int64_t batch = dx.shape().n, outputs = weight.shape().n,
                features = dx.shape().item_count();
  check_fc_outputs("fc.bwd_data", "dy", dy, batch, outputs, dx.layout());
  check_on_device("fc.bwd_data", {{"dy", &dy}, {"weight", &weight}, {"dx", &dx}});
  OpRange range(ctx, "fc.bwd_data");
  // dx[N, D] = dy[N, OUT] * W[OUT, D]  <=>  dx^T[D, N] = W^T[D, OUT] * dy^T[OUT, N].
  TS_CUDA_CHECK(cublasSgemm(cublas_of(ctx), CUBLAS_OP_N, CUBLAS_OP_N, blas_int(features),
                            blas_int(batch), blas_int(outputs), &kOne, weight.data(),
                            blas_int(features), dy.data(), blas_int(outputs), &kZero, dx.data(),
                            blas_int(features)));
}

void CudaOps::fc_backward_weight(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                                 Tensor& dweight, Tensor& dbias) {
  check_fc_weight("fc.bwd_weight", "x", x, "dweight", dweight);
  const int64_t batch = x.shape().n, outputs = dweight.shape().n, features = x.shape().item_count();
  check_fc_outputs("fc.bwd_weight", "dy", dy, batch, outputs, x.layout());
  check_channel_param("fc.bwd_weight", "dbias", dbias, outputs);
  check_on_device("fc.bwd_weight",
                  {{"x", &x}, {"dy", &dy}, {"dweight", &dweight}, {"dbias", &dbias}});
  OpRange range(ctx, "fc.bwd_weight");
  // dW[OUT, D] = dy^T[OUT, N] * x[N, D]  <=>  dW^T[D, OUT] = x^T[D, N] * dy[N, OUT].
  TS_CUDA_CHECK(cublasSgemm(cublas_of(ctx), CUBLAS_OP_N, CUBLAS_OP_T, blas_int(features),
                            blas_int(outputs), blas_int(batch), &kOne, x.data(), blas_int(features),
                            dy.data(), blas_int(outputs), &kZero, dweight.data(),
                            blas_int(features)));
  const DeviceShape shape = device_shape(dy);
  StreamScratch partials(channel_partials_bytes(shape, 1), stream_of(ctx), "fc.bwd_weight");
  TS_CUDA_CHECK(
      launch_channel_sums(dy.data(), shape, partials.as<double>(), dbias.data(), stream_of(ctx)));
}

}  // namespace tunescope::cuda
