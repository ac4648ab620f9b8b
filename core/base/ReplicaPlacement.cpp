#include "core/base/ReplicaPlacement.h"

#include "core/base/Error.h"

namespace tunescope {

std::vector<int> place_replicas(const ReplicaPlacementInput& in) {
  if (in.replicas < 1) fail(ErrorKind::usage, "replicas must be >= 1, got ", in.replicas);
  if (in.devices < 1)
    fail(ErrorKind::usage, "backend ", in.backend, " sees no device for ", in.replicas,
         " replicas");
  if (in.devices == 1 || in.replicas == 1)
    return std::vector<int>(static_cast<size_t>(in.replicas), 0);
  if (in.replicas > in.devices)
    fail(ErrorKind::usage, "replicas ", in.replicas, " on ", in.backend, ": ", in.devices,
         " devices; run one replica per device (replicas <= ", in.devices,
         ") or make one device visible (CUDA_VISIBLE_DEVICES) to run them all on it");
  if (!in.cross_device)
    fail(ErrorKind::usage, "replicas ", in.replicas, " on ", in.backend, " across ", in.devices,
         " devices needs a cross-device all-reduce: ", in.cross_device_missing,
         "; use replicas 1 or make one device visible (CUDA_VISIBLE_DEVICES=0)");
  std::vector<int> devices;
  for (int r = 0; r < in.replicas; ++r) devices.push_back(r);
  return devices;
}

}  // namespace tunescope
