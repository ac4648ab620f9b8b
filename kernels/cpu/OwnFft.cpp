// tunescope's own batched 2-D real FFT: see OwnFft.h. This file holds what does not
// depend on the instruction set (twiddles, scratch, the split over threads); the
// kernels are in OwnFftKernels.h, built once per instruction set.
#include "kernels/cpu/OwnFft.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/OwnFftKernelTable.h"
#include "kernels/shared/FftLengths.h"

namespace tunescope::cpu {

// Twiddles of a complex FFT of length n, as (re, im) float pairs computed in double.
// `radices` is the Stockham stage order (4s, then one 2 when the power of two is odd,
// then 3s, then 5s); `stages` holds, for each stage of radix r on sub-length m (n, n/r,
// ...) and each p < m/r, W_m^p, ..., W_m^((r-1)p) (W_m = exp(-2 pi i / m)); `roots`
// holds W_n^k, k < n/2.
struct OwnFftTwiddles {
  int64_t n = 0;
  std::vector<int> radices;
  std::vector<float> stages, roots;
};

namespace {

using cfloat = std::complex<float>;

// The radices of n in stage order; empty when n has a prime factor other than 2, 3, 5.
std::vector<int> radices_of(int64_t n) {
  std::vector<int> radices;
  for (; n % 4 == 0; n /= 4) radices.push_back(4);
  if (n % 2 == 0) radices.push_back(2), n /= 2;
  for (; n % 3 == 0; n /= 3) radices.push_back(3);
  for (; n % 5 == 0; n /= 5) radices.push_back(5);
  if (n != 1) radices.clear();
  return radices;
}

const OwnFftTwiddles* twiddles_for(int64_t n) {
  // Built once per length and never freed, so plans hold plain pointers; the mutex makes
  // first use from several threads safe.
  static std::mutex mutex;
  static std::map<int64_t, std::unique_ptr<OwnFftTwiddles>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[n];
  if (!slot) {
    auto t = std::make_unique<OwnFftTwiddles>();
    t->n = n;
    t->radices = radices_of(n);
    const double two_pi = 2.0 * std::acos(-1.0);
    auto push = [](std::vector<float>& v, double angle) {
      v.push_back(static_cast<float>(std::cos(angle)));
      v.push_back(static_cast<float>(-std::sin(angle)));
    };
    int64_t m = n;
    for (int r : t->radices) {
      for (int64_t p = 0; p < m / r; ++p)
        for (int64_t k = 1; k < r; ++k) push(t->stages, two_pi * static_cast<double>(k * p) / m);
      m /= r;
    }
    for (int64_t k = 0; k < n / 2; ++k) push(t->roots, two_pi * static_cast<double>(k) / n);
    slot = std::move(t);
  }
  return slot.get();
}

OwnFftFactors factors_of(const OwnFftTwiddles& t) {
  return {t.n, t.radices.data(), static_cast<int64_t>(t.radices.size()), t.stages.data(),
          t.roots.data()};
}

// The calling thread's scratch, grown to fit a group of kOwnFftMaxLanes planes and one
// plane's spectrum.
OwnFftScratch scratch_for(int64_t rows, int64_t cols) {
  thread_local std::vector<float> spec, xr, xi, yr, yi, line, plane, stage;
  constexpr int W = kOwnFftMaxLanes;
  const int64_t half = cols / 2 + 1, length = std::max(rows, half) * W;
  const auto fit = [](std::vector<float>& v, int64_t n) {
    if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
    return v.data();
  };
  const int64_t sweep = own_fft_rows_per_sweep(cols) * std::max<int64_t>(cols, 2) * W;
  return {fit(spec, 2 * rows * half * W),
          fit(xr, length),
          fit(xi, length),
          fit(yr, length),
          fit(yi, length),
          fit(line, sweep),
          fit(plane, 2 * rows * half),
          fit(stage, 2 * rows * half * W)};
}

}  // namespace

bool OwnFft2d::supports(int64_t n) { return own_fft_supports_length(n); }

OwnFft2d::OwnFft2d(int64_t rows, int64_t cols, OwnFftIsa isa)
    : rows_(rows), cols_(cols), isa_(isa), kernels_(&own_fft_kernels(isa)) {
  if (!supports(rows) || !supports(cols))
    fail(ErrorKind::unsupported, "own fft: ", rows, "x", cols,
         " is not a size it transforms (1, or even with no prime factor but 2, 3 and 5, up to ",
         kMaxSize, ")");
  if (!cpu_supports(isa))
    fail(ErrorKind::unsupported, "own fft: this CPU cannot run the ", to_string(isa), " kernels");
  const auto make_plan = [](int64_t r, int64_t c) {
    auto plan = std::make_shared<OwnFftPlan>();
    plan->rows = r;
    plan->cols = c;
    plan->row = factors_of(*twiddles_for(std::max<int64_t>(c / 2, 1)));
    plan->col = factors_of(*twiddles_for(r));
    plan->real = factors_of(*twiddles_for(c));
    return plan;
  };
  auto plan = make_plan(rows, cols);
  if (rows > 1) {
    rows_plan_ = make_plan(1, cols);
    plan->rows_plan = rows_plan_.get();
  }
  plan_ = std::move(plan);
}

int64_t OwnFft2d::stream_min_bytes() {
  static const int64_t bytes = [] {
    int64_t cache = int64_t{32} << 20;
    std::ifstream size("/sys/devices/system/cpu/cpu0/cache/index3/size");
    int64_t kib = 0;
    // sysconf(_SC_LEVEL3_CACHE_SIZE) is not used: on the project's VM it reports 320 MiB,
    // ten times the 32 MiB the cache domain has.
    if (size >> kib && kib > 0 && size.peek() == 'K') cache = kib << 10;
    return cache / 3;
  }();
  return bytes;
}

OwnFftStore OwnFft2d::store_for(int64_t count) const {
  const int64_t bytes =
      count * (rows_ * cols_ * int64_t{sizeof(float)} + bins() * int64_t{sizeof(cfloat)});
  return bytes > stream_min_bytes() ? OwnFftStore::streamed : OwnFftStore::cached;
}

void OwnFft2d::forward(const float* real, OwnFftRealLayout real_layout, cfloat* spectrum,
                       int64_t complex_stride, int64_t count, OwnFftStore store) const {
  if (store == OwnFftStore::automatic) store = store_for(count);
  kernels_->forward(*plan_, scratch_for(rows_, cols_), real, real_layout, spectrum, complex_stride,
                    count, store == OwnFftStore::streamed);
}

void OwnFft2d::inverse(const cfloat* spectrum, int64_t complex_stride, float* real,
                       OwnFftRealLayout real_layout, int64_t count, OwnFftStore store) const {
  if (store == OwnFftStore::automatic) store = store_for(count);
  kernels_->inverse(*plan_, scratch_for(rows_, cols_), spectrum, complex_stride, real, real_layout,
                    count, store == OwnFftStore::streamed);
}

OwnFftSplit OwnFft2d::split_for(int threads, int64_t count) const {
  const int64_t groups = (count + kOwnFftMaxLanes - 1) / kOwnFftMaxLanes;
  return threads > 1 && groups < threads && rows_ * cols_ >= kSplitMinPoints ? OwnFftSplit::within
                                                                             : OwnFftSplit::batch;
}

namespace {

// Runs each group of a call split within the transforms: for every group (as
// own_fft_group_lanes cuts them, like the kernels' own loop), `group` or, for a single
// plane that the vector path takes alone, `plane`, each running its phases over their
// ranges in parallel blocks; parallel_for returning is the barrier between phases.
// Every thread works on one shared buffer — the group's spectra (`spec`) or the plane's
// inverse copy (`plane`) — with its own other buffers.
template <class Group, class Plane>
void for_each_group_within(ThreadPool& pool, const OwnFftKernelTable& kernels,
                           const OwnFftPlan& plan, int64_t count, Group group, Plane plane) {
  const int64_t rows = plan.rows, cols = plan.cols;
  // The calling thread's buffer, kept across calls: a fresh one per call cost more than
  // the split saved (page faults on first touch, measured at 128x128).
  thread_local std::vector<float> spec;
  const size_t spec_floats = static_cast<size_t>(2 * rows * (cols / 2 + 1) * kOwnFftMaxLanes);
  if (spec.size() < spec_floats) spec.resize(spec_floats);
  float* const shared = spec.data();
  for (int64_t first = 0; first < count;) {
    const int lanes = own_fft_group_lanes(kernels.group.width, count - first, plan);
    const bool alone = lanes == 1 && own_fft_plane_vectorises(kernels.group.width, plan);
    const auto in_parallel = [&](int64_t n, auto phase) {
      pool.parallel_for(n, [&](int64_t begin, int64_t end) {
        OwnFftScratch s = scratch_for(rows, cols);
        (alone ? s.plane : s.spec) = shared;
        phase(s, begin, end);
      });
    };
    if (alone)
      plane(first, in_parallel);
    else
      group(lanes > 1 ? kernels.group : kernels.single, first, lanes, in_parallel);
    first += lanes;
  }
}

}  // namespace

void OwnFft2d::forward(ThreadPool& pool, const float* real, OwnFftRealLayout real_layout,
                       cfloat* spectrum, int64_t complex_stride, int64_t count, OwnFftSplit split,
                       OwnFftStore store) const {
  if (split == OwnFftSplit::automatic) split = split_for(pool.size(), count);
  if (split == OwnFftSplit::batch) {
    // Chosen for the whole call: each thread's chunk alone may fit the cache.
    if (store == OwnFftStore::automatic) store = store_for(count);
    pool.parallel_for((count + 7) / 8, [&](int64_t begin, int64_t end) {
      const int64_t first = begin * 8, n = std::min(end * 8, count) - first;
      forward(real + first * real_layout.plane, real_layout, spectrum + first * complex_stride,
              complex_stride, n, store);
    });
    return;
  }
  const OwnFftPlan& plan = *plan_;
  const int64_t half = cols_ / 2 + 1;
  const int64_t W = kernels_->group.width, row_units = (rows_ + W - 1) / W,
                col_units = (half + W - 1) / W;
  const OwnFftPlanePhases& alone = kernels_->plane;
  const auto plane = [&](int64_t first, auto in_parallel) {
    const float* x = real + first * real_layout.plane;
    cfloat* out = spectrum + first * complex_stride;
    in_parallel(row_units, [&](const OwnFftScratch& s, int64_t u0, int64_t u1) {
      alone.forward_rows(plan, s, x, real_layout, out, u0, u1);
    });
    in_parallel(col_units, [&](const OwnFftScratch& s, int64_t u0, int64_t u1) {
      alone.forward_columns(plan, s, out, u0, u1);
    });
  };
  for_each_group_within(
      pool, *kernels_, plan, count,
      [&](const OwnFftGroupPhases& g, int64_t first, int lanes, auto in_parallel) {
        const float* x = real + first * real_layout.plane;
        cfloat* out = spectrum + first * complex_stride;
        in_parallel(rows_, [&](const OwnFftScratch& s, int64_t r0, int64_t r1) {
          g.forward_rows(plan, s, x, real_layout, lanes, r0, r1);
        });
        in_parallel(half, [&](const OwnFftScratch& s, int64_t k0, int64_t k1) {
          g.forward_columns(plan, s, k0, k1);
        });
        in_parallel(rows_, [&](const OwnFftScratch& s, int64_t r0, int64_t r1) {
          g.store_rows(plan, s, out, complex_stride, lanes, r0, r1);
        });
      },
      plane);
}

void OwnFft2d::inverse(ThreadPool& pool, const cfloat* spectrum, int64_t complex_stride,
                       float* real, OwnFftRealLayout real_layout, int64_t count, OwnFftSplit split,
                       OwnFftStore store) const {
  if (split == OwnFftSplit::automatic) split = split_for(pool.size(), count);
  if (split == OwnFftSplit::batch) {
    // Chosen for the whole call: each thread's chunk alone may fit the cache.
    if (store == OwnFftStore::automatic) store = store_for(count);
    pool.parallel_for((count + 7) / 8, [&](int64_t begin, int64_t end) {
      const int64_t first = begin * 8, n = std::min(end * 8, count) - first;
      inverse(spectrum + first * complex_stride, complex_stride, real + first * real_layout.plane,
              real_layout, n, store);
    });
    return;
  }
  const OwnFftPlan& plan = *plan_;
  const int64_t half = cols_ / 2 + 1;
  const int64_t W = kernels_->group.width, row_units = (rows_ + W - 1) / W,
                col_units = (half + W - 1) / W;
  const OwnFftPlanePhases& alone = kernels_->plane;
  const auto plane = [&](int64_t first, auto in_parallel) {
    const cfloat* in = spectrum + first * complex_stride;
    float* x = real + first * real_layout.plane;
    in_parallel(row_units, [&](const OwnFftScratch& s, int64_t u0, int64_t u1) {
      alone.load(plan, s, in, u0, u1);
    });
    in_parallel(col_units, [&](const OwnFftScratch& s, int64_t u0, int64_t u1) {
      alone.inverse_columns(plan, s, u0, u1);
    });
    in_parallel(row_units, [&](const OwnFftScratch& s, int64_t u0, int64_t u1) {
      alone.inverse_rows(plan, s, x, real_layout, u0, u1);
    });
  };
  for_each_group_within(
      pool, *kernels_, plan, count,
      [&](const OwnFftGroupPhases& g, int64_t first, int lanes, auto in_parallel) {
        const cfloat* in = spectrum + first * complex_stride;
        float* x = real + first * real_layout.plane;
        in_parallel(rows_, [&](const OwnFftScratch& s, int64_t r0, int64_t r1) {
          g.load_rows(plan, s, in, complex_stride, lanes, r0, r1);
        });
        in_parallel(half, [&](const OwnFftScratch& s, int64_t k0, int64_t k1) {
          g.inverse_columns(plan, s, k0, k1);
        });
        in_parallel(rows_, [&](const OwnFftScratch& s, int64_t r0, int64_t r1) {
          g.inverse_rows(plan, s, x, real_layout, lanes, r0, r1);
        });
      },
      plane);
}

}  // namespace tunescope::cpu
