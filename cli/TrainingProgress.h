// How training progress reads on the terminal: loss, accuracy and rate, shared by
// `train` and `profile`.
#pragma once

#include <string>

#include "cli/ProgressBar.h"
#include "core/engine/TrainingSession.h"

namespace tunescope::cli {

std::string format_rate(double examples_per_second);           // "5.12k ex/s"
std::string format_loss_and_accuracy(const StepStats& stats);  // "loss 0.4123  acc 85.10%"
// A progress callback drawing `bar` with loss, accuracy and the rate since its creation.
TrainingSession::Progress training_progress(ProgressBar& bar, int64_t batch);

}  // namespace tunescope::cli
