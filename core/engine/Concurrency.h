// The concurrency knobs of a run (problem 1 of docs/ARCHITECTURE.md): streams (ordered lanes per
// replica), the batch split into data-parallel replicas x sequential micro-batches, the
// asynchronous weight update, where the update runs and the threads of each lane. Plain
// data shared by SessionOptions, RunConfig and the tuner's search space.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tunescope {

// Where SGD runs on a backend whose memory the host cannot read (cuda): on the device,
// or on host threads between a gradient download and a weight upload (Trainer.h).
enum class UpdateOn { device, host };
inline constexpr const char* kUpdateOnValues = "device, host";
const char* to_string(UpdateOn where);
// nullopt for anything but "device" and "host".
std::optional<UpdateOn> parse_update_on(std::string_view text);

struct Concurrency {
  int streams = 1;            // lanes per replica: compute, parameter gradients, update
  int replicas = 1;           // data-parallel copies of the model, each batch / replicas examples
  int micro_batches = 1;      // gradient accumulation steps per replica before one update
  bool async_update = false;  // the update of step k overlaps the forward pass of step k+1
  int threads_per_lane = 0;   // 0: the run's threads shared out over the lanes
  UpdateOn update_on = UpdateOn::device;

  int lanes() const { return streams * replicas; }
  // Examples each replica takes per micro-batch.
  int64_t shard(int64_t batch) const {
    return batch / (static_cast<int64_t>(replicas) * micro_batches);
  }
  // The pool size of each lane for a run of `threads` threads in all.
  int lane_threads(int threads) const;
  // The executor threads of such a run: every lane's pool (the lanes a run adds itself, for
  // ranks or a host update, not counted).
  int64_t executor_threads(int threads) const { return int64_t{lanes()} * lane_threads(threads); }
  // Throws Error(usage) naming the flag: values < 1 (threads_per_lane < 0), or a split
  // that does not divide `batch` evenly.
  void validate(int64_t batch) const;
  // " streams=2 async replicas=2 micro=2 threads/lane=1 update=host": the non-default knobs, for
  // labels (empty for the defaults, so single-lane labels stay as they were).
  std::string label() const;
  bool operator==(const Concurrency&) const = default;
};

}  // namespace tunescope
