#include "cli/SessionFlags.h"

#include "core/base/BackendChoice.h"
#include "core/base/Error.h"
#include "core/engine/Models.h"
#include "core/engine/RunConfig.h"

namespace tunescope::cli {

void SessionFlags::add_to(CLI::App& command, bool tuned_knobs) {
  model_option_ = command.add_option("--model", options.model, "Model to train: lenet5 | resnet18-small")
      ->check(CLI::IsMember(model_names()))
      ->capture_default_str();
  command.add_option("--data", options.data,
                     "Training data: fashion-mnist | fake | PATH to a folder of MNIST-format IDX files")
      ->capture_default_str();
  command.add_option("--data-dir", options.data_dir,
                     "Folder of Fashion-MNIST (default $TUNESCOPE_DATA_DIR or /usr/share/datasets/fashion-mnist)");
  batch_option_ = command.add_option("--batch", options.batch, "Mini-batch size")->capture_default_str();
  if (tuned_knobs) {
    layout_option_ = command.add_option("--layout", layout, "Tensor layout: nchw | nhwc")->capture_default_str();
    conv_option_ = command.add_option("--conv", conv,
                                      "Convolution algorithm: ALGO or ALGO,LAYER=ALGO,... (see list-algorithms; "
                                      "default: the backend's, cpu direct, cuda cudnn:implicit_gemm)");
    threads_option_ = command.add_option("--threads", options.threads, "Worker threads (0: one per hardware thread)")
                          ->capture_default_str();
    Concurrency& c = options.concurrency;
    streams_option_ = command.add_option("--streams", c.streams,
                                         "Ordered execution lanes per replica: with >= 2, backward-filter and the "
                                         "weight update run on their own lanes")
                          ->capture_default_str();
    replicas_option_ = command.add_option("--replicas", c.replicas,
                                          "Data-parallel replicas, each taking batch/replicas examples on its own "
                                          "lanes; gradients are all-reduced before the update (cuda: one per GPU "
                                          "with NCCL when several GPUs are visible)")
                           ->capture_default_str();
    micro_option_ = command.add_option("--micro-batches", c.micro_batches,
                                       "Gradient accumulation: each replica runs its share in this many sequential "
                                       "micro-batches before one update")
                        ->capture_default_str();
    async_option_ = command.add_flag("--async-update", c.async_update,
                                     "Overlap the weight update of a step with the next step's forward pass "
                                     "(layer L's forward waits only for layer L's update)");
    lane_threads_option_ = command.add_option("--threads-per-lane", c.threads_per_lane,
                                              "Threads of each lane's pool (0: --threads shared out over the lanes)")
                               ->capture_default_str();
    update_on_option_ = command.add_option("--update-on", update_on,
                                           "Where SGD runs on a backend with device memory (cuda): device | host "
                                           "(gradients copied to pinned host memory, updated by host threads, "
                                           "weights copied back; with --async-update beside the next forward pass)")
                            ->capture_default_str();
    fft_workspace_option_ =
        command.add_option("--fft-workspace", fft_workspace,
                           "FFT conv memory policy: reuse (one workspace per lane, sized by the largest layer) | "
                           "cache (also keep each FFT layer's forward spectra of x and w for its backward passes)")
            ->capture_default_str();
    fft_tile_option_ =
        command.add_option("--fft-tile", fft_tile,
                           "FFT tiling of stride-1 fft-fftw / fft-own layers: auto (a flop model picks per layer) | "
                           "off (one transform per padded plane) | N (overlap-save tiles transformed at NxN, a power "
                           "of two from 4 that exceeds every FFT layer's kernel)")
            ->capture_default_str();
    command.add_option("--config", config_path,
                       "Run a tuned config (tunescope.config/1 JSON from `tunescope tune`); --model, --batch, "
                       "--layout, --conv, --threads, the concurrency and FFT flags given explicitly override its values");
  }
  command.add_option("--lr", options.sgd.learning_rate, "SGD learning rate")->capture_default_str();
  command.add_option("--momentum", options.sgd.momentum, "SGD momentum")->capture_default_str();
  command.add_option("--weight-decay", options.sgd.weight_decay, "SGD weight decay")->capture_default_str();
  command.add_option("--seed", options.seed, "Seed for weights, shuffling and fake data")->capture_default_str();
  command.add_option("--prefetch", options.prefetch, "Batches prepared ahead by the input thread (0: none)")
      ->capture_default_str();
  command.add_option("--train-limit", options.train_limit, "Use only the first N training examples (0: all)");
  command.add_option("--test-limit", options.test_limit, "Use only the first N test examples (0: all)");
  command.add_option("--fake-count", options.fake_train_count, "Training examples of fake data")
      ->capture_default_str();
  command.add_option("--fake-channels", options.fake_channels,
                     "Channels of fake data (0: the model's usual: lenet5 1, resnet18-small 3)");
  command.add_option("--backend", options.backend, "Compute backend: cpu | cuda | auto (cuda when a device is usable, else cpu)")->capture_default_str();
}

SessionOptions SessionFlags::resolve() const {
  SessionOptions resolved = options;
  // "auto" is resolved here, before anything (config validation, the tuner's per-layer
  // find, the machine signature) looks up algorithms by backend name.
  resolved.backend = choose_backend(options.backend).name;
  const auto given = [](const CLI::Option* option) { return option && option->count() > 0; };
  if (!config_path.empty()) apply_run_config(load_run_config(config_path, resolved.backend), resolved);
  // Without --config every flag applies (its default when not given); with it, only
  // the flags the user typed replace the file's values.
  const bool all = config_path.empty();
  if (all || given(model_option_)) resolved.model = options.model;
  if (all || given(batch_option_)) resolved.batch = options.batch;
  if (all || given(layout_option_)) resolved.layout = parse_layout(layout);
  if (all || given(conv_option_)) resolved.conv = conv.empty() ? ConvChoice{} : parse_conv_choice(conv);
  else resolved.conv_source = "config " + config_path + ", key 'conv.per_layer'";
  resolved.conv = with_backend_default(resolved.conv, resolved.backend);
  if (all || given(threads_option_)) resolved.threads = options.threads;
  const Concurrency& c = options.concurrency;
  if (all || given(streams_option_)) resolved.concurrency.streams = c.streams;
  if (all || given(replicas_option_)) resolved.concurrency.replicas = c.replicas;
  if (all || given(micro_option_)) resolved.concurrency.micro_batches = c.micro_batches;
  if (all || given(async_option_)) resolved.concurrency.async_update = c.async_update;
  if (all || given(lane_threads_option_)) resolved.concurrency.threads_per_lane = c.threads_per_lane;
  if (all || given(update_on_option_)) {
    const auto where = parse_update_on(update_on);
    if (!where) fail(ErrorKind::usage, "--update-on: unknown place '", update_on, "' (known: ", kUpdateOnValues, ")");
    resolved.concurrency.update_on = *where;
  }
  if (all || given(fft_workspace_option_)) {
    const auto policy = parse_fft_workspace(fft_workspace);
    if (!policy)
      fail(ErrorKind::usage, "--fft-workspace: unknown policy '", fft_workspace, "' (known: ", kFftWorkspaceValues, ")");
    resolved.fft_workspace = *policy;
  }
  if (all || given(fft_tile_option_)) {
    const auto tile = parse_fft_tile_choice(fft_tile);
    if (!tile) fail(ErrorKind::usage, "--fft-tile: '", fft_tile, "' is not a tiling choice (", kFftTileValues, ")");
    resolved.fft_tile = *tile;
  }
  return resolved;
}

}  // namespace tunescope::cli
