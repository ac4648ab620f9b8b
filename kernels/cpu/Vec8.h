// Eight floats as one GCC/Clang vector: the register-tiled loops of `direct` accumulate
// in these so the compiler keeps tiles in registers (plain arrays were spilled to
// memory). It lowers to one AVX register, or two SSE registers on older targets.
#pragma once

#include <cstring>

namespace tunescope::cpu {

typedef float Vec8 __attribute__((vector_size(32)));

inline Vec8 load8(const float* p) {
  Vec8 v;
  std::memcpy(&v, p, sizeof v);  // unaligned load
  return v;
}
inline void store8(float* p, Vec8 v) { std::memcpy(p, &v, sizeof v); }
inline Vec8 splat8(float x) { return Vec8{} + x; }

// p[0], p[step], ..., p[7 * step]; step 2 is two loads and one shuffle.
template <int Step>
inline Vec8 load8_strided(const float* p, long step = Step) {
  if constexpr (Step == 1) {
    return load8(p);
  } else if constexpr (Step == 2) {
    return __builtin_shufflevector(load8(p), load8(p + 8), 0, 2, 4, 6, 8, 10, 12, 14);
  } else {
    return Vec8{p[0],        p[step],     p[2 * step], p[3 * step],
                p[4 * step], p[5 * step], p[6 * step], p[7 * step]};
  }
}

}  // namespace tunescope::cpu
