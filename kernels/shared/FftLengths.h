// The transform lengths each FFT library handles well. The cpu and cuda FFT algorithms
// pad their planes to these lengths: fft-fftw and fft-cufft share the first rule, and the
// cpu and cuda fft-own share the second, so both backends pick the same padded sizes.
#pragma once

#include <cstdint>

namespace tunescope {

// The smallest m >= max(n, 1) with no prime factor but 2, 3, 5 and 7.
int64_t smooth_2357_size(int64_t n);

// Our own FFT's lengths: 1, or an even n <= kOwnFftMaxLength with no prime factor but 2, 3
// and 5 (even because rows are transformed as pairs of real planes).
constexpr int64_t kOwnFftMaxLength = 4096;
bool own_fft_supports_length(int64_t n);

// The smallest m >= max(n, 1) that own_fft_supports_length accepts; max(n, 1) when
// there is none up to kOwnFftMaxLength.
int64_t own_fft_good_size(int64_t n);

}  // namespace tunescope
