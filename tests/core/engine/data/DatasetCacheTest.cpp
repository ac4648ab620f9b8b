// load_dataset_shared: one load per spec, split and options while the files are
// unchanged, a new load when any of them changes.
#include "core/engine/data/DatasetCache.h"

#include <gtest/gtest.h>

#include "core/engine/data/IdxFile.h"
#include "tests/core/engine/data/DataTestSupport.h"

namespace tunescope::data {
namespace {

namespace fs = std::filesystem;

FakeDataOptions small_fake(uint64_t seed) {
  FakeDataOptions fake;
  fake.train_count = 50;
  fake.test_count = 20;
  fake.seed = seed;
  return fake;
}

TEST(DatasetCache, FakeDataIsGeneratedOncePerOptions) {
  DataSourceOptions options;
  options.fake = small_fake(3);
  const auto first = load_dataset_shared("fake", Split::train, options);
  EXPECT_EQ(load_dataset_shared("fake", Split::train, options), first);  // the same object
  // The same as an uncached load, image for image.
  const Dataset direct = load_dataset("fake", Split::train, options);
  EXPECT_EQ(first->images, direct.images);
  EXPECT_EQ(first->labels, direct.labels);
  // The test split is cached beside the train split, not instead of it.
  const auto test = load_dataset_shared("fake", Split::test, options);
  EXPECT_EQ(test->count, 20);
  EXPECT_EQ(load_dataset_shared("fake", Split::train, options), first);
  // Other options: another data set.
  options.fake = small_fake(4);
  const auto other = load_dataset_shared("fake", Split::train, options);
  EXPECT_NE(other, first);
  EXPECT_NE(other->images, first->images);
  options.fake = small_fake(3);
  options.fake.train_count = 40;
  EXPECT_EQ(load_dataset_shared("fake", Split::train, options)->count, 40);
}

void write_folder(const fs::path& dir, uint8_t fill, int64_t images) {
  IdxArray image_array{{images, 4, 4},
                       std::vector<uint8_t>(static_cast<size_t>(images * 16), fill)};
  IdxArray label_array{{images}, std::vector<uint8_t>(static_cast<size_t>(images), 1)};
  write_idx(dir / "train-images-idx3-ubyte", image_array);
  write_idx(dir / "train-labels-idx1-ubyte", label_array);
}

TEST(DatasetCache, AFolderIsReadAgainWhenItsFilesChange) {
  const test_support::ScratchDir scratch;
  write_folder(scratch.path(), 7, 5);
  const std::string spec = scratch.path().string();
  const auto first = load_dataset_shared(spec, Split::train);
  EXPECT_EQ(first->images.front(), 7);
  EXPECT_EQ(load_dataset_shared(spec, Split::train), first);
  // Rewritten with other contents and another size: the cache must not serve the old set.
  write_folder(scratch.path(), 9, 6);
  const auto second = load_dataset_shared(spec, Split::train);
  EXPECT_EQ(second->count, 6);
  EXPECT_EQ(second->images.front(), 9);
}

TEST(DatasetCache, ChannelStatisticsOfACachedSetAreTheExactOnes) {
  DataSourceOptions options;
  options.fake = small_fake(5);
  const auto set = load_dataset_shared("fake", Split::train, options);
  const ChannelStats exact = compute_channel_stats(*set);
  for (int i = 0; i < 2; ++i) {  // computed, then served from the cache
    const ChannelStats shared = channel_stats_shared(set);
    EXPECT_EQ(shared.mean, exact.mean);
    EXPECT_EQ(shared.stddev, exact.stddev);
  }
  // A set the cache does not hold gets its own statistics, not a cached set's.
  Dataset other = load_dataset("fake", Split::train, options);
  for (uint8_t& pixel : other.images) pixel = static_cast<uint8_t>(255 - pixel);
  const auto inverted = std::make_shared<const Dataset>(std::move(other));
  EXPECT_EQ(channel_stats_shared(inverted).mean, compute_channel_stats(*inverted).mean);
  EXPECT_NE(channel_stats_shared(inverted).mean, exact.mean);
}

}  // namespace
}  // namespace tunescope::data
