// The arithmetic of the successive-halving schedule.
#include "core/tuner/SuccessiveHalving.h"

#include <algorithm>

namespace tunescope::tuner {

size_t halving_keep(size_t racing, size_t eta) { return (racing + eta - 1) / eta; }

size_t halving_rounds(size_t racing, size_t eta) {
  size_t rounds = 0;
  for (; racing > 1; racing = halving_keep(racing, eta)) ++rounds;
  return rounds;
}

int64_t halving_steps(size_t racing, int64_t final_steps, size_t eta) {
  int64_t divisor = 1;
  for (size_t r = 1; r < halving_rounds(racing, eta); ++r) divisor *= static_cast<int64_t>(eta);
  return std::max<int64_t>(1, (final_steps + divisor - 1) / divisor);
}

size_t halving_work(size_t racing, size_t eta) {
  size_t work = 0;
  for (; racing > 1; racing = halving_keep(racing, eta)) work += racing;
  return work;
}

}  // namespace tunescope::tuner
