// Logical 4-D shape (n, c, h, w); independent of the physical layout.
#pragma once

#include <cstdint>
#include <string>

namespace tunescope {

struct Shape4 {
  int64_t n = 1;
  int64_t c = 1;
  int64_t h = 1;
  int64_t w = 1;

  int64_t count() const { return n * c * h * w; }
  // Elements of one item of the batch.
  int64_t item_count() const { return c * h * w; }
  bool operator==(const Shape4&) const = default;
  std::string str() const;  // "128x3x32x32" (n x c x h x w)
};

}  // namespace tunescope
