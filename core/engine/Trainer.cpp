// The step schedule: what each lane runs and which events order it (see Trainer.h).
// The host only submits and waits; every kernel runs on a lane.
#include "core/engine/Trainer.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/base/Error.h"

namespace tunescope {

namespace {
using profiler::RangeCategory;
using profiler::RangeScope;
}  // namespace

StepStats& StepStats::operator+=(const StepStats& other) {
  loss_sum += other.loss_sum;
  correct += other.correct;
  examples += other.examples;
  return *this;
}

struct Trainer::Replica {
  Network* net = nullptr;
  std::vector<Parameter*> parameters;  // net->parameters(): the same order in every replica
  Tensor input;                        // the shard, when the batch is split
  Tensor dlogits;
  std::vector<float> loss;  // per micro-batch, written by its loss task
  std::vector<int64_t> correct;
  std::vector<Tensor> accumulated;  // per parameter: the sum over micro-batches (micro_batches > 1)
  std::vector<std::unique_ptr<Event>> shard_done;  // per gradient lane: done reading this shard
  std::unique_ptr<Event> compute_done = std::make_unique<Event>();
};

struct Trainer::ParameterLayer {
  int node = 0;
  std::string name;
  bool separate = false;         // parameter gradients on a gradient lane, apart from backward-data
  int gradient_lane_offset = 0;  // within the replica's lanes (0: the compute lane)
  std::vector<size_t> parameters;                       // indices into Replica::parameters
  std::vector<std::unique_ptr<Event>> doutput_ready;    // per replica
  std::vector<std::unique_ptr<Event>> gradients_ready;  // per replica
  // Per replica, separate layers only: backward-data, which reads the weights, is done.
  std::vector<std::unique_ptr<Event>> weights_read;
  std::unique_ptr<Event> updated = std::make_unique<Event>();
  // Update on the host: the gradients are in the host copies; the host SGD is done.
  std::unique_ptr<Event> gradients_on_host = std::make_unique<Event>();
  std::unique_ptr<Event> host_updated = std::make_unique<Event>();
  int bucket = 0;             // index into buckets_
  bool closes_bucket = true;  // the bucket's last layer in submission order
};

struct Trainer::Bucket {
  std::vector<ParameterLayer*> layers;  // in submission order
  const char* label = nullptr;          // "allreduce.bucket<k>"
  std::string label_text;
};

Trainer::Trainer(std::vector<Network*> replicas, Backend& backend, profiler::Tracer* tracer,
                 SgdParams sgd, Concurrency concurrency, int threads, RankOptions ranks,
                 CpuBinding binding)
    : ops_(backend.ops()), tracer_(tracer), sgd_(sgd), concurrency_(concurrency) {
  if (static_cast<int>(replicas.size()) != concurrency_.replicas || replicas.empty())
    fail(ErrorKind::runtime, "trainer: ", replicas.size(), " networks for ", concurrency_.replicas,
         " replicas");
  if (update_on_host() && backend.memory().host_accessible())
    fail(ErrorKind::usage, "update_on host: backend ", backend.name(),
         " keeps its tensors in host memory, where its update already runs; the update on the host "
         "is for a backend with device memory (cuda): use update_on device");
  // Each replica's buffers live on its device, beside its network (built there by the caller).
  const std::vector<int> devices = backend.replica_devices(concurrency_.replicas);
  Network& main = *replicas.front();
  shard_ = main.input_shape().n;
  concurrency_.validate(shard_ * concurrency_.replicas * concurrency_.micro_batches);
  const int micro = concurrency_.micro_batches;

  for (size_t r = 0; r < replicas.size(); ++r) {
    Network* net = replicas[r];
    if (!(net->input_shape() == main.input_shape()) || net->layout() != main.layout() ||
        net->model_name() != main.model_name())
      fail(ErrorKind::runtime, "trainer: replicas of ", main.model_name(), " are not built alike");
    MemorySpace& memory = backend.device_memory(devices[r]);
    Replica replica;
    replica.net = net;
    replica.parameters = net->parameters();
    if (concurrency_.replicas * micro > 1 || !memory.host_accessible())
      replica.input = Tensor(net->input_shape(), net->layout(), memory);
    replica.dlogits = Tensor(net->output_shape(), net->layout(), memory);
    replica.loss.assign(static_cast<size_t>(micro), 0.0f);
    replica.correct.assign(static_cast<size_t>(micro), 0);
    if (micro > 1)
      for (const Parameter* p : replica.parameters)
        replica.accumulated.emplace_back(p->grad.shape(), p->grad.layout(), memory);
    replica.shard_done.resize(gradient_lanes(0).size());
    for (auto& event : replica.shard_done) event = std::make_unique<Event>();
    replicas_.push_back(std::move(replica));
  }

  std::map<const Parameter*, size_t> index_of;
  for (size_t i = 0; i < replicas_.front().parameters.size(); ++i)
    index_of[replicas_.front().parameters[i]] = i;
  const int gradient_lane_count = static_cast<int>(gradient_lanes(0).size());
  int separable_seen = 0;
  for (int node = 1; node <= main.layer_count(); ++node) {
    Layer& layer = main.layer(node);
    const auto params = layer.parameters();
    if (params.empty()) continue;
    ParameterLayer entry;
    entry.node = node;
    entry.name = layer.name();
    entry.separate = gradient_lane_count > 0 && layer.separable_backward();
    if (entry.separate) entry.gradient_lane_offset = 1 + separable_seen++ % gradient_lane_count;
    for (const Parameter* p : params) entry.parameters.push_back(index_of.at(p));
    for (size_t r = 0; r < replicas_.size(); ++r) {
      entry.doutput_ready.push_back(std::make_unique<Event>());
      entry.gradients_ready.push_back(std::make_unique<Event>());
      entry.weights_read.push_back(std::make_unique<Event>());
    }
    parameter_layers_.push_back(std::move(entry));
  }

  parameter_layer_of_node_.assign(static_cast<size_t>(main.layer_count()) + 1, nullptr);
  for (ParameterLayer& layer : parameter_layers_)
    parameter_layer_of_node_[static_cast<size_t>(layer.node)] = &layer;
  if (ranks.communicator && ranks.communicator->size() > 1) {
    const int64_t rows = shard_ * concurrency_.replicas * micro;
    if (ranks.global_batch < rows)
      fail(ErrorKind::runtime, "trainer: rank ", ranks.communicator->rank(), " takes ", rows,
           " examples of a global batch of ", ranks.global_batch);
    // The global batch's mean gradient is the sum over ranks of each rank's mean weighted
    // by its share (shares differ by one example when the batch does not divide).
    rank_scale_ =
        static_cast<float>(static_cast<double>(rows) / static_cast<double>(ranks.global_batch));
    overlap_ = ranks.overlap;
    // Collective, in the same order on every rank.
    gradient_communicator_ = ranks.communicator->duplicate();
    stats_communicator_ = ranks.communicator->duplicate();
    reducer_ = backend.make_rank_reducer(*gradient_communicator_, devices.front());
    if (overlap_) comm_lanes_ = 1;
  }
  plan_buckets(main, ranked() ? ranks.bucket_bytes : 0);

  eval_input_ = Tensor(main.input_shape(), main.layout(), backend.device_memory(devices.front()));
  const int lanes = concurrency_.lanes();
  std::vector<int> lane_devices;  // lanes r*S .. r*S+S-1 are replica r's
  for (int i = 0; i < lanes; ++i) {
    lane_devices.push_back(devices[static_cast<size_t>(i / concurrency_.streams)]);
    workspaces_.emplace_back(main.workspace_bytes(), backend.device_memory(lane_devices.back()));
  }
  if (comm_lanes_) {  // the communication lane, beside replica 0
    lane_devices.push_back(devices.front());
    workspaces_.emplace_back(0, backend.device_memory(devices.front()));
  }
  int host_lanes = 0;
  if (update_on_host()) {
    host_ops_ = &backend.host_ops();
    // The host copies start as the device's weights and velocities (one copy each, here
    // before any step); from then on the host holds the master weights.
    for (const Parameter* p : replicas_.front().parameters)
      host_copies_.push_back({to_memory(p->value, backend.staging_memory()),
                              Tensor(p->grad.shape(), p->grad.layout(), backend.staging_memory()),
                              to_memory(p->velocity, backend.staging_memory())});
    lane_devices.push_back(devices.front());  // the upload lane
    lane_devices.push_back(devices.front());  // the host lane, traced beside replica 0's device
    host_lanes = 1;
  }
  open_phase_.assign(lane_devices.size(), {});
  executor_ = std::make_unique<Executor>(static_cast<int>(lane_devices.size()),
                                         concurrency_.lane_threads(threads), tracer_, &backend,
                                         std::move(lane_devices), host_lanes, binding);
}

Trainer::~Trainer() = default;

void Trainer::plan_buckets(const Network& main, size_t bucket_bytes) {
  // The order the updates are submitted in: backward order, except with async update,
  // whose updates follow the backward pass in forward order.
  std::vector<ParameterLayer*> order;
  if (concurrency_.async_update) {
    for (ParameterLayer& layer : parameter_layers_) order.push_back(&layer);
  } else {
    for (const Network::BackwardStep& step : main.backward_steps())
      if (ParameterLayer* layer = parameter_layer_of_node_[static_cast<size_t>(step.node)])
        order.push_back(layer);
  }
  const Replica& first = replicas_.front();
  size_t bytes = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    ParameterLayer& layer = *order[i];
    if (buckets_.empty() || bytes == 0) buckets_.emplace_back();  // the previous one closed
    Bucket& bucket = buckets_.back();
    layer.bucket = static_cast<int>(buckets_.size() - 1);
    bucket.layers.push_back(&layer);
    for (size_t p : layer.parameters) bytes += first.parameters[p]->grad.bytes();
    layer.closes_bucket = bytes >= bucket_bytes || i + 1 == order.size();
    if (layer.closes_bucket) bytes = 0;
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b].label_text = cat("allreduce.bucket", b);
    buckets_[b].label =
        tracer_ ? tracer_->intern(buckets_[b].label_text) : buckets_[b].label_text.c_str();
  }
}

Network& Trainer::network() { return *replicas_.front().net; }

size_t Trainer::workspace_bytes() const {
  size_t total = 0;
  for (const AlignedBuffer& workspace : workspaces_) total += workspace.bytes();
  return total;
}

void Trainer::fit_workspaces() {
  const size_t needed = network().workspace_bytes();
  for (int lane = 0; lane < concurrency_.lanes(); ++lane) {
    AlignedBuffer& workspace = workspaces_[static_cast<size_t>(lane)];
    if (workspace.bytes() < needed) workspace = AlignedBuffer(needed, workspace.memory());
  }
}

std::vector<int> Trainer::gradient_lanes(int replica) const {
  const int streams = concurrency_.streams;
  const int base = replica * streams;
  if (streams == 1) return {};
  if (streams == 2) return {base + 1};
  std::vector<int> lanes;
  for (int i = 1; i <= streams - 2; ++i) lanes.push_back(base + i);  // the last lane updates
  return lanes;
}

LayerContext Trainer::context(const ExecContext& exec) {
  AlignedBuffer& workspace = workspaces_[static_cast<size_t>(exec.lane)];
  return LayerContext{ops_, exec, workspace.data(), workspace.bytes()};
}

void Trainer::submit_phase(int lane, const char* name, bool begin) {
  if (!tracer_) return;
  // A phase spans many tasks of one lane: it is kept open per lane (only that lane
  // touches it). The end is the lane's unwind guard: it runs even when a task in between
  // threw and the executor skips the rest, so the phase's NVTX and device-correlation
  // pushes are always popped; when the begin was skipped the phase is not open and the
  // end does nothing.
  if (begin) {
    executor_->submit(lane, [this, name](const ExecContext& exec) {
      open_phase_[static_cast<size_t>(exec.lane)] =
          tracer_->begin_range(name, RangeCategory::phase);
    });
  } else {
    executor_->submit_finally(lane, [this, name](const ExecContext& exec) {
      tracer_->end_range(name, RangeCategory::phase, exec.device, exec.lane,
                         open_phase_[static_cast<size_t>(exec.lane)]);
    });
  }
}

void Trainer::submit_shard(int r, int micro, const Tensor& images,
                           std::span<const int32_t> labels) {
  Replica& rep = replicas_[static_cast<size_t>(r)];
  Network& net = *rep.net;
  const int lane = compute_lane(r);
  const std::vector<int> gradient = gradient_lanes(r);
  const int micro_count = concurrency_.micro_batches;
  const bool split = !rep.input.empty();  // a share of the batch, or the batch uploaded
  const int64_t first = (static_cast<int64_t>(r) * micro_count + micro) * shard_;

  // The previous shard's parameter gradients read this replica's activations and
  // output gradients, which this shard overwrites.
  for (size_t k = 0; k < gradient.size(); ++k) executor_->wait(lane, *rep.shard_done[k]);
  if (split)
    executor_->submit(lane, [this, &rep, &images, first](const ExecContext& exec) {
      ops_.scatter_rows(exec, images, first, rep.input);
    });
  const Tensor& input = split ? rep.input : images;

  submit_phase(lane, "forward", true);
  auto layer_entry = parameter_layers_.begin();
  for (int node = 1; node <= net.layer_count(); ++node) {
    if (layer_entry != parameter_layers_.end() && layer_entry->node == node) {
      // The only wait on the previous step: this layer's weights are updated.
      if (micro == 0) executor_->wait(lane, *layer_entry->updated);
      ++layer_entry;
    }
    executor_->submit(lane, [this, &net, &input, node](const ExecContext& exec) {
      net.forward_node(context(exec), node, input, true);
    });
  }
  submit_phase(lane, "forward", false);

  const int64_t step = step_;
  executor_->submit(lane, [this, &rep, micro, step,
                           shard_labels = labels.subspan(first, shard_)](const ExecContext& exec) {
    const auto m = static_cast<size_t>(micro);
    const float loss = ops_.softmax_cross_entropy(exec, rep.net->logits(), shard_labels,
                                                  &rep.dlogits, &rep.correct[m]);
    if (!std::isfinite(loss))
      fail(ErrorKind::runtime, "model ", rep.net->model_name(), ": loss is ", loss, " at step ",
           step, " (training diverged)");
    rep.loss[m] = loss;
  });

  // Micro-batches add their parameter gradients up, on the lane that computed them.
  auto accumulate = [this, &rep, micro](const ExecContext& exec, const ParameterLayer& layer) {
    if (concurrency_.micro_batches == 1) return;
    for (size_t i : layer.parameters) {
      const Tensor& grad = rep.parameters[i]->grad;
      if (micro == 0)
        ops_.copy(exec, grad, rep.accumulated[i]);
      else
        ops_.accumulate(exec, grad, rep.accumulated[i]);
    }
  };
  const bool last_contribution = r == concurrency_.replicas - 1 && micro == micro_count - 1;
  submit_phase(lane, "backward", true);
  for (const Network::BackwardStep& bstep : net.backward_steps()) {
    const Tensor& dlogits = rep.dlogits;
    ParameterLayer* found = parameter_layer_of_node_[static_cast<size_t>(bstep.node)];
    if (!found) {
      executor_->submit(lane, [this, &net, &input, &dlogits, &bstep](const ExecContext& exec) {
        net.backward_step(context(exec), bstep, input, dlogits, Network::BackwardPart::all);
      });
      continue;
    }
    ParameterLayer& layer = *found;
    Event& ready = *layer.gradients_ready[static_cast<size_t>(r)];
    if (layer.separate) {
      const int side = r * concurrency_.streams + layer.gradient_lane_offset;
      Event& doutput = *layer.doutput_ready[static_cast<size_t>(r)];
      executor_->record(lane, doutput);
      executor_->wait(side, doutput);
      executor_->submit(side, [this, &net, &input, &dlogits, &bstep, &layer,
                               accumulate](const ExecContext& exec) {
        net.backward_step(context(exec), bstep, input, dlogits, Network::BackwardPart::parameters);
        accumulate(exec, layer);
      });
      executor_->record(side, ready);
      executor_->submit(lane, [this, &net, &input, &dlogits, &bstep](const ExecContext& exec) {
        net.backward_step(context(exec), bstep, input, dlogits, Network::BackwardPart::data);
      });
      executor_->record(lane, *layer.weights_read[static_cast<size_t>(r)]);
    } else {
      executor_->submit(lane, [this, &net, &input, &dlogits, &bstep, &layer,
                               accumulate](const ExecContext& exec) {
        net.backward_step(context(exec), bstep, input, dlogits, Network::BackwardPart::all);
        accumulate(exec, layer);
      });
      executor_->record(lane, ready);
    }
    // Synchronous update: layer L's update (with its bucket's) overlaps the backward pass of L-1.
    if (!concurrency_.async_update && !updates_deferred() && last_contribution &&
        layer.closes_bucket)
      submit_update(buckets_[static_cast<size_t>(layer.bucket)]);
  }
  submit_phase(lane, "backward", false);
  for (size_t k = 0; k < gradient.size(); ++k) executor_->record(gradient[k], *rep.shard_done[k]);
  executor_->record(lane, *rep.compute_done);
}

void Trainer::broadcast_weight(const ExecContext& exec, size_t parameter) {
  std::vector<Tensor*> copies;
  for (size_t r = 1; r < replicas_.size(); ++r)
    copies.push_back(&replicas_[r].parameters[parameter]->value);
  ops_.broadcast(exec, replicas_.front().parameters[parameter]->value, copies);
}

void Trainer::submit_update(Bucket& bucket) {
  const int lane = update_lane();
  // The update overwrites the weights: every replica must be done with the gradients
  // and with backward-data, the last reader of the weights in this step.
  for (ParameterLayer* layer : bucket.layers)
    for (size_t r = 0; r < replicas_.size(); ++r) {
      executor_->wait(lane, *layer->gradients_ready[r]);
      if (layer->separate) executor_->wait(lane, *layer->weights_read[r]);
    }
  std::vector<const char*> layer_names;
  for (ParameterLayer* layer : bucket.layers)
    layer_names.push_back(tracer_ ? tracer_->intern(layer->name) : nullptr);
  executor_->submit(lane, [this, &bucket, layer_names](const ExecContext& exec) {
    RangeScope phase(tracer_, "update", RangeCategory::phase, exec.device, exec.lane);
    const int parts = concurrency_.replicas * concurrency_.micro_batches;
    // The replicas' and micro-batches' gradients into replica 0's, as this rank's share
    // of the global batch's mean (each shard's gradient is of its own mean loss).
    auto reduce_locally = [&](const ParameterLayer& layer) {
      std::vector<const Tensor*> sources;
      for (size_t i : layer.parameters) {
        Parameter& p = *replicas_.front().parameters[i];
        if (parts > 1) {
          sources.clear();
          for (Replica& rep : replicas_)
            sources.push_back(concurrency_.micro_batches > 1 ? &rep.accumulated[i]
                                                             : &rep.parameters[i]->grad);
          ops_.allreduce_sum(exec, sources, rank_scale_ / static_cast<float>(parts), p.grad);
        } else if (rank_scale_ != 1.0f) {
          const Tensor* own[] = {&p.grad};
          ops_.allreduce_sum(exec, own, rank_scale_, p.grad);
        }
      }
    };
    auto apply = [&](const ParameterLayer& layer) {
      for (size_t i : layer.parameters) {
        Parameter& p = *replicas_.front().parameters[i];
        if (update_on_host()) {
          ops_.copy_to_host(exec, p.grad, host_copies_[i].grad);
          continue;
        }
        ops_.sgd_update(exec, sgd_, p.value, p.grad, p.velocity);
        broadcast_weight(exec, i);
      }
    };
    if (!ranked()) {
      for (size_t k = 0; k < bucket.layers.size(); ++k) {
        RangeScope range(tracer_, layer_names[k], RangeCategory::layer, exec.device, exec.lane);
        reduce_locally(*bucket.layers[k]);
        apply(*bucket.layers[k]);
      }
      return;
    }
    std::vector<Tensor*> gradients;
    for (size_t k = 0; k < bucket.layers.size(); ++k) {
      RangeScope range(tracer_, layer_names[k], RangeCategory::layer, exec.device, exec.lane);
      reduce_locally(*bucket.layers[k]);
      for (size_t i : bucket.layers[k]->parameters)
        gradients.push_back(&replicas_.front().parameters[i]->grad);
    }
    reducer_->allreduce_sum(exec, gradients, bucket.label);
    for (size_t k = 0; k < bucket.layers.size(); ++k) {
      RangeScope range(tracer_, layer_names[k], RangeCategory::layer, exec.device, exec.lane);
      apply(*bucket.layers[k]);
    }
  });
  for (size_t k = 0; k < bucket.layers.size(); ++k) {
    ParameterLayer& layer = *bucket.layers[k];
    const char* layer_name = layer_names[k];
    if (!update_on_host()) {
      executor_->record(lane, *layer.updated);
      continue;
    }
    // The record finishes the update lane's stream, so the host reads complete gradients.
    executor_->record(lane, *layer.gradients_on_host);
    executor_->wait(host_lane(), *layer.gradients_on_host);
    executor_->submit(host_lane(), [this, &layer, layer_name](const ExecContext& exec) {
      RangeScope phase(tracer_, "host update", RangeCategory::phase, exec.device, exec.lane);
      RangeScope range(tracer_, layer_name, RangeCategory::layer, exec.device, exec.lane);
      for (size_t i : layer.parameters) {
        HostCopy& host = host_copies_[i];
        host_ops_->sgd_update(exec, sgd_, host.weight, host.grad, host.velocity);
      }
    });
    executor_->record(host_lane(), *layer.host_updated);
    executor_->wait(upload_lane(), *layer.host_updated);
    executor_->submit(upload_lane(), [this, &layer, layer_name](const ExecContext& exec) {
      RangeScope phase(tracer_, "upload", RangeCategory::phase, exec.device, exec.lane);
      RangeScope range(tracer_, layer_name, RangeCategory::layer, exec.device, exec.lane);
      for (size_t i : layer.parameters) {
        ops_.copy_from_host(exec, host_copies_[i].weight, replicas_.front().parameters[i]->value);
        broadcast_weight(exec, i);
      }
    });
    // The next step's forward of this layer waits for this: the weight is back on the device.
    executor_->record(upload_lane(), *layer.updated);
  }
}

StepStats Trainer::train_step(const Tensor& images, std::span<const int32_t> labels) {
  RangeScope iteration(tracer_, "train_step", RangeCategory::iteration);
  const int64_t batch = shard_ * concurrency_.replicas * concurrency_.micro_batches;
  Network& main = network();
  const Shape4 expected{batch, main.input_shape().c, main.input_shape().h, main.input_shape().w};
  if (!(images.shape() == expected) || images.layout() != main.layout() ||
      static_cast<int64_t>(labels.size()) != batch)
    fail(ErrorKind::runtime, "model ", main.model_name(), ": batch ", images.shape().str(), " ",
         to_string(images.layout()), " with ", labels.size(), " labels does not match the built ",
         expected.str(), " ", to_string(main.layout()));
  for (int r = 0; r < concurrency_.replicas; ++r)
    for (int m = 0; m < concurrency_.micro_batches; ++m) submit_shard(r, m, images, labels);
  if (updates_deferred())  // after the whole backward pass of every replica
    for (Replica& rep : replicas_) executor_->wait(update_lane(), *rep.compute_done);
  if (concurrency_.async_update || updates_deferred())
    for (Bucket& bucket : buckets_)
      submit_update(bucket);  // async: forward order, the next step needs layer 1 first

  // The lanes are done with `images` and `labels` once the gradients are; with async
  // update the updates may still run when this returns.
  for (int r = 0; r < concurrency_.replicas; ++r) {
    Replica& rep = replicas_[static_cast<size_t>(r)];
    executor_->host_wait(*rep.compute_done);
    for (auto& done : rep.shard_done) executor_->host_wait(*done);
  }
  if (!concurrency_.async_update) executor_->synchronize();
  ++step_;

  StepStats stats;
  for (const Replica& rep : replicas_)
    for (size_t m = 0; m < rep.loss.size(); ++m) {
      stats.loss_sum += static_cast<double>(rep.loss[m]) * static_cast<double>(shard_);
      stats.correct += rep.correct[m];
    }
  stats.examples = batch;
  if (stats_communicator_) {  // the global batch's figures, on every rank
    double figures[] = {stats.loss_sum, static_cast<double>(stats.correct),
                        static_cast<double>(stats.examples)};
    stats_communicator_->allreduce_sum(figures);
    stats = {figures[0], static_cast<int64_t>(figures[1]), static_cast<int64_t>(figures[2])};
  }
  return stats;
}

void Trainer::synchronize() { executor_->synchronize(); }

StepStats Trainer::eval_step(const Tensor& images, std::span<const int32_t> labels) {
  synchronize();  // the last asynchronous update must land first
  RangeScope iteration(tracer_, "eval_step", RangeCategory::iteration);
  Network& net = network();
  const Shape4 shard = net.input_shape();
  const int64_t rows = images.shape().n;
  if (images.shape().item_count() != shard.item_count() || images.layout() != net.layout() ||
      static_cast<int64_t>(labels.size()) > rows ||
      rows > shard.n * concurrency_.replicas * concurrency_.micro_batches)
    fail(ErrorKind::runtime, "model ", net.model_name(), ": eval batch ", images.shape().str(),
         " does not fit the model's input ", shard.str());
  StepStats total;
  for (int64_t first = 0; first < static_cast<int64_t>(labels.size()); first += shard.n) {
    const int64_t count = std::min(shard.n, rows - first);
    executor_->submit(0, [this, &net, &images, first](const ExecContext& exec) {
      ops_.scatter_rows(exec, images, first,
                        eval_input_);  // a partial shard is padded with zero images
      net.forward(context(exec), eval_input_, false);
    });
    executor_->synchronize();
    const int64_t scored = std::min<int64_t>(count, static_cast<int64_t>(labels.size()) - first);
    const Tensor& logits = net.logits();
    total += score_logits(logits.on_host() ? logits : to_host(logits),
                          labels.subspan(static_cast<size_t>(first), static_cast<size_t>(scored)));
  }
  return total;
}

StepStats score_logits(const Tensor& logits, std::span<const int32_t> labels) {
  const int64_t classes = logits.shape().c;
  const auto rows = static_cast<int64_t>(labels.size());
  if (rows > logits.shape().n)
    fail(ErrorKind::runtime, "score_logits: ", rows, " labels for ", logits.shape().n, " rows");
  StepStats stats;
  for (int64_t n = 0; n < rows; ++n) {
    const int32_t label = labels[n];
    if (label < 0 || label >= classes)
      fail(ErrorKind::input, "label ", label, " at row ", n, " is outside 0..", classes - 1);
    int64_t best = 0;
    float top = logits.at(n, 0, 0, 0);
    for (int64_t k = 1; k < classes; ++k)
      if (logits.at(n, k, 0, 0) > top) top = logits.at(n, k, 0, 0), best = k;
    double sum = 0;
    for (int64_t k = 0; k < classes; ++k)
      sum += std::exp(static_cast<double>(logits.at(n, k, 0, 0) - top));
    stats.loss_sum += std::log(sum) - static_cast<double>(logits.at(n, label, 0, 0) - top);
    stats.correct += best == label;
  }
  stats.examples = rows;
  return stats;
}

}  // namespace tunescope
