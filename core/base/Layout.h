// Physical memory order of a 4-D activation or filter tensor.
#pragma once

#include <string>
#include <string_view>

namespace tunescope {

enum class Layout { NCHW, NHWC };

std::string to_string(Layout layout);
// Accepts "nchw" / "nhwc" in any case; throws Error(usage) naming the bad value otherwise.
Layout parse_layout(std::string_view text);

}  // namespace tunescope
