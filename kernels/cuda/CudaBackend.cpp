// The "cuda" backend's registration. This increment probes the device and describes it;
// the op kernels and device tensors are not written yet, so the factory refuses to hand
// out a backend instead of returning one whose ops would fail or run on the host:
//  - no usable device: Error(usage) "no CUDA device: <driver's message>" (CLI exit 2);
//  - a device: Error(unsupported) "CUDA training kernels are not implemented yet ..."
//    naming the device, so the user sees the GPU was found and what is missing.
// `--backend auto` (core/base/BackendChoice) therefore falls back to cpu on both.
#include <memory>

#include "core/base/Backend.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "kernels/cuda/CudaDevice.h"

namespace tunescope::cuda {
namespace {

std::unique_ptr<Backend> make_cuda_backend() {
  require_cuda_devices();
  const std::string device = describe_cuda_device(query_cuda_device(0), query_library_versions());
  fail(ErrorKind::unsupported, "CUDA training kernels are not implemented yet (found ", device,
       "); use --backend cpu");
}

const BackendRegistration registration("cuda", make_cuda_backend);

}  // namespace
}  // namespace tunescope::cuda
