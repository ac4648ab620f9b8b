// Tensors in a memory space the host may not read: copies stay in their space, fill and
// zero work there, and to_host / copy_tensor are the only way across.
#include <gtest/gtest.h>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Tensor.h"
#include "tests/core/SeparateMemory.h"

namespace tunescope {
namespace {

TEST(MemorySpace, TensorCopiesStayInTheirSpace) {
  test_support::SeparateMemory device;
  Tensor host({2, 3, 2, 2}, Layout::NHWC);
  for (int64_t i = 0; i < host.size(); ++i) host.data()[i] = static_cast<float>(i);
  const Tensor on_device = to_memory(host, device);
  EXPECT_FALSE(on_device.on_host());
  EXPECT_EQ(&on_device.memory(), &device);
  EXPECT_EQ(device.copies_in, 1);

  const Tensor copy = on_device;  // copy constructor: a copy within the device
  EXPECT_EQ(&copy.memory(), &device);
  EXPECT_EQ(device.copies_within, 1);

  const Tensor back = to_host(copy);
  EXPECT_TRUE(back.on_host());
  EXPECT_EQ(device.copies_out, 1);
  for (int64_t i = 0; i < host.size(); ++i) EXPECT_EQ(back.data()[i], host.data()[i]) << i;
}

TEST(MemorySpace, FillAndZeroWorkOnDeviceTensors) {
  test_support::SeparateMemory device;
  Tensor t({1, 2, 3, 3}, Layout::NCHW, device);
  t.fill(2.5f);  // staged through a host tensor
  Tensor h = to_host(t);
  for (int64_t i = 0; i < h.size(); ++i) EXPECT_EQ(h.data()[i], 2.5f);
  t.zero();
  h = to_host(t);
  for (int64_t i = 0; i < h.size(); ++i) EXPECT_EQ(h.data()[i], 0.0f);
}

TEST(MemorySpace, CopyTensorChecksShapeAndLayout) {
  test_support::SeparateMemory device;
  const Tensor a({1, 2, 2, 2}, Layout::NCHW);
  Tensor other_layout({1, 2, 2, 2}, Layout::NHWC, device);
  Tensor other_shape({1, 2, 2, 3}, Layout::NCHW, device);
  EXPECT_THROW(copy_tensor(a, other_layout), Error);
  EXPECT_THROW(copy_tensor(a, other_shape), Error);
  // The host-only layout conversion refuses device tensors instead of reading them.
  Tensor nhwc({1, 2, 2, 2}, Layout::NHWC);
  EXPECT_THROW(convert_layout(Tensor({1, 2, 2, 2}, Layout::NCHW, device), nhwc), Error);
}

TEST(MemorySpace, BufferFreesInItsSpaceAndMoves) {
  test_support::SeparateMemory device;
  AlignedBuffer a(1000, device);
  EXPECT_EQ(&a.memory(), &device);
  EXPECT_EQ(device.allocations, 1);
  AlignedBuffer b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(b.bytes(), 1000u);
  EXPECT_EQ(&b.memory(), &device);
}

}  // namespace
}  // namespace tunescope
