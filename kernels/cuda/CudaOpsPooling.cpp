// Max, average and global average pooling on the device (PoolingKernels.cu).
#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/CudaOpsSupport.h"

namespace tunescope::cuda {

using namespace op_checks;

void CudaOps::maxpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                              Tensor& y) {
  const Shape4 out = check_pool("maxpool.fwd", params, x, "x", y, "y");
  check_on_device("maxpool.fwd", {{"x", &x}, {"y", &y}});
  OpRange range(ctx, "maxpool.fwd");
  TS_CUDA_CHECK(launch_maxpool_forward(x.data(), y.data(), device_shape(x),
                                       device_pool(params, out), stream_of(ctx)));
}

void CudaOps::maxpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                               const Tensor& dy, Tensor& dx) {
  const Shape4 out = check_pool("maxpool.bwd", params, x, "x", dy, "dy");
  check_like("maxpool.bwd", "dx", dx, "x", x);
  check_on_device("maxpool.bwd", {{"x", &x}, {"dy", &dy}, {"dx", &dx}});
  OpRange range(ctx, "maxpool.bwd");
  TS_CUDA_CHECK(launch_maxpool_backward(x.data(), dy.data(), dx.data(), device_shape(x),
                                        device_pool(params, out), stream_of(ctx)));
}

void CudaOps::avgpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                              Tensor& y) {
  const Shape4 out = check_pool("avgpool.fwd", params, x, "x", y, "y");
  check_on_device("avgpool.fwd", {{"x", &x}, {"y", &y}});
  OpRange range(ctx, "avgpool.fwd");
  TS_CUDA_CHECK(launch_avgpool_forward(x.data(), y.data(), device_shape(x),
                                       device_pool(params, out), stream_of(ctx)));
}

void CudaOps::avgpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& dy,
                               Tensor& dx) {
  const Shape4 out = check_pool("avgpool.bwd", params, dx, "dx", dy, "dy");
  check_on_device("avgpool.bwd", {{"dy", &dy}, {"dx", &dx}});
  OpRange range(ctx, "avgpool.bwd");
  TS_CUDA_CHECK(launch_avgpool_backward(dy.data(), dx.data(), device_shape(dx),
                                        device_pool(params, out), stream_of(ctx)));
}

void CudaOps::global_avgpool_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_global_pool("gap.fwd", x, "x", y, "y");
  check_on_device("gap.fwd", {{"x", &x}, {"y", &y}});
  OpRange range(ctx, "gap.fwd");
  TS_CUDA_CHECK(launch_global_avgpool_forward(x.data(), y.data(), device_shape(x), stream_of(ctx)));
}

void CudaOps::global_avgpool_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dx) {
  check_global_pool("gap.bwd", dx, "dx", dy, "dy");
  check_on_device("gap.bwd", {{"dy", &dy}, {"dx", &dx}});
  OpRange range(ctx, "gap.bwd");
  TS_CUDA_CHECK(
      launch_global_avgpool_backward(dy.data(), dx.data(), device_shape(dx), stream_of(ctx)));
}

}  // namespace tunescope::cuda
