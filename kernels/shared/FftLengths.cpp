// FFT length rules shared by the cpu and cuda FFT algorithms (see FftLengths.h).
#include "kernels/shared/FftLengths.h"

#include <algorithm>

namespace tunescope {

namespace {

// n with every factor in `primes` divided out.
template <size_t N>
int64_t rest_after(int64_t n, const int64_t (&primes)[N]) {
  for (int64_t p : primes)
    while (n % p == 0) n /= p;
  return n;
}

}  // namespace

int64_t smooth_2357_size(int64_t n) {
  for (int64_t m = std::max<int64_t>(n, 1);; ++m)
    if (rest_after(m, {2, 3, 5, 7}) == 1) return m;
}

bool own_fft_supports_length(int64_t n) {
  return n == 1 || (n >= 2 && n <= kOwnFftMaxLength && n % 2 == 0 && rest_after(n, {2, 3, 5}) == 1);
}

int64_t own_fft_good_size(int64_t n) {
  const int64_t limit = std::max<int64_t>(n, 1);
  for (int64_t m = limit; m <= kOwnFftMaxLength; ++m)
    if (own_fft_supports_length(m)) return m;
  return limit;
}

}  // namespace tunescope
