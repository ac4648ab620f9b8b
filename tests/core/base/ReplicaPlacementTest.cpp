// Where replicas run on a backend with devices (core/base/ReplicaPlacement.h): pure
// logic, run here without any device, for the placements and refusals the cuda backend
// makes.
#include <gtest/gtest.h>

#include <string>

#include "core/base/Error.h"
#include "core/base/ReplicaPlacement.h"

namespace tunescope {
namespace {

ReplicaPlacementInput input(int replicas, int devices, bool cross_device = true) {
  return {"cuda", replicas, devices, cross_device,
          cross_device ? "" : "tunescope was built without NCCL"};
}

std::string message_of(const ReplicaPlacementInput& in) {
  try {
    place_replicas(in);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    return e.what();
  }
  ADD_FAILURE() << "placed " << in.replicas << " replicas on " << in.devices << " devices";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ReplicaPlacement, OneDeviceTakesEveryReplicaWithoutACollective) {
  EXPECT_EQ(place_replicas(input(1, 1)), std::vector<int>({0}));
  EXPECT_EQ(place_replicas(input(4, 1, false)), std::vector<int>({0, 0, 0, 0}));
}

TEST(ReplicaPlacement, OneReplicaStaysOnDeviceZeroWhateverTheDevices) {
  EXPECT_EQ(place_replicas(input(1, 8, false)), std::vector<int>({0}));
}

TEST(ReplicaPlacement, SeveralDevicesTakeOneReplicaEach) {
  EXPECT_EQ(place_replicas(input(2, 2)), std::vector<int>({0, 1}));
  EXPECT_EQ(place_replicas(input(3, 4)), std::vector<int>({0, 1, 2}));  // device 3 idle
}

TEST(ReplicaPlacement, MoreReplicasThanDevicesIsRefusedNamingBoth) {
  const std::string text = message_of(input(3, 2));
  EXPECT_TRUE(contains(text, "replicas 3 on cuda: 2 devices")) << text;
  EXPECT_TRUE(contains(text, "replicas <= 2")) << text;
  EXPECT_TRUE(contains(text, "CUDA_VISIBLE_DEVICES")) << text;
}

TEST(ReplicaPlacement, SeveralDevicesWithoutACollectiveIsRefusedSayingWhy) {
  const std::string text = message_of(input(2, 2, false));
  EXPECT_TRUE(contains(text, "replicas 2 on cuda across 2 devices needs a cross-device all-reduce"))
      << text;
  EXPECT_TRUE(contains(text, "built without NCCL")) << text;
}

TEST(ReplicaPlacement, NonsenseCountsAreRefused) {
  EXPECT_TRUE(contains(message_of(input(0, 2)), "replicas must be >= 1, got 0"));
  EXPECT_TRUE(contains(message_of(input(2, 0)), "sees no device"));
}

}  // namespace
}  // namespace tunescope
