// DataLoader: epoch coverage and order, layouts, padding, normalisation, prefetching,
// shutdown, error propagation and wait-time accounting.
#include "core/engine/data/DataLoader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>
#include <stdexcept>
#include <thread>

#include "tests/core/SeparateMemory.h"
#include "tests/core/engine/data/DataTestSupport.h"

namespace tunescope::data {
namespace {

using namespace std::chrono_literals;
using test_support::expect_error;

// Byte p of image i (IDX order) is (i * 7 + p) mod 256, except that bytes 0 and 1 hold
// the index itself, so a batch element can be traced back to its sample.
std::shared_ptr<Dataset> indexed_dataset(int64_t count, int64_t channels, int64_t height,
                                         int64_t width) {
  auto set = std::make_shared<Dataset>();
  set->name = "indexed";
  set->count = count;
  set->channels = channels;
  set->height = height;
  set->width = width;
  set->num_classes = 10;
  set->images.resize(static_cast<size_t>(count * set->image_bytes()));
  for (int64_t i = 0; i < count; ++i) {
    uint8_t* image = set->images.data() + i * set->image_bytes();
    for (int64_t p = 0; p < set->image_bytes(); ++p) image[p] = static_cast<uint8_t>(i * 7 + p);
    image[0] = static_cast<uint8_t>(i & 0xFF);
    image[1] = static_cast<uint8_t>(i >> 8);
    set->labels.push_back(static_cast<int32_t>(i % 10));
  }
  return set;
}

// Identity normalisation: batch values are bytes / 255.
ChannelStats unit_stats(int64_t channels) {
  return {std::vector<float>(static_cast<size_t>(channels), 0.0f),
          std::vector<float>(static_cast<size_t>(channels), 1.0f)};
}

DataLoaderOptions plain_options(int64_t channels, int64_t batch_size) {
  DataLoaderOptions options;
  options.batch_size = batch_size;
  options.normalization = unit_stats(channels);
  return options;
}

// Byte p (IDX order) of element i of a batch, undoing the identity normalisation.
int byte_at(const Batch& batch, int64_t i, int64_t p, int64_t width, int64_t pad_top = 0,
            int64_t pad_left = 0) {
  const int64_t channels = batch.images.shape().c;
  const int64_t c = p % channels, x = p / channels % width, y = p / channels / width;
  return static_cast<int>(std::lround(batch.images.at(i, c, y + pad_top, x + pad_left) * 255.0f));
}

int64_t sample_of(const Batch& batch, int64_t i, int64_t width) {
  return byte_at(batch, i, 0, width) + 256 * byte_at(batch, i, 1, width);
}

// Sample indices of one whole epoch in delivery order.
std::vector<int64_t> epoch_order(DataLoader& loader) {
  std::vector<int64_t> order;
  loader.start_epoch();
  while (auto batch = loader.next())
    for (int64_t i = 0; i < batch->size(); ++i)
      order.push_back(sample_of(*batch, i, loader.dataset().width));
  return order;
}

std::vector<Batch> epoch_batches(DataLoader& loader) {
  std::vector<Batch> batches;
  loader.start_epoch();
  while (auto batch = loader.next()) batches.push_back(std::move(*batch));
  return batches;
}

TEST(DataLoader, ShuffledEpochsCoverEverySampleOnce) {
  auto set = indexed_dataset(103, 1, 3, 4);
  DataLoader loader(set, plain_options(1, 10));
  EXPECT_EQ(loader.batches_per_epoch(), 11);
  EXPECT_EQ(loader.batch_shape(), (Shape4{10, 1, 3, 4}));
  for (int epoch = 1; epoch <= 2; ++epoch) {
    loader.start_epoch();
    EXPECT_EQ(loader.epoch(), epoch);
    std::set<int64_t> seen;
    int64_t batches = 0;
    while (auto batch = loader.next()) {
      EXPECT_EQ(batch->index, batches++);
      EXPECT_EQ(batch->size(), batch->index < 10 ? 10 : 3);
      EXPECT_EQ(batch->images.shape(), (Shape4{batch->size(), 1, 3, 4}));
      for (int64_t i = 0; i < batch->size(); ++i) {
        const int64_t sample = sample_of(*batch, i, 4);
        EXPECT_TRUE(seen.insert(sample).second) << "sample " << sample << " twice";
        EXPECT_EQ(batch->labels[i], sample % 10);
        EXPECT_EQ(byte_at(*batch, i, 11, 4), (sample * 7 + 11) % 256);
      }
    }
    EXPECT_EQ(batches, 11);
    EXPECT_EQ(seen.size(), 103u);
    EXPECT_EQ(*seen.rbegin(), 102);
    EXPECT_FALSE(loader.next());  // stays at the end
  }
}

TEST(DataLoader, OrderDependsOnEpochAndSeed) {
  auto set = indexed_dataset(300, 1, 2, 2);
  DataLoaderOptions options = plain_options(1, 32);
  options.seed = 1;
  DataLoader a(set, options), again(set, options);
  options.seed = 2;
  DataLoader other_seed(set, options);
  options.shuffle = false;
  DataLoader in_order(set, options);

  const std::vector<int64_t> first = epoch_order(a), second = epoch_order(a);
  EXPECT_NE(first, second);
  EXPECT_EQ(first, epoch_order(again));
  EXPECT_EQ(second, epoch_order(again));
  EXPECT_NE(first, epoch_order(other_seed));
  std::vector<int64_t> identity(300);
  for (int64_t i = 0; i < 300; ++i) identity[i] = i;
  EXPECT_EQ(epoch_order(in_order), identity);
  EXPECT_EQ(epoch_order(in_order), identity);
}

TEST(DataLoader, LayoutsHoldTheSameLogicalValues) {
  auto set = indexed_dataset(20, 3, 5, 6);
  DataLoaderOptions options;  // normalisation computed from the set
  options.batch_size = 8;
  options.target_height = 7;
  options.target_width = 9;
  options.layout = Layout::NCHW;
  DataLoader nchw(set, options);
  options.layout = Layout::NHWC;
  DataLoader nhwc(set, options);
  const std::vector<Batch> a = epoch_batches(nchw), b = epoch_batches(nhwc);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].images.layout(), Layout::NCHW);
    EXPECT_EQ(b[k].images.layout(), Layout::NHWC);
    const Shape4 s = a[k].images.shape();
    ASSERT_EQ(s, b[k].images.shape());
    EXPECT_EQ(a[k].labels, b[k].labels);
    int64_t nonzero = 0;
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t h = 0; h < s.h; ++h)
          for (int64_t w = 0; w < s.w; ++w) {
            ASSERT_EQ(a[k].images.at(n, c, h, w), b[k].images.at(n, c, h, w)) << n << c << h << w;
            nonzero += a[k].images.at(n, c, h, w) != 0.0f;
          }
    EXPECT_GT(nonzero, s.n * s.c * 5 * 6 / 2);
  }
}

TEST(DataLoader, PadsImagesCentredWithZeros) {
  auto set = indexed_dataset(4, 1, 28, 28);
  DataLoaderOptions options = plain_options(1, 4);
  options.normalization = ChannelStats{{0.5f}, {0.25f}};  // so interior values are rarely zero
  options.target_height = 32;
  options.target_width = 31;  // odd padding: the extra column goes to the right
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    options.layout = layout;
    DataLoader loader(set, options);
    loader.start_epoch();
    const Batch batch = *loader.next();
    ASSERT_EQ(batch.images.shape(), (Shape4{4, 1, 32, 31}));
    for (int64_t n = 0; n < 4; ++n) {
      const int64_t sample = batch.labels[n];  // labels are i % 10, and i < 4
      for (int64_t y = 0; y < 32; ++y)
        for (int64_t x = 0; x < 31; ++x) {
          const bool inside = y >= 2 && y < 30 && x >= 1 && x < 29;
          const float expected =
              inside ? (set->image(sample)[(y - 2) * 28 + (x - 1)] / 255.0f - 0.5f) / 0.25f : 0.0f;
          ASSERT_NEAR(batch.images.at(n, 0, y, x), expected, 1e-6f)
              << to_string(layout) << " " << y << "," << x;
        }
    }
  }
}

TEST(DataLoader, NormalisesWithGivenOrComputedStatistics) {
  // Channel 0 is constant 51 (0.2); channel 1 alternates 0 and 255 (mean 0.5, std 0.5).
  auto set = std::make_shared<Dataset>();
  set->name = "two-channel";
  set->count = 2;
  set->channels = 2;
  set->height = 1;
  set->width = 2;
  set->num_classes = 2;
  set->images = {51, 0, 51, 255, 51, 255, 51, 0};
  set->labels = {0, 1};
  const ChannelStats stats = compute_channel_stats(*set);
  EXPECT_NEAR(stats.mean[0], 0.2f, 1e-6f);
  EXPECT_NEAR(stats.stddev[0], 0.0f, 1e-6f);
  EXPECT_NEAR(stats.mean[1], 0.5f, 1e-6f);
  EXPECT_NEAR(stats.stddev[1], 0.5f, 1e-6f);

  DataLoaderOptions options;
  options.batch_size = 2;
  options.shuffle = false;
  DataLoader computed(set, options);
  EXPECT_EQ(computed.normalization().stddev[0], 1.0f);  // a constant channel is only centred
  computed.start_epoch();
  const Batch a = *computed.next();
  EXPECT_NEAR(a.images.at(0, 0, 0, 0), 0.0f, 1e-6f);
  EXPECT_NEAR(a.images.at(0, 1, 0, 0), -1.0f, 1e-6f);
  EXPECT_NEAR(a.images.at(0, 1, 0, 1), 1.0f, 1e-6f);
  EXPECT_NEAR(a.images.at(1, 1, 0, 0), 1.0f, 1e-6f);

  options.normalization = ChannelStats{{0.1f, 0.3f}, {0.5f, 2.0f}};
  DataLoader given(set, options);
  given.start_epoch();
  const Batch b = *given.next();
  EXPECT_NEAR(b.images.at(1, 0, 0, 1), (0.2f - 0.1f) / 0.5f, 1e-6f);
  EXPECT_NEAR(b.images.at(1, 1, 0, 1), (0.0f - 0.3f) / 2.0f, 1e-6f);
  EXPECT_NEAR(b.images.at(1, 1, 0, 0), (1.0f - 0.3f) / 2.0f, 1e-6f);
}

TEST(DataLoader, PrefetchDepthDoesNotChangeTheBatches) {
  auto set = indexed_dataset(77, 2, 5, 5);
  DataLoaderOptions options = plain_options(2, 9);
  options.seed = 5;
  options.target_height = options.target_width = 8;
  std::vector<std::vector<Batch>> runs;
  for (int depth : {0, 1, 4}) {
    options.prefetch = depth;
    DataLoader loader(set, options);
    std::vector<Batch> batches = epoch_batches(loader);
    std::vector<Batch> second = epoch_batches(loader);
    batches.insert(batches.end(), std::make_move_iterator(second.begin()),
                   std::make_move_iterator(second.end()));
    runs.push_back(std::move(batches));
  }
  ASSERT_EQ(runs[0].size(), 18u);
  for (size_t r = 1; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[0].size());
    for (size_t k = 0; k < runs[0].size(); ++k) {
      EXPECT_EQ(runs[r][k].index, runs[0][k].index);
      EXPECT_EQ(runs[r][k].labels, runs[0][k].labels);
      ASSERT_EQ(runs[r][k].images.shape(), runs[0][k].images.shape());
      EXPECT_TRUE(std::equal(runs[0][k].images.data(),
                             runs[0][k].images.data() + runs[0][k].images.size(),
                             runs[r][k].images.data()))
          << "run " << r << " batch " << k;
    }
  }
}

TEST(DataLoader, StopsCleanlyMidEpoch) {
  auto set = indexed_dataset(2000, 1, 8, 8);
  std::atomic<int> built{0};
  DataLoaderOptions options = plain_options(1, 16);
  options.prefetch = 3;
  options.transform = [&](Batch&) {
    ++built;
    std::this_thread::sleep_for(100us);  // keep the producer busy when it is stopped
  };
  for (int round = 0; round < 20; ++round) {
    DataLoader loader(set, options);
    if (round % 4 == 0) continue;  // destroyed before any epoch
    loader.start_epoch();
    if (round % 4 == 1) continue;  // destroyed while the producer starts
    ASSERT_TRUE(loader.next());
    if (round % 4 == 2) continue;  // destroyed with a full queue or a blocked producer
    loader.start_epoch();          // abandons the epoch, starts a fresh one
    int64_t batches = 0;
    while (loader.next()) ++batches;
    EXPECT_EQ(batches, loader.batches_per_epoch());
  }
  // The producer never ran ahead by more than the depth (3): per cycle of four rounds at
  // most 3 unread batches, 1 read + 3, 1 read + 3 then a full epoch of 125.
  EXPECT_LE(built.load(), 5 * (3 + 4 + 4 + 125));
}

TEST(DataLoader, DropLastDropsThePartialBatch) {
  auto set = indexed_dataset(10, 1, 2, 2);
  for (int depth : {0, 2}) {
    DataLoaderOptions options = plain_options(1, 4);
    options.prefetch = depth;
    DataLoader keep(set, options);
    options.drop_last = true;
    DataLoader drop(set, options);
    EXPECT_EQ(keep.batches_per_epoch(), 3);
    EXPECT_EQ(drop.batches_per_epoch(), 2);
    std::vector<int64_t> keep_sizes, drop_sizes;
    for (const Batch& b : epoch_batches(keep)) keep_sizes.push_back(b.size());
    for (const Batch& b : epoch_batches(drop)) drop_sizes.push_back(b.size());
    EXPECT_EQ(keep_sizes, (std::vector<int64_t>{4, 4, 2}));
    EXPECT_EQ(drop_sizes, (std::vector<int64_t>{4, 4}));
  }
}

TEST(DataLoader, FailuresInBuildingBatchesReachTheConsumer) {
  auto set = indexed_dataset(40, 1, 2, 2);
  for (int depth : {0, 3}) {
    bool armed = true;  // written before start_epoch, which orders it for the producer
    DataLoaderOptions options = plain_options(1, 8);
    options.prefetch = depth;
    options.transform = [&](Batch& batch) {
      if (armed && batch.index == 2) throw std::runtime_error("augmentation failed on batch 2");
    };
    DataLoader loader(set, options);
    loader.start_epoch();
    EXPECT_EQ(loader.next()->index, 0);
    EXPECT_EQ(loader.next()->index, 1);
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        loader.next();
        ADD_FAILURE() << "depth " << depth << ": no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "augmentation failed on batch 2");
      }
    }
    armed = false;
    std::vector<Batch> batches = epoch_batches(loader);
    EXPECT_EQ(batches.size(), 5u) << "a new epoch recovers";
  }
}

TEST(DataLoader, CountsTheConsumersWaitingTime) {
  auto set = indexed_dataset(32, 1, 2, 2);
  DataLoaderOptions options = plain_options(1, 8);
  options.transform = [](Batch&) { std::this_thread::sleep_for(20ms); };

  options.prefetch = 0;
  DataLoader synchronous(set, options);
  epoch_batches(synchronous);
  EXPECT_EQ(synchronous.stats().batches, 4);
  EXPECT_GE(synchronous.wait_time(), 80ms);  // every batch is built while the consumer waits
  EXPECT_GE(synchronous.stats().assemble, 80ms);

  options.prefetch = 2;
  DataLoader prefetching(set, options);
  prefetching.start_epoch();
  std::this_thread::sleep_for(150ms);  // the producer fills the queue meanwhile
  ASSERT_TRUE(prefetching.next());
  ASSERT_TRUE(prefetching.next());
  EXPECT_LT(prefetching.wait_time(), 40ms);  // both batches were ready
  while (prefetching.next()) {
  }
  EXPECT_EQ(prefetching.stats().batches, 4);
  EXPECT_GE(prefetching.stats().assemble, 80ms);
}

// wait_prefetched returns once the input thread holds its `prefetch` batches (each built
// after the wait began is counted by the transform), once the epoch's last batch is
// built, or once building failed, which next() then rethrows; at once without a thread.
TEST(DataLoader, WaitPrefetchedReturnsWithTheQueueFull) {
  auto set = indexed_dataset(48, 1, 2, 2);  // 6 batches of 8
  std::atomic<int> built = 0;
  std::atomic<int> fail_at = -1;
  DataLoaderOptions options = plain_options(1, 8);
  options.transform = [&](Batch& batch) {
    std::this_thread::sleep_for(10ms);  // slow enough that a wait that returns early shows
    if (batch.index == fail_at) throw std::runtime_error("batch failed");
    ++built;
  };
  options.prefetch = 3;
  DataLoader loader(set, options);
  loader.start_epoch();
  ASSERT_TRUE(loader.next());
  ASSERT_TRUE(loader.next());
  loader.wait_prefetched();
  EXPECT_EQ(built, 2 + 3) << "the two taken and three ready";
  const auto waited = loader.wait_time();
  ASSERT_TRUE(loader.next());
  EXPECT_LT(loader.wait_time() - waited, 5ms) << "the next batch was ready";
  ASSERT_TRUE(loader.next());
  ASSERT_TRUE(loader.next());
  loader.wait_prefetched();  // one batch left to build: the epoch's last
  EXPECT_EQ(built, 6);
  ASSERT_TRUE(loader.next());
  EXPECT_FALSE(loader.next());
  loader.wait_prefetched();  // the epoch is over: returns at once

  built = 0;
  fail_at = 1;
  loader.start_epoch();
  loader.wait_prefetched();  // building failed: the wait ends, next() reports it
  ASSERT_TRUE(loader.next());
  EXPECT_THROW(loader.next(), std::runtime_error);

  options.prefetch = 0;
  options.transform = [&](Batch&) { ++built; };
  built = 0;
  DataLoader synchronous(set, options);
  synchronous.start_epoch();
  synchronous.wait_prefetched();
  EXPECT_EQ(built, 0) << "no input thread: nothing built ahead";
}

TEST(DataLoader, RejectsMisuse) {
  auto set = indexed_dataset(10, 2, 4, 4);
  DataLoaderOptions options = plain_options(2, 4);
  DataLoader loader(set, options);
  expect_error(ErrorKind::runtime, [&] { loader.next(); }, {"before start_epoch"});

  DataLoaderOptions bad = options;
  bad.batch_size = 0;
  expect_error(ErrorKind::usage, [&] { DataLoader{set, bad}; }, {"batch size"});
  bad = options;
  bad.target_height = 3;
  expect_error(ErrorKind::usage, [&] { DataLoader{set, bad}; }, {"smaller than the images"});
  bad = options;
  bad.normalization = unit_stats(1);
  expect_error(ErrorKind::usage, [&] { DataLoader{set, bad}; }, {"2 channels"});
  bad = options;
  bad.normalization->stddev[1] = 0;
  expect_error(ErrorKind::usage, [&] { DataLoader{set, bad}; }, {"positive"});
  bad = options;
  bad.prefetch = -1;
  expect_error(ErrorKind::usage, [&] { DataLoader{set, bad}; }, {"prefetch"});
  tunescope::test_support::SeparateMemory
      device;  // batches must be readable by the host that fills them
  bad = options;
  bad.memory = &device;
  expect_error(ErrorKind::usage,
               [&] {
                 DataLoader{set, bad};
               },
               {"host-accessible memory", "separate:0"});
}

// Ranks: each loader takes its rows of every batch (7 = 4 + 3 over two ranks). The
// shares are disjoint, together they are the single loader's batch, and each row's image
// is its sample's.
TEST(DataLoader, RankRowsSplitEveryBatchIntoDistinctShares) {
  auto set = indexed_dataset(30, 1, 4, 4);
  DataLoaderOptions whole = plain_options(1, 7);
  whole.seed = 5;
  whole.drop_last = true;
  DataLoaderOptions first = whole, second = whole;
  first.rows_count = 4;
  second.rows_first = 4;
  second.rows_count = 3;
  DataLoader all(set, whole), rank0(set, first), rank1(set, second);
  EXPECT_EQ(rank0.batch_shape().n, 4);
  EXPECT_EQ(rank1.batches_per_epoch(), all.batches_per_epoch());
  for (int epoch = 0; epoch < 2; ++epoch) {
    all.start_epoch();
    rank0.start_epoch();
    rank1.start_epoch();
    std::set<int64_t> seen;
    while (auto batch = all.next()) {
      auto a = rank0.next(), b = rank1.next();
      ASSERT_TRUE(a && b);
      ASSERT_EQ(a->size(), 4);
      ASSERT_EQ(b->size(), 3);
      std::vector<int64_t> joined = a->samples;
      joined.insert(joined.end(), b->samples.begin(), b->samples.end());
      EXPECT_EQ(joined, batch->samples);
      for (int64_t sample : joined) EXPECT_TRUE(seen.insert(sample).second) << sample;
      for (int64_t i = 0; i < 3; ++i)
        EXPECT_EQ(byte_at(*b, i, 0, 4) + 256 * byte_at(*b, i, 1, 4), b->samples[i]);
    }
    EXPECT_FALSE(rank0.next() || rank1.next());
    EXPECT_EQ(seen.size(), 28u);  // 4 full batches of 7 out of 30
  }
  DataLoaderOptions bad = whole;
  bad.rows_first = 5;
  bad.rows_count = 3;
  expect_error(ErrorKind::usage, [&] { DataLoader loader(set, bad); }, {"do not fit a batch of 7"});
}

}  // namespace
}  // namespace tunescope::data
