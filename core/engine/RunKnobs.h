// The engine's knobs (core/base/Knob.h): layout, threads, the concurrency knobs of
// problem 1 in docs/ARCHITECTURE.md and elementwise fusion. Knobs that only some conv
// algorithms read (fft_tile, fft_workspace) are declared by those algorithms, not here.
#pragma once

#include "core/base/CpuAffinity.h"
#include "core/base/Knob.h"
#include "core/base/Layout.h"
#include "core/engine/Concurrency.h"

namespace tunescope::knobs {

extern const Knob<Layout> layout;
extern const Knob<int> threads;  // 0: one per hardware thread
extern const Knob<int> streams;
extern const Knob<int> replicas;
extern const Knob<int> micro_batches;
extern const Knob<bool> async_update;
extern const Knob<int> threads_per_lane;
extern const Knob<UpdateOn> update_on;
extern const Knob<bool> fuse;  // batch norm + (residual add +) ReLU as one layer
// Each executor thread on a CPU of its own (core/base/CpuAffinity.h).
extern const Knob<CpuBinding> cpu_binding;
// The gradient all-reduce across ranks (core/engine/Trainer.h).
extern const Knob<int> allreduce_bucket_kb;
extern const Knob<bool> allreduce_overlap;
// Worker processes (MPI ranks) of the run, each with its share of the batch and its own
// `threads`: a tune measures a candidate with workers > 1 as that many processes
// (docs/MPI.md, "Workers as a knob"); train and profile must be started as that many ranks.
extern const Knob<int> workers;
inline constexpr int kMaxWorkers = 256;

// The bound of `threads` and `threads_per_lane`, and of the threads a run starts in all
// (lanes x threads per lane): more would only take threads other programs need.
inline constexpr int kMaxThreads = 1024;
// 1 GiB: a bucket is also a host buffer of its size.
inline constexpr int kMaxBucketKb = 1 << 20;

// The concurrency knobs of `values` as the executor takes them.
Concurrency concurrency_of(const KnobValues& values);
void set_concurrency(KnobValues& values, const Concurrency& concurrency);

}  // namespace tunescope::knobs
