// Loading a data set once per process: the tuner builds a training session for every
// candidate, and each session used to generate 60,000 fake images (or decompress
// Fashion-MNIST) again, which was a third of a LeNet-5 tune's CPU time
// (docs/BENCHMARKS.md, "Tuner cost").
#pragma once

#include <memory>
#include <string_view>

#include "core/engine/data/DataLoader.h"
#include "core/engine/data/Dataset.h"

namespace tunescope::data {

// load_dataset's result, shared with every later call of the same spec, split and
// options while the files it read are unchanged (each file's size and modification
// time in the folder are part of the key; fake data is a function of its options).
// The cache keeps the latest load of each split, so a process holds at most one train
// and one test set beyond what its sessions hold.
std::shared_ptr<const Dataset> load_dataset_shared(std::string_view spec, Split split,
                                                   const DataSourceOptions& options = {});

// compute_channel_stats(*set), computed once for a set the cache holds (a data loader
// over 60,000 images spent as long on them as on a LeNet-5 step); computed each time
// for any other set.
ChannelStats channel_stats_shared(const std::shared_ptr<const Dataset>& set);

}  // namespace tunescope::data
