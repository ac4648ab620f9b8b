// Shared pieces of the cuda convolution tests (see CudaConvTestSupport.h).
#include "CudaConvTestSupport.h"

#include <map>
#include <string>

#include "core/base/Registry.h"

namespace tunescope::cuda::conv_test_cuda {

using conv_test::make_problem;

std::vector<conv_test::NamedProblem> model_layers() {
  return {
      {"lenet5_conv1_5x5", make_problem(4, 1, 32, 32, 6, 5, 5, 1, 1, 0, 0)},
      {"lenet5_conv2_5x5", make_problem(4, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0)},
      {"resnet_stem_3x3", make_problem(4, 3, 32, 32, 16, 3, 3, 1, 1, 1, 1)},
      {"resnet_s1_3x3", make_problem(4, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1)},
      {"resnet_s2_3x3_stride2", make_problem(4, 16, 32, 32, 32, 3, 3, 2, 2, 1, 1)},
      {"resnet_s2_proj_1x1_stride2", make_problem(4, 16, 32, 32, 32, 1, 1, 2, 2, 0, 0)},
      {"resnet_s4_3x3_stride2", make_problem(4, 64, 8, 8, 128, 3, 3, 2, 2, 1, 1)},
      {"resnet_s4_3x3", make_problem(4, 128, 4, 4, 128, 3, 3, 1, 1, 1, 1)},
      {"5x5_pad2", make_problem(4, 8, 16, 16, 8, 5, 5, 1, 1, 2, 2)},
      {"1x1", make_problem(4, 16, 8, 8, 24, 1, 1, 1, 1, 0, 0)},
      {"odd_3x3_pad1", make_problem(3, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1)},
      {"3x5_stride2x1_pad1x2", make_problem(2, 3, 9, 8, 5, 3, 5, 2, 1, 1, 2)},
  };
}

cudaStream_t lane_stream() {
  static LaneStreams streams(0);
  return streams.stream(0);
}

const Reference& reference_for(const ConvProblem& p) {
  static std::map<std::string, Reference> cache;
  auto [it, inserted] = cache.try_emplace(p.key());
  if (inserted) {
    Reference& r = it->second;
    r.host = conv_test::random_operands(p, 53);
    const auto direct = Registry::instance().make_conv_algorithm("cpu", "direct");
    ThreadPool pool(2);
    r.y = conv_test::run_forward(*direct, p, pool, r.host.x, r.host.w);
    r.dx = conv_test::run_backward_data(*direct, p, pool, r.host.dy, r.host.w);
    r.dw = conv_test::run_backward_filter(*direct, p, pool, r.host.x, r.host.dy);
  }
  return it->second;
}

}  // namespace tunescope::cuda::conv_test_cuda
