// Everything one training run needs, assembled from options: backend, thread pool,
// tracer, data loaders, model and trainer. Shared by `tunescope train`, `profile` and
// (later) the tuner, so they build runs the same way.
#pragma once

#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/base/Backend.h"
#include "core/base/ClockOffset.h"
#include "core/base/Knob.h"
#include "core/base/Ranks.h"
#include "core/engine/Concurrency.h"
#include "core/engine/ConvChoice.h"
#include "core/engine/Network.h"
#include "core/engine/Trainer.h"
#include "core/engine/data/DataLoader.h"
#include "profiler/Roofline.h"
#include "profiler/Tracer.h"

namespace tunescope {

// Bounds of the options that size memory before the first step: 1M fake examples of the
// largest model input (3x32x32 bytes) take 3 GiB; a batch of 65536 such images 200 MiB.
inline constexpr int64_t kMaxFakeExamples = 1'000'000;
// Fake images are one byte per value: a model file's larger input is bounded by bytes.
inline constexpr int64_t kMaxFakeBytes = kMaxFakeExamples * 3 * 32 * 32;
inline constexpr int64_t kMaxBatch = 65'536;

// The names core messages give the session's settings that are not knobs (the knobs'
// keys are in the KnobCatalog). A front end shows its own name for each beside it.
inline constexpr std::array<std::string_view, 13> kSessionOptionKeys = {
    "batch",           "lr",          "momentum",   "weight_decay",  "init",
    "prefetch",        "train_limit", "test_limit", "fake_channels", "fake_count",
    "fake_test_count", "conv",        "backend"};

struct SessionOptions {
  std::string backend = "cpu";
  std::string model = "lenet5";  // lenet5 | resnet18-small | PATH.onnx
  std::string init = "random";   // starting weights: random (from --seed) | onnx (the model file's)
  std::string data = "fashion-mnist";  // fashion-mnist | fake | PATH to IDX files
  std::filesystem::path data_dir;      // overrides where "fashion-mnist" is looked for
  int64_t batch = 128;
  ConvChoice conv;
  std::string conv_source =
      "conv";  // where `conv` came from, for messages (the key or a config file)
  // layout, threads (0: one per hardware thread), the concurrency knobs and the knobs the
  // algorithms declare (core/base/Knob.h); unset ones take the backend's defaults.
  KnobValues knobs;
  SgdParams sgd{0.02f, 0.9f, 5e-4f};  // LeNet-5 reaches ~86% on Fashion-MNIST in one epoch
  uint64_t seed = 1;
  int prefetch = 2;         // batches prepared ahead by the input thread
  int64_t train_limit = 0;  // use the first N training examples; 0: all
  int64_t test_limit = 0;   // likewise for the test set
  int64_t fake_channels =
      0;  // fake data channels; 0: the model's (lenet5 1, resnet 3, a file's input)
  int64_t fake_train_count = 60000;
  int64_t fake_test_count = 10000;
  // The ranks of a run over several processes (`mpirun -np N`; null or one rank: a single
  // process). `batch` is then the global batch: rank r takes rows [first, first + count)
  // of every batch, batch / N each and one more for the first batch % N ranks.
  Communicator* ranks = nullptr;

  struct RankRows {
    int64_t first = 0;
    int64_t count = 0;
  };
  int rank_count() const { return ranks ? ranks->size() : 1; }
  RankRows rank_rows() const;

  // The engine's knobs, typed (core/engine/RunKnobs.h).
  Layout layout() const;
  int threads() const;
  Concurrency concurrency() const;

  // Throws Error(usage) naming the config key for values out of range or a batch split
  // that does not divide the batch (front ends name their flags: cli/SessionFlags).
  void validate() const;
};

// Conv memory beyond parameters and activations, held for the whole run: the lanes'
// workspaces and the spectra FFT layers keep under fft_workspace=cache.
struct ConvMemory {
  size_t workspace_bytes = 0;
  size_t saved_bytes = 0;
  size_t peak_bytes() const { return workspace_bytes + saved_bytes; }
};

struct EpochResult {
  StepStats stats;
  double seconds = 0;
  double examples_per_second = 0;
  std::chrono::nanoseconds data_wait{0};  // time the trainer waited for input
};

class TrainingSession {
 public:
  using Progress = std::function<void(int64_t step, int64_t steps, const StepStats& so_far)>;

  explicit TrainingSession(const SessionOptions& options);
  ~TrainingSession();

  // One pass over the training set (full batches only: the model is built for one batch size).
  EpochResult train_epoch(const Progress& progress = {});
  // `count` training steps, continuing the current epoch and starting new ones as needed.
  // With async update a step's update overlaps the next step; the last one has landed
  // when this returns, so the weights and the trace are settled.
  EpochResult train_steps(int64_t count, const Progress& progress = {});
  // Runs `conv` from the next step on, every replica alike, keeping the weights, the
  // data and the threads: configs that differ only in their conv algorithms then take
  // turns in one session (MeasureOptions::share_sessions). Throws Error(usage) naming a
  // layer `conv` names that the model lacks, Error(unsupported) naming a layer whose new
  // algorithm cannot run it; the session then runs what it ran before.
  void use_conv(const ConvChoice& conv);
  // Loss and accuracy over the whole test set, in inference mode.
  StepStats evaluate(const Progress& progress = {});

  const SessionOptions& options() const { return options_; }
  Backend& backend() { return *backend_; }
  profiler::Tracer& tracer() { return tracer_; }
  // Replica 0: after a step its parameters hold the weights and the step's gradient
  // (the whole batch's, all-reduced over replicas and micro-batches).
  Network& network() { return *replicas_.front(); }
  Trainer& trainer() { return *trainer_; }
  data::DataLoader& train_loader() { return *train_loader_; }
  data::DataLoader& test_loader() { return *test_loader_; }
  // "lenet5 on fashion-mnist (60000 train / 10000 test, 1x32x32), batch 128, nchw, conv direct, 2
  // threads"
  std::string description() const;
  // The run's settings as the JSON text kept in trace metadata.
  std::string config_json() const;
  ConvMemory conv_memory() const;
  // "conv memory 12.3 MiB (workspace 4.1 MiB + cached spectra 8.2 MiB, fft_tile auto, fft_workspace
  // cache)"
  std::string conv_memory_line() const;
  // The keys of the knobs some conv layer's algorithm reads on its problem (fft_tile,
  // fft_workspace, winograd_tile...), in catalog order: the ones that shape this run.
  std::vector<std::string> algorithm_knobs_applied() const;
  // The same figures as trace-metadata entries (bytes, as decimal text), with the value
  // of each algorithm knob applied.
  std::map<std::string, std::string> conv_memory_metadata() const;
  // Each conv layer of the model with its algorithm and its problem's flops and least
  // bytes per pass (the same for the three passes), in model order.
  std::vector<profiler::ConvLayerInfo> conv_layers() const;
  // What a trace of this session records besides machine, backend and config: the conv
  // memory figures, the model, the conv layers (profiler::kConvLayersKey), the host CPU
  // and the threads each lane's kernels run on (what the roofline is read against).
  std::map<std::string, std::string> trace_metadata_extra() const;
  // With ranks: "rank", "world_size", and this rank's clock offset to rank 0's
  // ("clock_offset_ns": rank 0's time = this rank's + offset) with its uncertainty
  // ("clock_offset_uncertainty_ns"), measured now (core/base/ClockOffset.h). Collective:
  // every rank calls it at the same point. Empty in a single process.
  std::map<std::string, std::string> rank_trace_metadata();

 private:
  std::optional<data::Batch> next_training_batch();

  SessionOptions options_;
  std::unique_ptr<Backend> backend_;
  profiler::Tracer tracer_;
  std::unique_ptr<data::DataLoader> train_loader_;
  std::unique_ptr<data::DataLoader> test_loader_;
  std::vector<std::unique_ptr<Network>> replicas_;  // built for batch / (replicas x micro-batches)
  std::unique_ptr<Trainer> trainer_;
  bool epoch_open_ = false;
};

}  // namespace tunescope
