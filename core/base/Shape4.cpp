#include "core/base/Shape4.h"

#include "core/base/Error.h"

namespace tunescope {

std::string Shape4::str() const { return cat(n, "x", c, "x", h, "x", w); }

}  // namespace tunescope
