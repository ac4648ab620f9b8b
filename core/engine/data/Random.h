// Seeded random numbers for data generation and shuffling. std's distributions and
// std::shuffle differ between standard libraries; these do not, so a seed names the
// same data set and the same epoch order on every machine.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tunescope::data {

// SplitMix64 (Steele, Lea & Flood): one add and a mix per draw, and any seed,
// including 0 and neighbouring integers, gives an independent-looking stream.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, bound) by multiply-shift; the bias is below bound / 2^64.
  uint64_t below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

 private:
  uint64_t state_;
};

// Derives the seed of a sub-stream (a sample, an epoch) from a base seed.
inline uint64_t mix_seed(uint64_t seed, uint64_t stream) {
  return SplitMix64(seed ^ SplitMix64(stream).next()).next();
}

// Fisher-Yates.
template <typename T>
void shuffle_in_place(std::vector<T>& values, SplitMix64& rng) {
  for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[rng.below(i)]);
}

}  // namespace tunescope::data
