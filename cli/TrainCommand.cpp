// `tunescope train`: trains for N epochs with a progress bar, then reports epoch time,
// throughput and test accuracy.
#include <cstdio>
#include <memory>

#include "cli/Commands.h"
#include "cli/SessionFlags.h"
#include "cli/TrainingProgress.h"
#include "core/base/Error.h"
#include "core/engine/ModelFiles.h"

namespace tunescope::cli {

Action add_train_command(CLI::App& command) {
  auto flags = std::make_shared<SessionFlags>();
  auto epochs = std::make_shared<int64_t>(1);
  auto save_onnx = std::make_shared<std::string>();
  flags->add_to(command);
  command.add_option("--epochs", *epochs, "Passes over the training set")->capture_default_str();
  command.add_option("--save-onnx", *save_onnx,
                     "After training, write a copy of the --model .onnx file with the trained "
                     "weights (and batch-norm statistics) to this path");

  return [flags, epochs, save_onnx] {
    if (*epochs < 1) fail(ErrorKind::usage, "--epochs must be >= 1, got ", *epochs);
    const SessionOptions options = flags->resolve();
    if (!save_onnx->empty()) check_model_save_path(options.model, *save_onnx, "--save-onnx");
    TrainingSession session(options);
    std::printf("tunescope train: %s\n%s\n", session.description().c_str(),
                session.conv_memory_line().c_str());
    std::fflush(stdout);
    for (int64_t epoch = 1; epoch <= *epochs; ++epoch) {
      ProgressBar bar(cat("epoch ", epoch, "/", *epochs),
                      session.train_loader().batches_per_epoch());
      const EpochResult result =
          session.train_epoch(training_progress(bar, session.options().batch));
      bar.finish(format_loss_and_accuracy(result.stats) + "  " +
                 format_rate(result.examples_per_second));

      ProgressBar eval_bar("  test", session.test_loader().batches_per_epoch());
      const StepStats test = session.evaluate([&](int64_t step, int64_t, const StepStats& so_far) {
        eval_bar.update(step, format_loss_and_accuracy(so_far));
      });
      eval_bar.finish(format_loss_and_accuracy(test));
      std::printf(
          "epoch %lld: %.2f s, %.1f ex/s (input wait %.2f s), train %s, test %s on %lld examples\n",
          static_cast<long long>(epoch), result.seconds, result.examples_per_second,
          std::chrono::duration<double>(result.data_wait).count(),
          format_loss_and_accuracy(result.stats).c_str(), format_loss_and_accuracy(test).c_str(),
          static_cast<long long>(test.examples));
      std::fflush(stdout);
    }
    if (!save_onnx->empty()) {
      model_file_format(options.model).save(options.model, session.network(), *save_onnx);
      std::printf("saved the trained weights to %s\n", save_onnx->c_str());
    }
  };
}

}  // namespace tunescope::cli
