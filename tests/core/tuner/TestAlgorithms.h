// Test-only convolution algorithms registered in the test_tuner binary (never in the
// product): deliberately wrong, throwing, NaN-producing, slow, and partially supporting
// ones, to drive the tuner's dispositions. Plus small shared fixtures.
#pragma once

#include <string>

#include "core/engine/RunConfig.h"
#include "core/engine/TrainingSession.h"

namespace tunescope::tuner::test_support {

inline constexpr const char* kWrong = "test-wrong";  // forward output scaled by 1.5
// Subtly wrong: backward_filter's output 5% too large, the rest exact. Used on one layer
// it spoils that layer's weight gradient alone (loss and other gradients stay right).
inline constexpr const char* kFilterOff = "test-filter-off";
inline constexpr float kFilterOffScale = 1.05f;
// The same defect on an instance's first backward_filter call only: a one-off deviation
// on the first batch, as a ReLU tie flip gives, with the next batch exact.
inline constexpr const char* kFirstFilterOff = "test-first-filter-off";
// Winograd whose backward data forgets to flip the filter (it runs the real `winograd` on
// a filter rotated by 180 degrees, so the two flips cancel): the classic transposed-
// convolution bug, right in forward and backward filter.
inline constexpr const char* kWinogradNoFlip = "test-winograd-no-flip";
// The correct winograd with F(2x2, 3x3) on every layer (the registered one picks F(4x4)
// on all of resnet18-small's 3x3 stride-1 layers).
inline constexpr const char* kWinogradF2 = "test-winograd-f2";
inline constexpr const char* kThrows = "test-throws";  // forward throws Error(runtime)
inline constexpr const char* kNan = "test-nan";        // forward writes NaN
inline constexpr const char* kSlow = "test-slow";      // direct + 20 ms sleep per pass
// Fast alone, slow in a network: direct, plus kSlowInNetworkMs per pass inside a
// session (whose calls carry a tracer) but not in the per-layer find's lone layer. It
// stands for what the find cannot see (layout transitions, caches a neighbour evicts).
inline constexpr const char* kSlowInNetwork = "test-slow-in-network";
inline constexpr int kSlowInNetworkMs = 15;
inline constexpr const char* kConv1Only = "test-conv1-only";  // direct, only for 1 input channel
// Only for isolated trials (MeasureOptions::isolate): they take their process down.
inline constexpr const char* kSegfault = "test-segfault";  // forward raises SIGSEGV
inline constexpr const char* kAbort = "test-abort";        // forward calls std::abort
inline constexpr const char* kHang = "test-hang";          // forward sleeps for an hour

// lenet5 on a few fake examples, batch 8, one thread: a step takes about a millisecond.
SessionOptions tiny_session();
// `algorithm` on every conv layer of `base`'s model that it supports in `layout`, direct
// on the others (winograd runs 3x3 stride-1 layers only).
RunConfig config_where_supported(const SessionOptions& base, Layout layout,
                                 const std::string& algorithm);
// The config of `base` with `algorithm` on every conv layer (in `layout` when given).
RunConfig config_with(const SessionOptions& base, Layout layout, const std::string& algorithm);
RunConfig config_with(const SessionOptions& base, const std::string& algorithm);

}  // namespace tunescope::tuner::test_support
