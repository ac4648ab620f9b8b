// DataLoader: epoch orders, batch assembly through a per-channel lookup table, and the
// bounded producer/consumer queue of the prefetch thread.
#include "core/engine/data/DataLoader.h"

#include <cmath>
#include <numeric>

#include "core/base/Error.h"
#include "core/engine/data/DatasetCache.h"
#include "core/engine/data/Random.h"

namespace tunescope::data {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::nanoseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
}

}  // namespace

ChannelStats compute_channel_stats(const Dataset& dataset) {
  const int64_t channels = dataset.channels;
  const int64_t pixels = static_cast<int64_t>(dataset.images.size()) / channels;
  if (pixels == 0)
    fail(ErrorKind::usage, "cannot compute channel statistics of the empty data set ",
         dataset.name);
  // Histograms make the sums exact integers: no float drift over millions of pixels.
  std::vector<uint64_t> histogram(static_cast<size_t>(channels) * 256, 0);
  const uint8_t* p = dataset.images.data();
  for (int64_t i = 0; i < pixels; ++i)
    for (int64_t c = 0; c < channels; ++c) ++histogram[c * 256 + *p++];
  ChannelStats stats;
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, sum_sq = 0;
    for (int b = 0; b < 256; ++b) {
      const double n = static_cast<double>(histogram[c * 256 + b]);
      sum += n * b;
      sum_sq += n * b * b;
    }
    const double mean = sum / pixels / 255.0;
    const double var = std::max(0.0, sum_sq / pixels / (255.0 * 255.0) - mean * mean);
    stats.mean.push_back(static_cast<float>(mean));
    stats.stddev.push_back(static_cast<float>(std::sqrt(var)));
  }
  return stats;
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (!dataset_) fail(ErrorKind::usage, "DataLoader needs a data set");
  const Dataset& set = *dataset_;
  if (static_cast<int64_t>(set.images.size()) != set.count * set.image_bytes() ||
      static_cast<int64_t>(set.labels.size()) != set.count)
    fail(ErrorKind::usage, "data set ", set.name, " is inconsistent: ", set.count, " items of ",
         set.image_bytes(), " bytes but ", set.images.size(), " image bytes and ",
         set.labels.size(), " labels");
  if (options_.batch_size < 1)
    fail(ErrorKind::usage, "batch size must be at least 1, not ", options_.batch_size);
  if (!options_.memory || !options_.memory->host_accessible())
    fail(ErrorKind::usage, "data loader: batches need host-accessible memory, not ",
         options_.memory ? options_.memory->name() : std::string("none"));
  if (options_.prefetch < 0)
    fail(ErrorKind::usage, "prefetch depth must be at least 0, not ", options_.prefetch);
  if (options_.rows_first < 0 || options_.rows_count < 0 ||
      options_.rows_first + options_.rows_count > options_.batch_size ||
      (options_.rows_first > 0 && options_.rows_count == 0))
    fail(ErrorKind::usage, "data loader: rows ", options_.rows_first, " + ", options_.rows_count,
         " of each batch do not fit a batch of ", options_.batch_size);
  if (options_.target_height == 0) options_.target_height = set.height;
  if (options_.target_width == 0) options_.target_width = set.width;
  if (options_.target_height < set.height || options_.target_width < set.width)
    fail(ErrorKind::usage, "target size ", options_.target_height, "x", options_.target_width,
         " is smaller than the images of ", set.name, " (", set.height, "x", set.width, ")");
  pad_top_ = (options_.target_height - set.height) / 2;
  pad_left_ = (options_.target_width - set.width) / 2;

  if (options_.normalization) {
    stats_ = *options_.normalization;
    if (static_cast<int64_t>(stats_.mean.size()) != set.channels ||
        static_cast<int64_t>(stats_.stddev.size()) != set.channels)
      fail(ErrorKind::usage, "normalisation has ", stats_.mean.size(), " means and ",
           stats_.stddev.size(), " standard deviations for the ", set.channels, " channels of ",
           set.name);
    for (float s : stats_.stddev)
      if (!(s > 0))
        fail(ErrorKind::usage, "normalisation standard deviation must be positive, not ", s);
  } else {
    stats_ = channel_stats_shared(dataset_);  // once per cached set (DatasetCache.h)
    for (float& s : stats_.stddev)
      if (s == 0) s = 1;  // a constant channel: centre it, nothing to scale
  }
  lut_.resize(static_cast<size_t>(set.channels) * 256);
  for (int64_t c = 0; c < set.channels; ++c)
    for (int b = 0; b < 256; ++b)
      lut_[c * 256 + b] = (static_cast<float>(b) / 255.0f - stats_.mean[c]) / stats_.stddev[c];
}

DataLoader::~DataLoader() { stop_producer(); }

int64_t DataLoader::batches_per_epoch() const {
  const int64_t count = dataset_->count, size = options_.batch_size;
  return options_.drop_last ? count / size : (count + size - 1) / size;
}

Shape4 DataLoader::batch_shape() const {
  return {options_.rows_count ? options_.rows_count : options_.batch_size, dataset_->channels,
          options_.target_height, options_.target_width};
}

DataLoaderStats DataLoader::stats() const {
  return {delivered_, wait_, std::chrono::nanoseconds(assemble_ns_.load())};
}

void DataLoader::start_epoch() {
  stop_producer();
  ++epoch_;
  cursor_ = 0;
  order_.resize(static_cast<size_t>(dataset_->count));
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (options_.shuffle) {
    SplitMix64 rng(mix_seed(options_.seed, static_cast<uint64_t>(epoch_)));
    shuffle_in_place(order_, rng);
  }
  if (options_.prefetch > 0) producer_ = std::thread([this] { produce(); });
}

std::optional<Batch> DataLoader::next() {
  if (epoch_ == 0) fail(ErrorKind::runtime, "DataLoader::next() called before start_epoch()");
  const Clock::time_point start = Clock::now();
  std::optional<Batch> batch;
  if (options_.prefetch == 0) {
    if (error_) std::rethrow_exception(error_);
    if (cursor_ < batches_per_epoch()) {
      try {
        batch = assemble(cursor_++);
      } catch (...) {
        error_ = std::current_exception();  // keep failing, as the threaded mode does
        throw;
      }
    }
  } else {
    std::unique_lock lock(mutex_);
    filled_.wait(lock, [&] { return !ready_.empty() || done_; });
    if (!ready_.empty()) {
      batch = std::move(ready_.front());
      ready_.pop_front();
      lock.unlock();
      space_.notify_one();
    } else if (error_) {
      wait_ += since(start);
      std::rethrow_exception(error_);
    }
  }
  wait_ += since(start);
  if (batch) ++delivered_;
  return batch;
}

void DataLoader::wait_prefetched() {
  if (options_.prefetch == 0 || !producer_.joinable()) return;
  const auto depth = static_cast<size_t>(options_.prefetch);
  std::unique_lock lock(mutex_);
  filled_.wait(lock, [&] { return ready_.size() >= depth || done_ || stop_; });
}

Batch DataLoader::assemble(int64_t batch_index) const {
  const Clock::time_point start = Clock::now();
  const Dataset& set = *dataset_;
  const int64_t rows = options_.rows_count ? options_.rows_count : options_.batch_size;
  const int64_t first = batch_index * options_.batch_size + options_.rows_first;
  const int64_t n = std::max<int64_t>(0, std::min(rows, set.count - first));
  const int64_t channels = set.channels, height = set.height, width = set.width;

  Batch batch;
  batch.index = batch_index;
  // The tensor starts zeroed, which is the padding value after normalisation.
  batch.images = Tensor({n, channels, options_.target_height, options_.target_width},
                        options_.layout, *options_.memory);
  batch.labels.resize(static_cast<size_t>(n));
  batch.samples.resize(static_cast<size_t>(n));
  const Strides4 st = batch.images.strides();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t sample = order_[first + i];
    batch.labels[i] = set.labels[sample];
    batch.samples[i] = sample;
    const uint8_t* src = set.image(sample);
    float* dst = batch.images.data() + i * st.n + pad_top_ * st.h + pad_left_ * st.w;
    // Loop order follows the destination so every written row is contiguous.
    if (options_.layout == Layout::NHWC) {
      for (int64_t y = 0; y < height; ++y, src += width * channels) {
        float* row = dst + y * st.h;
        for (int64_t x = 0; x < width; ++x)
          for (int64_t c = 0; c < channels; ++c)
            row[x * channels + c] = lut_[c * 256 + src[x * channels + c]];
      }
    } else {
      for (int64_t c = 0; c < channels; ++c) {
        const float* lut = lut_.data() + c * 256;
        for (int64_t y = 0; y < height; ++y) {
          const uint8_t* in = src + y * width * channels + c;
          float* row = dst + c * st.c + y * st.h;
          for (int64_t x = 0; x < width; ++x) row[x] = lut[in[x * channels]];
        }
      }
    }
  }
  if (options_.transform) options_.transform(batch);
  assemble_ns_ += since(start).count();
  return batch;
}

void DataLoader::produce() {
  const int64_t total = batches_per_epoch();
  const size_t depth = static_cast<size_t>(options_.prefetch);
  try {
    for (int64_t b = 0; b < total; ++b) {
      {
        std::unique_lock lock(mutex_);
        space_.wait(lock, [&] { return ready_.size() < depth || stop_; });
        if (stop_) return;
      }
      Batch batch = assemble(b);
      {
        std::lock_guard lock(mutex_);
        if (stop_) return;
        ready_.push_back(std::move(batch));
      }
      filled_.notify_one();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  filled_.notify_one();
}

void DataLoader::stop_producer() {
  if (producer_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    space_.notify_all();
    producer_.join();
  }
  // Only this thread is left: reset the epoch's state without the lock.
  ready_.clear();
  stop_ = false;
  done_ = false;
  error_ = nullptr;
}

}  // namespace tunescope::data
