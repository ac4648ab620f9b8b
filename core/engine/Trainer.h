// Runs training and evaluation steps of a model on an Executor's lanes: forward, loss,
// backward, gradient all-reduce and SGD update, traced as ranges (iteration on the
// host; phase and layer on the lanes) around the kernels.
//
// Which lane runs what (S = streams, lanes of replica r are r*S .. r*S+S-1):
//  - compute lane (r*S): input scatter, forward, loss, backward input gradients;
//  - parameter-gradient lanes: with S >= 2 the parameter gradients of conv and fc
//    layers (backward-filter) run on lane r*S+1 (S = 2) or round robin over lanes
//    r*S+1 .. r*S+S-2 (S >= 3), concurrently with the compute lane's backward-data;
//  - update lane (S-1 of replica 0; lane 0 when S = 1): per layer, the all-reduce of
//    the replicas' and micro-batches' gradients, SGD, and the broadcast of the new
//    weights to the other replicas. Without async update the update of layer L is
//    queued as soon as its gradients are (overlapping the backward pass of L-1) and
//    train_step returns when all lanes are idle. With async update the updates are
//    queued after the backward pass in forward order and train_step returns once the
//    gradients are done; the next step's forward of layer L waits only for layer L's
//    update event, so the update overlaps the next forward pass.
//  - update on the host (Concurrency::update_on = host, a backend whose memory the host
//    cannot read): the update lane reduces layer L's gradients and copies them into
//    pinned host copies (memcpy.dtoh); a host lane (lanes() + 1, no stream) runs the
//    host backend's SGD (Backend::host_ops) on the host copies of weight, gradient and
//    velocity (the velocity lives only there); an upload lane (lanes(), on replica 0's
//    device) copies the new weight back (memcpy.htod) and broadcasts it, then records
//    L's update event. Each hand-over is an event, so layer L+1's download overlaps L's
//    host SGD, and with async update the next forward pass of the device overlaps the
//    host's SGD of the later layers.
//  - ranks (RankOptions with a communicator of several ranks, `mpirun -np N`): each rank
//    runs this schedule on its share of the global batch. The update of a bucket of
//    consecutive layers (allreduce_bucket_kb) reduces the replicas' gradients scaled by
//    the rank's share of the global batch, sums them across ranks (RankReducer, traced
//    as "allreduce.bucket<k>"), then runs SGD. With allreduce_overlap the buckets'
//    updates run on a communication lane of their own (lane lanes()) as soon as the
//    backward pass has their gradients; without it on the update lane after the whole
//    backward pass. Buckets are made and submitted in the same order on every rank
//    (backward order; forward order with async update), as the collectives require.
// Every dependency is an Event, so the result is the single-lane result up to the
// reassociation of float sums (the trajectory does not change with async update).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/base/AlignedBuffer.h"
#include "core/base/Backend.h"
#include "core/base/Ranks.h"
#include "core/engine/Concurrency.h"
#include "core/engine/Executor.h"
#include "core/engine/Network.h"
#include "profiler/Tracer.h"

namespace tunescope {

struct StepStats {
  double loss_sum = 0;  // sum over examples of the cross-entropy
  int64_t correct = 0;
  int64_t examples = 0;

  double mean_loss() const { return examples ? loss_sum / static_cast<double>(examples) : 0.0; }
  double accuracy() const {
    return examples ? static_cast<double>(correct) / static_cast<double>(examples) : 0.0;
  }
  StepStats& operator+=(const StepStats& other);
};

// This process's part of a run over several ranks. A communicator of one rank (or none)
// is a single process.
struct RankOptions {
  Communicator* communicator = nullptr;
  int64_t global_batch = 0;  // the batch of all ranks together; each rank's share is its own
  size_t bucket_bytes = size_t{512} << 10;  // 0: one bucket per layer
  bool overlap = true;
};

class Trainer {
 public:
  // `replicas` holds concurrency.replicas networks built alike (same model, seed and
  // layout) for concurrency.shard(batch) examples; replica 0 is the one evaluated and
  // the one whose parameters hold the step's gradient (the full batch's mean) and the
  // weights. `threads`: the run's threads in all (see Concurrency::lane_threads).
  // Replica r runs on device backend.replica_devices(replicas)[r]: its networks must be
  // built in that device's memory; its shard buffers, workspaces and lanes are placed
  // there. Batches arrive as host tensors; on a backend whose memory the host cannot
  // reach they are uploaded by the first task of each shard, on the shard's lane.
  // With the update on the host the weights and velocities are copied to the host here,
  // and the host copies are the master weights from then on: set weights before this.
  // `ranks`: several ranks all-reduce their gradients (collective: every rank constructs
  // its trainer, with the same model and options).
  Trainer(std::vector<Network*> replicas, Backend& backend, profiler::Tracer* tracer, SgdParams sgd,
          Concurrency concurrency, int threads, RankOptions ranks = {},
          CpuBinding binding = CpuBinding::off);
  ~Trainer();

  // One SGD step on a full batch (replicas x micro-batches x shard examples; with ranks,
  // this rank's share, and the returned stats are those of the global batch). Throws
  // Error(runtime) naming the step when the loss is not finite (a diverging
  // configuration); an exception on any lane is rethrown here.
  StepStats train_step(const Tensor& images, std::span<const int32_t> labels);
  // Inference on up to a full batch, shard by shard on replica 0: a smaller final batch
  // is padded with zero images and only its real rows are scored.
  StepStats eval_step(const Tensor& images, std::span<const int32_t> labels);
  // Waits for work still in flight (the last asynchronous update): call before reading
  // the weights.
  void synchronize();

  int64_t steps_done() const { return step_; }
  Network& network();
  const Concurrency& concurrency() const { return concurrency_; }
  int lane_count() const { return executor_->lane_count(); }
  // Per lane, the CPUs its threads were bound to (cpu_binding); empty when unbound.
  const std::vector<std::vector<int>>& lane_cpus() const { return executor_->lane_cpus(); }
  // The conv workspaces of all lanes together (each sized by the network's largest layer).
  size_t workspace_bytes() const;
  // Grows each compute lane's workspace to what the network's layers need now (after a
  // conv layer changed its algorithm: TrainingSession::use_conv). Never shrinks one.
  void fit_workspaces();

 private:
  struct Replica;
  struct ParameterLayer;
  struct Bucket;

  LayerContext context(const ExecContext& exec);
  int compute_lane(int replica) const { return replica * concurrency_.streams; }
  // The communication lane runs the update when it exists (ranks with overlap).
  int update_lane() const { return comm_lanes_ ? concurrency_.lanes() : concurrency_.streams - 1; }
  bool ranked() const { return reducer_ != nullptr; }
  // Ranks without overlap: every bucket after the whole backward pass.
  bool updates_deferred() const { return ranked() && !overlap_ && !concurrency_.async_update; }
  void plan_buckets(const Network& main, size_t bucket_bytes);
  std::vector<int> gradient_lanes(int replica) const;
  void submit_shard(int replica, int micro, const Tensor& images, std::span<const int32_t> labels);
  void submit_update(Bucket& bucket);
  bool update_on_host() const { return concurrency_.update_on == UpdateOn::host; }
  int upload_lane() const { return concurrency_.lanes() + comm_lanes_; }  // update on the host only
  int host_lane() const { return upload_lane() + 1; }                     // likewise
  // Copies replica 0's weight `parameter` into the other replicas'.
  void broadcast_weight(const ExecContext& exec, size_t parameter);
  void submit_phase(int lane, const char* name, bool begin);

  std::vector<Replica> replicas_;
  std::vector<ParameterLayer> parameter_layers_;          // graph order
  std::vector<ParameterLayer*> parameter_layer_of_node_;  // null for layers without parameters
  std::vector<Bucket> buckets_;  // in submission order; one layer each without ranks
  // Ranks: the gradient all-reduce and its communicator (for the update's lane), the
  // step statistics' communicator (for the host thread), this rank's share of the batch.
  std::unique_ptr<Communicator> gradient_communicator_;
  std::unique_ptr<Communicator> stats_communicator_;
  std::unique_ptr<RankReducer> reducer_;
  float rank_scale_ = 1.0f;
  bool overlap_ = true;
  int comm_lanes_ = 0;
  OpKernels& ops_;
  OpKernels* host_ops_ = nullptr;  // the SGD of the update on the host (only then)
  struct HostCopy {                // per parameter of replica 0, in the backend's staging memory
    Tensor weight, grad, velocity;
  };
  std::vector<HostCopy> host_copies_;  // empty unless the update runs on the host
  profiler::Tracer* tracer_;
  SgdParams sgd_;
  Concurrency concurrency_;
  int64_t shard_ = 0;
  std::vector<AlignedBuffer> workspaces_;  // one per lane: layers of a lane run one at a time
  std::vector<profiler::Tracer::OpenRange> open_phase_;  // per lane, touched only by that lane
  Tensor eval_input_;
  int64_t step_ = 0;
  std::unique_ptr<Executor> executor_;  // last: its lanes stop before the state they use goes
};

// Cross-entropy and arg-max accuracy of the first labels.size() rows of logits
// {N, K, 1, 1}, on the host: for evaluation, where a final batch may be partial.
StepStats score_logits(const Tensor& logits, std::span<const int32_t> labels);

}  // namespace tunescope
