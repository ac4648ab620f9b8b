#include "core/base/Layout.h"

#include <algorithm>
#include <cctype>

#include "core/base/Error.h"

namespace tunescope {

std::string to_string(Layout layout) { return layout == Layout::NCHW ? "nchw" : "nhwc"; }

Layout parse_layout(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (lower == "nchw") return Layout::NCHW;
  if (lower == "nhwc") return Layout::NHWC;
  fail(ErrorKind::usage, "unknown layout '", text, "' (expected nchw or nhwc)");
}

}  // namespace tunescope
