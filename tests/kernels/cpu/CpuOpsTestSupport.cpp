// Implementation of the CPU op test helpers (see CpuOpsTestSupport.h).
#include "CpuOpsTestSupport.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace tunescope::cpu::test_support {

namespace {

// Visits every element in logical order: f(value&) receives the element at (n, c, h, w).
template <typename F>
void for_each_logical(Tensor& t, F f) {
  const Shape4 s = t.shape();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) f(t.at(n, c, h, w));
}

std::string describe(const Tensor& t) { return t.shape().str() + " " + to_string(t.layout()); }

}  // namespace

Tensor random_tensor(const Shape4& shape, Layout layout, uint32_t seed, float lo, float hi) {
  Tensor t(shape, layout);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for_each_logical(t, [&](float& v) { v = dist(rng); });
  return t;
}

Tensor away_from_zero_tensor(const Shape4& shape, Layout layout, uint32_t seed,
                             float min_magnitude) {
  Tensor t(shape, layout);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(min_magnitude, 1.0f);
  std::bernoulli_distribution negative(0.5);
  for_each_logical(t, [&](float& v) { v = negative(rng) ? -magnitude(rng) : magnitude(rng); });
  return t;
}

Tensor distinct_tensor(const Shape4& shape, Layout layout, uint32_t seed, float spacing) {
  Tensor t(shape, layout);
  std::vector<int64_t> order(static_cast<size_t>(shape.count()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  const double middle = static_cast<double>(shape.count()) / 2.0;
  size_t next = 0;
  for_each_logical(t, [&](float& v) {
    v = static_cast<float>((static_cast<double>(order[next++]) - middle) * spacing);
  });
  return t;
}

Tensor levels_tensor(const Shape4& shape, Layout layout, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> level(-4, 3);
  Tensor t(shape, layout);
  for (int64_t n = 0; n < shape.n; ++n)
    for (int64_t c = 0; c < shape.c; ++c)
      for (int64_t h = 0; h < shape.h; ++h)
        for (int64_t w = 0; w < shape.w; ++w)
          t.at(n, c, h, w) = 0.25f * static_cast<float>(level(rng));
  return t;
}

Tensor tensor_of(const Shape4& shape, Layout layout, std::initializer_list<float> values) {
  Tensor t(shape, layout);
  if (static_cast<int64_t>(values.size()) != shape.count())
    throw std::invalid_argument("tensor_of: " + std::to_string(values.size()) +
                                " values for shape " + shape.str());
  auto next = values.begin();
  for_each_logical(t, [&](float& v) { v = *next++; });
  return t;
}

double dot(const Tensor& y, const Tensor& w) {
  if (!(y.shape() == w.shape()) || y.layout() != w.layout())
    throw std::invalid_argument("dot: " + describe(y) + " vs " + describe(w));
  double sum = 0;
  for (int64_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y.data()[i]) * w.data()[i];
  return sum;
}

::testing::AssertionResult logically_near(const Tensor& a, const Tensor& b, double tol) {
  if (!(a.shape() == b.shape()))
    return ::testing::AssertionFailure()
           << "shapes differ: " << describe(a) << " vs " << describe(b);
  const Shape4 s = a.shape();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) {
          const double x = a.at(n, c, h, w), y = b.at(n, c, h, w);
          if (!(std::abs(x - y) <= tol * std::max(1.0, std::abs(y))))
            return ::testing::AssertionFailure()
                   << "at (" << n << "," << c << "," << h << "," << w << "): " << x << " vs " << y
                   << " (tolerance " << tol << ")";
        }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult bitwise_equal(const Tensor& a, const Tensor& b) {
  if (!(a.shape() == b.shape()) || a.layout() != b.layout())
    return ::testing::AssertionFailure() << describe(a) << " vs " << describe(b);
  for (int64_t i = 0; i < a.size(); ++i)
    if (std::memcmp(a.data() + i, b.data() + i, sizeof(float)) != 0)
      return ::testing::AssertionFailure()
             << "element " << i << " differs: " << a.data()[i] << " vs " << b.data()[i];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult gradient_matches(Tensor& param, const Tensor& analytic,
                                            const std::function<double()>& loss,
                                            GradientTolerance tolerance) {
  if (!(param.shape() == analytic.shape()) || param.layout() != analytic.layout())
    return ::testing::AssertionFailure()
           << "gradient " << describe(analytic) << " does not match parameter " << describe(param);
  const int64_t count = param.size();
  std::vector<double> numeric(static_cast<size_t>(count));
  double scale = 0;
  for (int64_t i = 0; i < count; ++i) {
    float& p = param.data()[i];
    const float saved = p;
    // The step actually taken in float, which is not exactly 2 eps.
    const float plus = static_cast<float>(saved + tolerance.eps);
    const float minus = static_cast<float>(saved - tolerance.eps);
    p = plus;
    const double loss_plus = loss();
    p = minus;
    const double loss_minus = loss();
    p = saved;
    numeric[i] = (loss_plus - loss_minus) / (static_cast<double>(plus) - minus);
    scale = std::max(scale, std::abs(static_cast<double>(analytic.data()[i])));
  }
  const double floor = std::max(0.1 * scale, 1e-6);
  double worst = 0;
  int64_t worst_index = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double a = analytic.data()[i];
    const double error = std::abs(numeric[i] - a) / std::max(std::abs(a), floor);
    if (error > worst) {
      worst = error;
      worst_index = i;
    }
  }
  if (worst > tolerance.tol)
    return ::testing::AssertionFailure()
           << "element " << worst_index << " of " << count << ": analytic "
           << analytic.data()[worst_index] << ", numeric " << numeric[worst_index] << ", error "
           << worst << " > " << tolerance.tol << " (gradient scale " << scale << ")";
  return ::testing::AssertionSuccess() << "worst error " << worst;
}

}  // namespace tunescope::cpu::test_support
