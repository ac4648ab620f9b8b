// Where the replicas of a split batch run on a backend with several devices. Pure logic,
// shared by the backends that have devices (cuda) and tested without any.
//
// The rule: one device, or one replica, puts every replica on device 0 (they share its
// memory and their gradients are summed by one kernel on it); otherwise replica r runs
// on device r, one replica per device, which needs a cross-device collective (NCCL) and
// at least as many devices as replicas. Several replicas per device on several devices
// (r mod devices) is refused rather than run: NCCL takes one rank per device, so it would
// need a two-level reduction, and the tuner would measure a split nobody asked for.
#pragma once

#include <string>
#include <vector>

namespace tunescope {

struct ReplicaPlacementInput {
  std::string backend;  // for the message: "cuda"
  int replicas = 1;
  int devices = 1;                   // devices the backend sees (>= 1)
  bool cross_device = false;         // a cross-device all-reduce is available (built with NCCL)
  std::string cross_device_missing;  // why not, for the message ("built without NCCL")
};

// The device of each replica; throws Error(usage) naming the replica and device counts
// (and the missing collective) when the backend cannot place them.
std::vector<int> place_replicas(const ReplicaPlacementInput& in);

}  // namespace tunescope
