// The arguments of a `tunescope tune` small enough for a CLI test: lenet5 on 64 fake
// examples at batch 8, both layouts. Each test appends its own space and outputs.
#pragma once

#include <string>
#include <vector>

namespace tunescope::test_support {

inline std::vector<std::string> tiny_lenet5_tune_args() {
  return {"tune",         "--model", "lenet5",  "--data", "fake",      "--fake-count", "64",
          "--test-limit", "16",      "--batch", "8",      "--layouts", "nchw,nhwc"};
}

}  // namespace tunescope::test_support
