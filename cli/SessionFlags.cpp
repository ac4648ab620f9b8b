#include "cli/SessionFlags.h"

#include <algorithm>

#include "core/base/BackendChoice.h"
#include "core/base/Error.h"
#include "core/engine/ModelFiles.h"
#include "core/engine/Models.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::cli {

void SessionFlags::add_to(CLI::App& command, bool tuned_knobs) {
  model_option_ =
      command
          .add_option("--model", options.model,
                      "Model to train: lenet5 | resnet18-small | PATH.onnx (docs/ONNX.md)")
          ->check([](const std::string& model) -> std::string {
            const auto names = model_names();
            if (std::find(names.begin(), names.end(), model) != names.end() || is_model_file(model))
              return "";
            return cat("unknown model '", model,
                       "' (known: lenet5, resnet18-small, or a PATH.onnx file)");
          })
          ->capture_default_str();
  command
      .add_option(
          "--init", options.init,
          "Starting weights: random (drawn from --seed) | onnx (the model file's initializers)")
      ->check(CLI::IsMember({"random", "onnx"}))
      ->capture_default_str();
  command
      .add_option(
          "--data", options.data,
          "Training data: fashion-mnist | fake | PATH to a folder of MNIST-format IDX files")
      ->capture_default_str();
  command.add_option(
      "--data-dir", options.data_dir,
      "Folder of Fashion-MNIST (default $TUNESCOPE_DATA_DIR or /usr/share/datasets/fashion-mnist)");
  batch_option_ =
      command.add_option("--batch", options.batch, "Mini-batch size")->capture_default_str();
  if (tuned_knobs) {
    conv_option_ = command.add_option(
        "--conv", conv,
        "Convolution algorithm: ALGO or ALGO,LAYER=ALGO,... (see list-algorithms; "
        "default: the backend's, cpu direct, cuda cudnn:implicit_gemm)");
    knob_options_ = add_knob_flags(command, knob_text);
    command.add_option(
        "--config", config_path,
        "Run a tuned config (tunescope.config/1 JSON from `tunescope tune`); --model, --batch, "
        "--conv and the knob flags given explicitly override its values");
  }
  command.add_option("--lr", options.sgd.learning_rate, "SGD learning rate")->capture_default_str();
  command.add_option("--momentum", options.sgd.momentum, "SGD momentum")->capture_default_str();
  command.add_option("--weight-decay", options.sgd.weight_decay, "SGD weight decay")
      ->capture_default_str();
  command.add_option("--seed", options.seed, "Seed for weights, shuffling and fake data")
      ->capture_default_str();
  command
      .add_option("--prefetch", options.prefetch,
                  "Batches prepared ahead by the input thread (0: none)")
      ->capture_default_str();
  command.add_option("--train-limit", options.train_limit,
                     "Use only the first N training examples (0: all)");
  command.add_option("--test-limit", options.test_limit,
                     "Use only the first N test examples (0: all)");
  command.add_option("--fake-count", options.fake_train_count, "Training examples of fake data")
      ->capture_default_str();
  command.add_option(
      "--fake-channels", options.fake_channels,
      "Channels of fake data (0: the model's: lenet5 1, resnet18-small 3, a model file's input)");
  command
      .add_option("--backend", options.backend,
                  "Compute backend: cpu | cuda | auto (cuda when a device is usable, else cpu)")
      ->capture_default_str();
}

std::map<std::string, CLI::Option*> add_knob_flags(CLI::App& command,
                                                   std::map<std::string, std::string>& text) {
  std::map<std::string, CLI::Option*> options;
  for (const KnobSpec& spec : KnobCatalog::instance().specs()) {
    std::string& into = text[spec.key];
    into = spec.default_value;
    const std::string help = cat(spec.help, " (", spec.describe_values(), ")");
    if (spec.type == KnobType::boolean) {
      // A flag: given alone means on; --<flag>=off turns off one whose default is on (fuse).
      options[spec.key] = command.add_flag(spec.flag() + "{on}", into, help);
      continue;
    }
    options[spec.key] = command.add_option(spec.flag(), into, help)->capture_default_str();
  }
  return options;
}

SessionOptions SessionFlags::resolve() const {
  SessionOptions resolved = options;
  // "auto" is resolved here, before anything (config validation, the tuner's per-layer
  // find, the machine signature) looks up algorithms by backend name.
  resolved.backend = choose_backend(options.backend).name;
  const auto given = [](const CLI::Option* option) { return option && option->count() > 0; };
  if (!config_path.empty())
    apply_run_config(load_run_config(config_path, resolved.backend), resolved);
  // Without --config every flag applies (its default when not given); with it, only
  // the flags the user typed replace the file's values.
  const bool all = config_path.empty();
  if (all || given(model_option_)) resolved.model = options.model;
  if (all || given(batch_option_)) resolved.batch = options.batch;
  if (all || given(conv_option_))
    resolved.conv = conv.empty() ? ConvChoice{} : parse_conv_choice(conv);
  else
    resolved.conv_source = "config " + config_path + ", key 'conv.per_layer'";
  resolved.conv = with_backend_default(resolved.conv, resolved.backend);
  // A knob flag not typed leaves the config's value, or (without one) the backend's
  // default, which the session fills in.
  for (const auto& [key, option] : knob_options_)
    if (given(option)) {
      const KnobSpec& spec = KnobCatalog::instance().at(key);
      resolved.knobs.set_text(key, spec.checked(knob_text.at(key), spec.flag()));
    }
  // A model file is read, and refused, before the command creates any output (tune opens
  // its results DB and trace folder before it builds the first candidate).
  if (is_model_file(resolved.model)) model_input(resolved.model);
  return resolved;
}

}  // namespace tunescope::cli
