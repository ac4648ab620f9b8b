// Deterministic parameter initialisation by logical index, so a model built in NCHW
// and in NHWC starts from the same weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/Tensor.h"

namespace tunescope {

struct LayerSetup;
struct Parameter;

// He-normal (std = sqrt(2 / fan_in)) values drawn in logical (n, c, h, w) order.
void init_he_normal(Tensor& weight, int64_t fan_in, uint64_t seed);
// Fills `tensor` (any layout, any memory space) from values in logical (n, c, h, w)
// order, as a model file stores them. Throws Error(input) when the count differs.
void load_logical_values(Tensor& tensor, const std::vector<float>& values, const std::string& what);
// The inverse: `tensor`'s values in logical order (what a model file stores).
std::vector<float> logical_values(const Tensor& tensor);
// A fresh Parameter value/grad/velocity of `shape` in the setup's layout and memory, all zero.
Parameter make_parameter(const std::string& name, Shape4 shape, const LayerSetup& setup);
// Stable seed per parameter name, so adding a layer does not reshuffle the others.
uint64_t parameter_seed(uint64_t model_seed, const std::string& parameter_name);

}  // namespace tunescope
