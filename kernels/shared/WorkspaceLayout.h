// Carves one workspace into 64-byte aligned float arrays. The same code sizes the
// workspace (workspace_bytes) and slices it (in a pass), so the two never disagree.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tunescope {

class WorkspaceLayout {
 public:
  // A slice of `count` floats; returns its offset in bytes.
  size_t add_floats(int64_t count) {
    const size_t offset = total_;
    total_ += (static_cast<size_t>(count) * sizeof(float) + kAlign - 1) / kAlign * kAlign;
    return offset;
  }
  size_t total_bytes() const { return total_; }

  static float* at(void* workspace, size_t offset) {
    return reinterpret_cast<float*>(static_cast<char*>(workspace) + offset);
  }

  static constexpr size_t kAlign = 64;

 private:
  size_t total_ = 0;
};

}  // namespace tunescope
