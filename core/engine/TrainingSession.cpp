#include "core/engine/TrainingSession.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/base/BackendChoice.h"
#include "core/base/Error.h"
#include "core/base/HostCpu.h"
#include "core/base/Registry.h"
#include "core/engine/Models.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/data/DatasetCache.h"
#include "core/engine/layers/Conv2dLayer.h"
#include "profiler/Clock.h"
#include "profiler/LaneCpus.h"
#include "profiler/RankMerge.h"

namespace tunescope {

namespace {

std::shared_ptr<const data::Dataset> first_items(std::shared_ptr<const data::Dataset> set,
                                                 int64_t limit) {
  if (limit <= 0 || limit >= set->count) return set;
  data::Dataset first = *set;
  first.count = limit;
  first.images.resize(static_cast<size_t>(limit * first.image_bytes()));
  first.labels.resize(static_cast<size_t>(limit));
  return std::make_shared<const data::Dataset>(std::move(first));
}

}  // namespace

Layout SessionOptions::layout() const { return knobs::layout.get(knobs); }

int SessionOptions::threads() const { return knobs::threads.get(knobs); }

Concurrency SessionOptions::concurrency() const { return knobs::concurrency_of(knobs); }

SessionOptions::RankRows SessionOptions::rank_rows() const {
  if (!ranks || ranks->size() <= 1) return {0, batch};
  const int64_t n = ranks->size(), r = ranks->rank();
  const int64_t share = batch / n, extra = batch % n;
  return {r * share + std::min(r, extra), share + (r < extra ? 1 : 0)};
}

void SessionOptions::validate() const {
  auto at_least = [](int64_t value, int64_t minimum, const char* option) {
    if (value < minimum) fail(ErrorKind::usage, option, " must be >= ", minimum, ", got ", value);
  };
  at_least(batch, 1, "batch");
  for (const auto& [key, value] : knobs.explicit_values())
    if (const KnobSpec* spec = KnobCatalog::instance().find(key)) spec->checked(value, key);
  at_least(prefetch, 0, "prefetch");
  at_least(train_limit, 0, "train_limit");
  at_least(test_limit, 0, "test_limit");
  at_least(fake_channels, 0, "fake_channels");
  at_least(fake_train_count, 1, "fake_count");
  at_least(fake_test_count, 1, "fake_test_count");
  // Fake data is generated in memory before the first step: bounded so that an absurd
  // count is refused at once instead of filling the machine's memory.
  auto at_most = [](int64_t value, int64_t maximum, const char* option) {
    if (value > maximum) fail(ErrorKind::usage, option, " must be <= ", maximum, ", got ", value);
  };
  at_most(fake_train_count, kMaxFakeExamples, "fake_count");
  at_most(fake_test_count, kMaxFakeExamples, "fake_test_count");
  at_most(batch, kMaxBatch, "batch");
  if (batch < rank_count())
    fail(ErrorKind::usage, "batch ", batch, " is smaller than the ", rank_count(),
         " ranks: each rank needs at least one example");
  // A config tuned for several worker processes runs only as that many ranks: one
  // process would silently run a different config than the one measured.
  if (knobs.is_set(knobs::workers.key()) && knobs::workers.get(knobs) != rank_count()) {
    const int workers = knobs::workers.get(knobs);
    fail(ErrorKind::usage, "workers=", workers, " runs as ", workers,
         " worker processes, but this run has ", rank_count(),
         rank_count() == 1 ? " process" : " ranks", ": start it as `mpirun -np ", workers,
         " tunescope ...`",
         rank_runtime() ? "" : " (and this tunescope was built without MPI: rebuild it with MPI)");
  }
  const Concurrency c = concurrency();
  if (rank_count() > 1) {
    const RankRows rows = rank_rows();
    try {
      c.validate(rows.count);
    } catch (const Error& e) {
      fail(e.kind(), "batch ", batch, ": rank ", ranks->rank(), " of ", rank_count(), " takes ",
           rows.count, " examples: ", e.what());
    }
  } else {
    c.validate(batch);
  }
  const int lane_threads = c.lane_threads(threads() > 0 ? threads() : 1);
  if (int64_t{c.lanes()} * lane_threads > knobs::kMaxThreads)
    fail(ErrorKind::usage, "threads: ", c.lanes(), " lanes x ", lane_threads,
         " threads each would start more than ", knobs::kMaxThreads, " threads");
  if (!(sgd.learning_rate > 0)) fail(ErrorKind::usage, "lr must be > 0, got ", sgd.learning_rate);
  if (sgd.momentum < 0 || sgd.momentum >= 1)
    fail(ErrorKind::usage, "momentum must be in [0, 1), got ", sgd.momentum);
  if (init != "random" && init != "onnx")
    fail(ErrorKind::usage, "init must be random or onnx, got '", init, "'");
  if (sgd.weight_decay < 0)
    fail(ErrorKind::usage, "weight_decay must be >= 0, got ", sgd.weight_decay);
}

TrainingSession::TrainingSession(const SessionOptions& options) : options_(options) {
  options_.validate();
  const ModelInput model = model_input(options_.model);
  options_.backend = choose_backend(options_.backend).name;  // resolves "auto"
  options_.knobs = with_backend_defaults(options_.knobs, options_.backend);
  if (options_.threads() == 0) {
    // Ranks on one machine share its cores.
    const int local_ranks = options_.ranks ? std::max(1, options_.ranks->local_size()) : 1;
    knobs::threads.set(
        options_.knobs,
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks));
  }
  const Concurrency concurrency = options_.concurrency();
  options_.conv = with_backend_default(options_.conv, options_.backend);
  backend_ = Registry::instance().make_backend(options_.backend);
  // Device activity (CUPTI on cuda) joins every trace of the session: the tracer starts,
  // stops and collects it with itself. Attached before the trainer's lanes exist.
  tracer_.attach_device_tracer(profiler::make_device_tracer(options_.backend));

  data::DataSourceOptions source;
  source.data_dir = options_.data_dir;
  source.fake.train_count = options_.fake_train_count;
  source.fake.test_count = options_.fake_test_count;
  source.fake.channels = options_.fake_channels ? options_.fake_channels : model.channels;
  source.fake.height = model.height;
  source.fake.width = model.width;
  source.fake.seed = options_.seed;
  if (options_.data == "fake") {
    const int64_t image = source.fake.channels * model.height * model.width;
    for (const auto& [count, flag] : {std::pair{options_.fake_train_count, "fake_count"},
                                      std::pair{options_.fake_test_count, "fake_test_count"}})
      if (count > kMaxFakeBytes / image)
        fail(ErrorKind::usage, flag, " ", count, ": fake images of ", source.fake.channels, "x",
             model.height, "x", model.width, " (model ", options_.model, ") would take more than ",
             kMaxFakeBytes, " bytes");
  }
  auto train = first_items(data::load_dataset_shared(options_.data, data::Split::train, source),
                           options_.train_limit);
  auto test = first_items(data::load_dataset_shared(options_.data, data::Split::test, source),
                          options_.test_limit);
  if (train->height > model.height || train->width > model.width)
    fail(ErrorKind::input, "data '", options_.data, "': images are ", train->height, "x",
         train->width, " but model ", options_.model, " takes at most ", model.height, "x",
         model.width);
  if (model.channels_fixed && train->channels != model.channels)
    fail(ErrorKind::input, "data '", options_.data, "': images have ", train->channels,
         " channel(s) but model ", options_.model, " takes ", model.channels);
  const int64_t classes = std::max(train->num_classes, test->num_classes);
  if (model.classes > 0 && classes > model.classes)
    fail(ErrorKind::input, "data '", options_.data, "': ", classes, " classes but model ",
         options_.model, " scores only ", model.classes);
  if (train->count < options_.batch)
    fail(ErrorKind::usage, "batch ", options_.batch, " is larger than the ", train->count,
         " training examples of '", options_.data, "'");

  data::DataLoaderOptions loader;
  loader.batch_size = options_.batch;
  loader.layout = options_.layout();
  loader.target_height = model.height;
  loader.target_width = model.width;
  loader.shuffle = true;
  loader.seed = options_.seed;
  loader.drop_last = true;
  loader.prefetch = options_.prefetch;
  loader.memory = &backend_->staging_memory();
  // Every rank shuffles alike (same seed) and takes its own rows of each batch: the ranks'
  // parts of an epoch are distinct and together make the single process's batches.
  const SessionOptions::RankRows rows = options_.rank_rows();
  loader.rows_first = rows.first;
  loader.rows_count = rows.count;
  train_loader_ = std::make_unique<data::DataLoader>(train, loader);
  // The test set in batches the rank's model takes; with ranks rank 0 evaluates it whole.
  loader.batch_size = rows.count;
  loader.rows_first = 0;
  loader.rows_count = 0;
  loader.normalization = train_loader_->normalization();
  loader.shuffle = false;
  loader.drop_last = false;
  test_loader_ = std::make_unique<data::DataLoader>(test, loader);

  ModelSpec spec;
  spec.name = options_.model;
  // Each replica takes its shard of every micro-batch: batch / (replicas x micro-batches).
  spec.input = {concurrency.shard(rows.count), train->channels, model.height, model.width};
  spec.classes = classes;
  spec.file_weights = options_.init == "onnx";
  spec.conv = options_.conv;
  spec.conv_source = options_.conv_source;
  const std::vector<int> devices = backend_->replica_devices(concurrency.replicas);
  std::vector<Network*> replicas;
  for (int r = 0; r < concurrency.replicas; ++r) {
    spec.setup =
        LayerSetup{options_.layout(), options_.backend, options_.seed,
                   &backend_->device_memory(devices[static_cast<size_t>(r)]), options_.knobs};
    replicas_.push_back(
        build_model(spec));  // the same seed: every replica starts from the same weights
    replicas.push_back(replicas_.back().get());
  }
  RankOptions ranks;
  ranks.communicator = options_.ranks;
  ranks.global_batch = options_.batch;
  ranks.bucket_bytes = static_cast<size_t>(knobs::allreduce_bucket_kb.get(options_.knobs)) << 10;
  ranks.overlap = knobs::allreduce_overlap.get(options_.knobs);
  trainer_ =
      std::make_unique<Trainer>(std::move(replicas), *backend_, &tracer_, options_.sgd, concurrency,
                                options_.threads(), ranks, knobs::cpu_binding.get(options_.knobs));
}

TrainingSession::~TrainingSession() = default;

std::optional<data::Batch> TrainingSession::next_training_batch() {
  if (!epoch_open_) {
    train_loader_->start_epoch();
    epoch_open_ = true;
  }
  auto batch = train_loader_->next();
  if (!batch) epoch_open_ = false;
  return batch;
}

EpochResult TrainingSession::train_steps(int64_t count, const Progress& progress) {
  EpochResult result;
  const auto wait_before = train_loader_->wait_time();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < count;) {
    auto batch = next_training_batch();
    if (!batch) continue;  // epoch ended: the next call starts a new one
    result.stats += trainer_->train_step(batch->images, batch->labels);
    ++step;
    if (progress) progress(step, count, result.stats);
  }
  trainer_->synchronize();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.examples_per_second =
      result.seconds > 0 ? static_cast<double>(result.stats.examples) / result.seconds : 0;
  result.data_wait = train_loader_->wait_time() - wait_before;
  return result;
}

EpochResult TrainingSession::train_epoch(const Progress& progress) {
  epoch_open_ = false;  // a whole epoch starts afresh
  return train_steps(train_loader_->batches_per_epoch(), progress);
}

StepStats TrainingSession::evaluate(const Progress& progress) {
  StepStats total;
  test_loader_->start_epoch();
  const int64_t steps = test_loader_->batches_per_epoch();
  int64_t step = 0;
  while (auto batch = test_loader_->next()) {
    total += trainer_->eval_step(batch->images, batch->labels);
    if (progress) progress(++step, steps, total);
  }
  return total;
}

std::string TrainingSession::description() const {
  const auto& train = train_loader_->dataset();
  const auto& test = test_loader_->dataset();
  const Shape4 in = replicas_.front()->input_shape();
  std::string knobs_text;
  for (const std::string& key : algorithm_knobs_applied())
    knobs_text += cat(", ", key, " ", options_.knobs.text(key));
  return cat(options_.model, " on ", options_.data, " (", train.count, " train / ", test.count,
             " test, ", in.c, "x", in.h, "x", in.w, "), batch ", options_.batch, ", ",
             to_string(options_.layout()), ", conv ", options_.conv.str(), ", ", options_.threads(),
             " thread", options_.threads() == 1 ? "" : "s", options_.concurrency().label(),
             knobs_text, ", backend ", options_.backend,
             options_.rank_count() > 1
                 ? cat(", ", options_.rank_count(), " ranks (", options_.rank_rows().count,
                       " examples each on rank ", options_.ranks->rank(), ")")
                 : std::string());
}

std::string TrainingSession::config_json() const {
  // Every knob with the value the run used (threads_per_lane resolved to the threads each lane
  // got).
  nlohmann::json config =
      nlohmann::json::parse(to_json_text(run_config_of(options_), KnobsWritten::every_knob));
  config.erase("schema");
  config["threads_per_lane"] = options_.concurrency().lane_threads(options_.threads());
  config.update({
      {"data", options_.data},
      {"backend", options_.backend},
      {"sgd",
       {{"lr", options_.sgd.learning_rate},
        {"momentum", options_.sgd.momentum},
        {"weight_decay", options_.sgd.weight_decay}}},
      {"seed", options_.seed},
  });
  if (options_.rank_count() > 1) config["ranks"] = options_.rank_count();
  return config.dump();
}

void TrainingSession::use_conv(const ConvChoice& conv) {
  const ConvChoice next = with_backend_default(conv, options_.backend);
  if (next == options_.conv) return;
  std::vector<Conv2dLayer*> layers;
  std::set<std::string> names;
  for (const auto& replica : replicas_)
    for (int node = 1; node <= replica->layer_count(); ++node)
      if (auto* layer = dynamic_cast<Conv2dLayer*>(&replica->layer(node))) {
        layers.push_back(layer);
        names.insert(layer->name());
      }
  ModelSpec spec;
  spec.name = options_.model;
  spec.conv = next;
  spec.conv_source = options_.conv_source;
  check_per_layer_names(spec, names);
  std::vector<std::pair<Conv2dLayer*, std::string>> switched;  // to undo on a refusal
  try {
    for (Conv2dLayer* layer : layers) {
      std::string was = layer->algorithm_name();
      layer->use_algorithm(next.for_layer(layer->name()));
      switched.emplace_back(layer, std::move(was));
    }
  } catch (...) {
    for (auto& [layer, was] : switched) layer->use_algorithm(was);
    throw;
  }
  trainer_->fit_workspaces();
  options_.conv = next;
}

std::vector<std::string> TrainingSession::algorithm_knobs_applied() const {
  std::vector<std::string> keys;
  for (const KnobSpec& knob : KnobCatalog::instance().specs()) {
    if (knob.scope != KnobScope::conv_algorithm) continue;
    const Network& network = *replicas_.front();
    for (int node = 1; node <= network.layer_count(); ++node)
      if (const auto* conv = dynamic_cast<const Conv2dLayer*>(&network.layer(node));
          conv && conv->knob_applies(knob.key)) {
        keys.push_back(knob.key);
        break;
      }
  }
  return keys;
}

ConvMemory TrainingSession::conv_memory() const {
  ConvMemory memory;
  memory.workspace_bytes = trainer_->workspace_bytes();
  for (const auto& replica : replicas_) memory.saved_bytes += replica->saved_bytes();
  return memory;
}

std::string TrainingSession::conv_memory_line() const {
  const ConvMemory m = conv_memory();
  const auto mib = [](size_t bytes) {
    return cat(std::round(static_cast<double>(bytes) / (1 << 20) * 10) / 10, " MiB");
  };
  // With the knobs that decided it: those the layers' algorithms read (fft_workspace, ...).
  std::string knobs_text;
  for (const std::string& key : algorithm_knobs_applied())
    knobs_text += cat(", ", key, " ", options_.knobs.text(key));
  return cat("conv memory ", mib(m.peak_bytes()), " (workspace ", mib(m.workspace_bytes),
             " + cached spectra ", mib(m.saved_bytes), knobs_text, ")");
}

std::map<std::string, std::string> TrainingSession::conv_memory_metadata() const {
  const ConvMemory m = conv_memory();
  // With the value of every knob that conv algorithms read (fft_workspace, ...): what
  // decided the memory.
  std::map<std::string, std::string> metadata{
      {"conv_workspace_bytes", std::to_string(m.workspace_bytes)},
      {"fft_cached_spectra_bytes", std::to_string(m.saved_bytes)},
      {"conv_memory_peak_bytes", std::to_string(m.peak_bytes())}};
  for (const std::string& key : algorithm_knobs_applied()) metadata[key] = options_.knobs.text(key);
  return metadata;
}

std::vector<profiler::ConvLayerInfo> TrainingSession::conv_layers() const {
  std::vector<profiler::ConvLayerInfo> layers;
  const Network& network = *replicas_.front();
  for (int node = 1; node <= network.layer_count(); ++node) {
    const auto* conv = dynamic_cast<const Conv2dLayer*>(&network.layer(node));
    if (!conv) continue;
    const ConvProblem& p = conv->problem();
    layers.push_back({conv->name(), conv->algorithm_name(), p.key(), p.flops(), p.min_bytes()});
  }
  return layers;
}

std::map<std::string, std::string> TrainingSession::trace_metadata_extra() const {
  std::map<std::string, std::string> extra = conv_memory_metadata();
  extra["model"] = options_.model;
  extra[profiler::kConvLayersKey] = profiler::conv_layers_to_json(conv_layers());
  extra[profiler::kHostCpuKey] = host_cpu_model();
  extra[profiler::kKernelThreadsKey] =
      std::to_string(options_.concurrency().lane_threads(options_.threads()));
  if (!trainer_->lane_cpus().empty())
    extra[profiler::kLaneCpusKey] = profiler::lane_cpus_to_text(trainer_->lane_cpus());
  return extra;
}

std::map<std::string, std::string> TrainingSession::rank_trace_metadata() {
  if (options_.rank_count() <= 1) return {};
  // 100 round trips take a few milliseconds on one machine; the fastest one bounds the error.
  const ClockOffset offset = measure_clock_offset(*options_.ranks, 100, profiler::now_ns);
  // The trace keys (profiler/RankMerge.h) hold this clock minus rank 0's: the negation of
  // ClockOffset's "add to reach rank 0".
  return {{profiler::kRankKey, std::to_string(options_.ranks->rank())},
          {profiler::kWorldSizeKey, std::to_string(options_.ranks->size())},
          {profiler::kClockOffsetKey, std::to_string(-offset.offset_ns)},
          {profiler::kClockUncertaintyKey, std::to_string(offset.uncertainty_ns)}};
}

}  // namespace tunescope
