#include "core/engine/ParameterInit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "core/base/Error.h"
#include "core/engine/Layer.h"

namespace tunescope {

void init_he_normal(Tensor& weight, int64_t fan_in, uint64_t seed) {
  if (!weight.on_host()) {  // drawn on the host in the same order, so every backend starts alike
    Tensor host = to_host(weight);
    init_he_normal(host, fan_in, seed);
    return copy_tensor(host, weight);
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / static_cast<float>(fan_in)));
  const Shape4 s = weight.shape();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) weight.at(n, c, h, w) = normal(rng);
}

void load_logical_values(Tensor& tensor, const std::vector<float>& values,
                         const std::string& what) {
  if (static_cast<int64_t>(values.size()) != tensor.size())
    fail(ErrorKind::input, what, ": ", values.size(), " values for a tensor of ", tensor.size());
  Tensor logical(tensor.shape(), Layout::NCHW);  // NCHW storage is logical order
  std::copy(values.begin(), values.end(), logical.data());
  if (tensor.layout() == Layout::NCHW) return copy_tensor(logical, tensor);
  Tensor host(tensor.shape(), tensor.layout());
  convert_layout(logical, host);
  copy_tensor(host, tensor);
}

std::vector<float> logical_values(const Tensor& tensor) {
  Tensor logical(tensor.shape(), Layout::NCHW);
  if (tensor.layout() == Layout::NCHW)
    copy_tensor(tensor, logical);
  else
    convert_layout(to_host(tensor), logical);
  return {logical.data(), logical.data() + logical.size()};
}

Parameter make_parameter(const std::string& name, Shape4 shape, const LayerSetup& setup) {
  MemorySpace& memory = *setup.memory;
  return Parameter{name, Tensor(shape, setup.layout, memory), Tensor(shape, setup.layout, memory),
                   Tensor(shape, setup.layout, memory)};
}

uint64_t parameter_seed(uint64_t model_seed, const std::string& parameter_name) {
  return model_seed * 0x9E3779B97F4A7C15ull ^ std::hash<std::string>{}(parameter_name);
}

}  // namespace tunescope
