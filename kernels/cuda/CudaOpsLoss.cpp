// Softmax cross-entropy on the device. The labels come from the host batch and go up
// with the logits' stream; the per-row losses and hits come back and are added on the
// host in row order, so the mean loss does not depend on how rows met threads. The op
// returns the loss, so it is the one op that waits for its stream.
#include <vector>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/CudaOpsSupport.h"

namespace tunescope::cuda {

float CudaOps::softmax_cross_entropy(const ExecContext& ctx, const Tensor& logits,
                                     std::span<const int32_t> labels, Tensor* dlogits,
                                     int64_t* correct) {
  constexpr const char* op = "softmax_xent";
  op_checks::check_softmax_cross_entropy(logits, labels, dlogits);
  check_on_device(op, {{"logits", &logits}});
  if (dlogits) check_on_device(op, {{"dlogits", dlogits}});
  OpRange range(ctx, op);
  const int64_t rows = logits.shape().n, classes = logits.shape().c;
  const cudaStream_t stream = stream_of(ctx);
  const size_t label_bytes = labels.size_bytes(),
               loss_bytes = static_cast<size_t>(rows) * sizeof(double);
  const size_t hit_bytes = static_cast<size_t>(rows) * sizeof(int32_t);
  StreamScratch scratch(loss_bytes + label_bytes + hit_bytes, stream, op);
  double* row_loss = scratch.as<double>();
  int32_t* device_labels = scratch.as<int32_t>(loss_bytes);
  int32_t* row_correct = scratch.as<int32_t>(loss_bytes + label_bytes);
  TS_CUDA_CHECK(
      cudaMemcpyAsync(device_labels, labels.data(), label_bytes, cudaMemcpyHostToDevice, stream));
  TS_CUDA_CHECK(launch_softmax_cross_entropy(
      logits.data(), device_labels, rows, classes, dlogits ? dlogits->data() : nullptr,
      1.0f / static_cast<float>(rows), row_loss, row_correct, stream));
  std::vector<double> losses(static_cast<size_t>(rows));
  std::vector<int32_t> hits(static_cast<size_t>(rows));
  TS_CUDA_CHECK(
      cudaMemcpyAsync(losses.data(), row_loss, loss_bytes, cudaMemcpyDeviceToHost, stream));
  TS_CUDA_CHECK(
      cudaMemcpyAsync(hits.data(), row_correct, hit_bytes, cudaMemcpyDeviceToHost, stream));
  TS_CUDA_CHECK_CTX(cudaStreamSynchronize(stream), "waiting for the loss");
  double total = 0;
  int64_t total_correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    total += losses[static_cast<size_t>(r)];
    total_correct += hits[static_cast<size_t>(r)];
  }
  if (correct) *correct = total_correct;
  return static_cast<float>(total / static_cast<double>(rows));
}

}  // namespace tunescope::cuda
