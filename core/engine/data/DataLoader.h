// The input pipeline: turns a Dataset into normalised, padded float batches in the
// requested layout, optionally prepared ahead by a background thread, and measures how
// long the consumer waited for them (the real-vs-fake input gap).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/base/Layout.h"
#include "core/base/Shape4.h"
#include "core/base/Tensor.h"
#include "core/engine/data/Dataset.h"

namespace tunescope::data {

// Per-channel mean and standard deviation of pixel values scaled to [0, 1].
struct ChannelStats {
  std::vector<float> mean;
  std::vector<float> stddev;
};

// Exact statistics over every pixel of the set (from per-channel byte histograms).
ChannelStats compute_channel_stats(const Dataset& dataset);

struct Batch {
  Tensor images;                 // (n, channels, height, width) in the loader's layout
  std::vector<int32_t> labels;   // n labels
  int64_t index = 0;             // position of the batch in its epoch
  std::vector<int64_t> samples;  // the dataset index of each row

  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

struct DataLoaderOptions {
  int64_t batch_size = 64;
  Layout layout = Layout::NCHW;
  // Images are centred in a target_height x target_width frame padded with zeros after
  // normalisation (28x28 -> 32x32 for CIFAR-sized models); 0 keeps the dataset's size.
  int64_t target_height = 0;
  int64_t target_width = 0;
  // pixel -> (pixel / 255 - mean[c]) / stddev[c]. Unset: computed from the loader's own
  // dataset; give the training set's statistics to a test-set loader.
  std::optional<ChannelStats> normalization;
  bool shuffle = true;
  uint64_t seed = 0;  // with the epoch number, decides each epoch's order
  bool drop_last = false;
  // This loader's rows of each batch of batch_size (a rank's share, with drop_last): it
  // delivers rows [rows_first, rows_first + rows_count) of every batch. 0: all rows.
  int64_t rows_first = 0;
  int64_t rows_count = 0;
  // Batches prepared ahead by a background thread; 0 builds each batch inside next().
  int prefetch = 2;
  // Where batch images are allocated: host-accessible memory, the backend's staging
  // memory (page-locked on cuda, so the upload of a batch is an asynchronous DMA).
  MemorySpace* memory = &host_memory();
  // Runs on each assembled batch on the producing thread (augmentation, tests); an
  // exception from it reaches the consumer's next().
  std::function<void(Batch&)> transform;
};

struct DataLoaderStats {
  int64_t batches = 0;                   // delivered by next()
  std::chrono::nanoseconds wait{0};      // consumer time inside next(), blocked or building
  std::chrono::nanoseconds assemble{0};  // time building batches, on whichever thread
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  // Stops a producer mid-epoch: it is woken, finishes at most the batch in hand, joins.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Begins the next epoch with a fresh order, abandoning what is left of the current one.
  void start_epoch();
  // The next batch of the epoch, or nullopt after the last. Rethrows a failure in
  // building a batch (on every call until the next start_epoch). Throws Error(runtime)
  // before the first start_epoch.
  std::optional<Batch> next();
  // Blocks until the input thread has its `prefetch` batches ready, or the epoch's last
  // batch is built, or building failed (next() rethrows it); at once without an input
  // thread. A caller that times other work next (the tuner's interleaved rounds) keeps this
  // loader's building out of it.
  void wait_prefetched();

  int64_t batches_per_epoch() const;
  int64_t epoch() const { return epoch_; }  // epochs started so far
  // Shape of a full batch; the last batch may have fewer items unless drop_last.
  Shape4 batch_shape() const;
  const ChannelStats& normalization() const { return stats_; }
  const Dataset& dataset() const { return *dataset_; }
  const DataLoaderOptions& options() const { return options_; }
  DataLoaderStats stats() const;
  std::chrono::nanoseconds wait_time() const { return wait_; }

 private:
  Batch assemble(int64_t batch_index) const;
  void produce();
  void stop_producer();

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  ChannelStats stats_;
  std::vector<float> lut_;  // channels x 256: normalised value of each byte
  int64_t pad_top_ = 0;
  int64_t pad_left_ = 0;
  std::vector<int64_t> order_;  // sample indices of the current epoch
  int64_t epoch_ = 0;
  int64_t cursor_ = 0;  // next batch to build, synchronous mode

  int64_t delivered_ = 0;
  std::chrono::nanoseconds wait_{0};
  mutable std::atomic<int64_t> assemble_ns_{0};

  std::thread producer_;
  std::mutex mutex_;
  std::condition_variable space_;   // producer waits for room in ready_
  std::condition_variable filled_;  // consumer waits for a batch, the end or an error
  std::deque<Batch> ready_;
  bool stop_ = false;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace tunescope::data
