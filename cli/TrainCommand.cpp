// `tunescope train`: trains for N epochs with a progress bar, then reports epoch time,
// throughput and test accuracy.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli/Commands.h"
#include "cli/SessionFlags.h"
#include "cli/TrainingProgress.h"
#include "core/base/Error.h"
#include "core/base/Ranks.h"
#include "core/engine/ModelFiles.h"

namespace tunescope::cli {

Action add_train_command(CLI::App& command) {
  auto flags = std::make_shared<SessionFlags>();
  auto epochs = std::make_shared<int64_t>(1);
  auto loss_log = std::make_shared<std::string>();
  auto save_onnx = std::make_shared<std::string>();
  flags->add_to(command);
  command.add_option("--epochs", *epochs, "Passes over the training set")->capture_default_str();
  command.add_option("--loss-log", *loss_log,
                     "Write each training step's mean loss over the (global) batch to FILE, one "
                     "'epoch step loss' line per step at full precision (rank 0 only)");
  command.add_option("--save-onnx", *save_onnx,
                     "After training, write a copy of the --model .onnx file with the trained "
                     "weights (and batch-norm statistics) to this path");

  return [flags, epochs, loss_log, save_onnx] {
    if (*epochs < 1) fail(ErrorKind::usage, "--epochs must be >= 1, got ", *epochs);
    SessionOptions options = flags->resolve();
    options.ranks = world_communicator();  // mpirun -np N: this rank's share of each batch
    if (!save_onnx->empty()) check_model_save_path(options.model, *save_onnx, "--save-onnx");
    TrainingSession session(options);
    std::printf("tunescope train: %s\n%s\n", session.description().c_str(),
                session.conv_memory_line().c_str());
    std::fflush(stdout);
    const bool rank0 = !options.ranks || options.ranks->rank() == 0;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> log(nullptr, std::fclose);
    if (!loss_log->empty() && rank0) {
      log.reset(std::fopen(loss_log->c_str(), "w"));
      if (!log)
        fail(ErrorKind::input, "--loss-log ", *loss_log,
             ": cannot open for writing: ", std::strerror(errno));
    }
    for (int64_t epoch = 1; epoch <= *epochs; ++epoch) {
      ProgressBar bar(cat("epoch ", epoch, "/", *epochs),
                      session.train_loader().batches_per_epoch());
      auto show = training_progress(bar, session.options().batch);
      double logged_loss_sum = 0;
      const EpochResult result =
          session.train_epoch([&](int64_t step, int64_t steps, const StepStats& so_far) {
            if (log) {
              const double loss = (so_far.loss_sum - logged_loss_sum) /
                                  static_cast<double>(session.options().batch);
              logged_loss_sum = so_far.loss_sum;
              std::fprintf(log.get(), "%lld %lld %.9g\n", static_cast<long long>(epoch),
                           static_cast<long long>(step), loss);
            }
            show(step, steps, so_far);
          });
      bar.finish(format_loss_and_accuracy(result.stats) + "  " +
                 format_rate(result.examples_per_second));

      if (session.options().rank_count() > 1 && session.options().ranks->rank() != 0)
        continue;  // every rank holds the same weights: rank 0 evaluates and prints
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
    if (!save_onnx->empty() && rank0) {  // ranks hold the same weights
      model_file_format(options.model).save(options.model, session.network(), *save_onnx);
      std::printf("saved the trained weights to %s\n", save_onnx->c_str());
    }
  };
}

}  // namespace tunescope::cli
