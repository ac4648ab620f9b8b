#include "cli/TrainingProgress.h"

#include <chrono>
#include <cstdio>

namespace tunescope::cli {

std::string format_rate(double examples_per_second) {
  char text[32];
  if (examples_per_second >= 1000)
    std::snprintf(text, sizeof text, "%.2fk ex/s", examples_per_second / 1000);
  else
    std::snprintf(text, sizeof text, "%.0f ex/s", examples_per_second);
  return text;
}

std::string format_loss_and_accuracy(const StepStats& stats) {
  char text[64];
  std::snprintf(text, sizeof text, "loss %.4f  acc %.2f%%", stats.mean_loss(),
                100 * stats.accuracy());
  return text;
}

TrainingSession::Progress training_progress(ProgressBar& bar, int64_t batch) {
  const auto start = std::chrono::steady_clock::now();
  return [&bar, batch, start](int64_t step, int64_t, const StepStats& so_far) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bar.update(step,
               format_loss_and_accuracy(so_far) + "  " +
                   format_rate(seconds > 0 ? static_cast<double>(step * batch) / seconds : 0));
  };
}

}  // namespace tunescope::cli
