// Shared by the tests of the cuda backend's convolution algorithms (cudnn:*, fft-cufft,
// fft-own): the model layers they all run, a lane stream, one pass on the device from host
// operands, and the CPU `direct` results every algorithm is compared with.
#pragma once

#include <cuda_runtime_api.h>

#include <limits>
#include <vector>

#include "core/base/AlignedBuffer.h"
#include "core/base/ConvAlgorithm.h"
#include "core/base/ThreadPool.h"
#include "kernels/cuda/CudaMemory.h"
#include "profiler/Tracer.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

namespace tunescope::cuda::conv_test_cuda {

// lenet5 and resnet18-small layers (batch 4 keeps the CPU reference quick) plus odd
// shapes: kernels 1, 3 and 5, strides 1 and 2, padding; NCHW (tests run both layouts).
std::vector<conv_test::NamedProblem> model_layers();

// Lane 0's stream on device 0, made on first use.
cudaStream_t lane_stream();

// Runs one pass on device 0 on the lane stream with a workspace of workspace_bytes();
// the host result. The output starts as NaN, so an element the pass does not write fails
// the comparison.
template <typename Pass>
Tensor device_pass(ConvAlgorithm& algo, const ConvProblem& p, Shape4 out_shape, Pass pass,
                   profiler::Tracer* tracer = nullptr) {
  MemorySpace& memory = CudaMemory::of_device(0);
  Tensor out(out_shape, p.layout, memory);
  out.fill(std::numeric_limits<float>::quiet_NaN());
  const size_t bytes = algo.workspace_bytes(p);
  AlignedBuffer workspace(bytes, memory);
  ThreadPool pool(1);
  const ExecContext exec{pool, tracer, 0, 0, NativeStream(lane_stream())};
  pass(ConvCall{p, exec, bytes ? workspace.data() : nullptr, bytes}, out);
  LaneStreams::finish(lane_stream());
  return to_host(out);
}

// Host operands and the CPU direct results of one problem, computed once per problem.
struct Reference {
  conv_test::ConvOperands host;
  Tensor y, dx, dw;
};
const Reference& reference_for(const ConvProblem& p);

}  // namespace tunescope::cuda::conv_test_cuda
