// Helpers shared by the CPU op kernel tests: reproducible inputs defined by logical
// index (so both layouts hold the same values), tensor comparisons, and the one
// central-difference gradient checker every backward test uses.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "core/base/Tensor.h"
#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/ElementwiseIsa.h"
#include "tests/core/ScopedEnv.h"

namespace tunescope::cpu::test_support {

// Uniform values in [lo, hi), assigned in logical (n, c, h, w) order from `seed`.
Tensor random_tensor(const Shape4& shape, Layout layout, uint32_t seed, float lo = -1.0f,
                     float hi = 1.0f);
// Random sign and magnitude in [min_magnitude, 1]: ReLU's kink is never within reach
// of a finite-difference step smaller than min_magnitude.
Tensor away_from_zero_tensor(const Shape4& shape, Layout layout, uint32_t seed,
                             float min_magnitude);
// A shuffled ramp of distinct values `spacing` apart: a pooling arg-max cannot change
// under a finite-difference step smaller than spacing / 2.
Tensor distinct_tensor(const Shape4& shape, Layout layout, uint32_t seed, float spacing);
// Values on eight levels, k / 4 for k in -4..3, drawn in logical order from `seed`: most
// pooling windows hold ties, so a pooling kernel must pick the first maximum, and sums
// with biases k / 8 are exact.
Tensor levels_tensor(const Shape4& shape, Layout layout, uint32_t seed);
// A tensor from values listed in logical (n, c, h, w) order.
Tensor tensor_of(const Shape4& shape, Layout layout, std::initializer_list<float> values);

// Sum of y * w over all elements, in double; y and w share shape and layout.
double dot(const Tensor& y, const Tensor& w);

// Same shape and, at every logical index, |a - b| <= tol * max(1, |b|). Layouts may differ.
::testing::AssertionResult logically_near(const Tensor& a, const Tensor& b, double tol);
// Same shape, layout and bits.
::testing::AssertionResult bitwise_equal(const Tensor& a, const Tensor& b);

// Compares `analytic`, the gradient of loss() with respect to `param` (same shape and
// layout), with central differences (loss(p + eps) - loss(p - eps)) / 2 eps taken
// element by element. Error of element i: |numeric - analytic| divided by
// max(|analytic_i|, 0.1 * max_j |analytic_j|, 1e-6): a relative error floored at a
// tenth of the gradient's scale, so tiny components are judged against it instead of
// against themselves. Passes when every error is at most `tol`.
struct GradientTolerance {
  double eps = 1e-2;
  double tol = 1e-2;
};
::testing::AssertionResult gradient_matches(Tensor& param, const Tensor& analytic,
                                            const std::function<double()>& loss,
                                            GradientTolerance tolerance = {});

// Sets TUNESCOPE_ELEMENTWISE_ISA (the elementwise, batch-norm and max-pooling kernels'
// path) for the scope and restores what was there.
class ForcedIsa {
 public:
  explicit ForcedIsa(CpuIsa isa) : env_(kElementwiseIsaVariable, to_string(isa)) {}

 private:
  tunescope::test_support::ScopedEnv env_;
};

}  // namespace tunescope::cpu::test_support
