// The arithmetic of the CUDA `fft-own` transform, written once for the device and the
// host: butterflies (radix 2, 3, 4, 5), the twiddle and index math of one Stockham stage,
// and the schedule of phases one thread block runs over its group of planes (load,
// row stages, split, column stages, store). The kernel (OwnFftCudaKernel.cu) runs each
// phase with its threads striding over the phase's items and a barrier between phases;
// emulate_block() runs the very same phases item by item on the host, so the tests check
// the device's schedule against FFTW and a naive DFT without a GPU.
//
// A 2-D r2c of rows x cols reals: pairs of real rows are packed as one complex row
// (row 2j + i row 2j+1), transformed with length-cols complex FFTs and split into the two
// half spectra; then the cols/2 + 1 columns get length-rows complex FFTs. c2r runs the
// same steps backwards. Stockham stages auto-sort (no bit reversal) by ping-ponging
// between two shared-memory buffers. Spectra leave and enter frequency-major: bin f
// (row-major over rows x (cols/2 + 1)) of plane p at spectrum[f * total_planes + p].
//
// Compiled as C++17 by nvcc and as C++20 by the host compiler: keep it to plain C++.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#ifdef __CUDACC__
#define TS_FFT_HD __host__ __device__ __forceinline__
#else
#define TS_FFT_HD inline
#endif

namespace tunescope::cuda::fft {

struct Cf {
  float re, im;
};

TS_FFT_HD Cf operator+(Cf a, Cf b) { return {a.re + b.re, a.im + b.im}; }
TS_FFT_HD Cf operator-(Cf a, Cf b) { return {a.re - b.re, a.im - b.im}; }
TS_FFT_HD Cf operator*(Cf a, Cf b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
TS_FFT_HD Cf scale(Cf a, float s) { return {a.re * s, a.im * s}; }
TS_FFT_HD Cf conj(Cf a) { return {a.re, -a.im}; }
// a * (dir * i), dir = -1 (forward transform) or +1 (inverse).
TS_FFT_HD Cf times_i(Cf a, int dir) { return dir > 0 ? Cf{-a.im, a.re} : Cf{a.im, -a.re}; }

// The largest transform length per side: two buffers of one 128 x 65-bin plane fill
// 133 KB of shared memory, within what a Hopper block may opt in to (227 KB).
constexpr int kMaxLength = 128;
// At most log2(128) = 7 stages per dimension, plus load, split and store.
constexpr int kMaxStages = 8;
constexpr int kMaxPhases = 2 * kMaxStages + 3;

// Radices of n, largest first (4s, at most one 2, then 3s and 5s); how many, or -1 when
// n has another prime factor or needs more than kMaxStages stages. n = 1 has none.
inline int factor_radices(int n, int* radices) {
  if (n < 1) return -1;
  int count = 0;
  auto take = [&](int r, bool repeat) {
    while (n % r == 0 && count < kMaxStages) {
      radices[count++] = r;
      n /= r;
      if (!repeat) break;
    }
  };
  take(4, true);
  take(2, false);  // the 4s left at most one factor 2
  take(3, true);
  take(5, true);
  return n == 1 ? count : -1;
}

// The DFT of u[0..R) in place, dir = -1 forward, +1 inverse (unnormalised).
TS_FFT_HD void dft2(Cf* u) {
  const Cf a = u[0], b = u[1];
  u[0] = a + b;
  u[1] = a - b;
}

TS_FFT_HD void dft3(Cf* u, int dir) {
  const float half_sqrt3 = 0.86602540378443864676f;
  const Cf t = u[1] + u[2], d = times_i(u[1] - u[2], dir);
  const Cf m = u[0] - scale(t, 0.5f);
  u[0] = u[0] + t;
  u[1] = m + scale(d, half_sqrt3);
  u[2] = m - scale(d, half_sqrt3);
}

TS_FFT_HD void dft4(Cf* u, int dir) {
  const Cf s02 = u[0] + u[2], d02 = u[0] - u[2];
  const Cf s13 = u[1] + u[3], d13 = times_i(u[1] - u[3], dir);
  u[0] = s02 + s13;
  u[2] = s02 - s13;
  u[1] = d02 + d13;
  u[3] = d02 - d13;
}

TS_FFT_HD void dft5(Cf* u, int dir) {
  const float c1 = 0.30901699437494742410f;   // cos(2 pi / 5)
  const float c2 = -0.80901699437494742410f;  // cos(4 pi / 5)
  const float s1 = 0.95105651629515357212f;   // sin(2 pi / 5)
  const float s2 = 0.58778525229247312917f;   // sin(4 pi / 5)
  const Cf t1 = u[1] + u[4], t2 = u[2] + u[3];
  const Cf d1 = times_i(u[1] - u[4], dir), d2 = times_i(u[2] - u[3], dir);
  const Cf m1 = u[0] + scale(t1, c1) + scale(t2, c2);
  const Cf m2 = u[0] + scale(t1, c2) + scale(t2, c1);
  const Cf e1 = scale(d1, s1) + scale(d2, s2);
  const Cf e2 = scale(d1, s2) - scale(d2, s1);
  u[0] = u[0] + t1 + t2;
  u[1] = m1 + e1;
  u[4] = m1 - e1;
  u[2] = m2 + e2;
  u[3] = m2 - e2;
}

// Butterfly i in [0, n / R) of one Stockham stage of a length-n sequence whose
// sub-transforms of length p are done: it reads in[i + r n/R], applies the twiddles
// W_n^(r k n/(pR)) with k = i mod p, takes the length-R DFT and writes
// out[(i / p) p R + k + r p]. `twiddles` holds W_n^t = exp(-2 pi i t / n), t in [0, n);
// the inverse uses their conjugates. R is a template argument so the loops unroll and
// u stays in registers.
template <int R>
TS_FFT_HD void stockham_butterfly_radix(const Cf* in, Cf* out, int n, int p, int i,
                                        const Cf* twiddles, int dir) {
  Cf u[R];
  const int span = n / R, k = i % p, step = k * (n / (p * R));
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int r = 0; r < R; ++r) {
    Cf v = in[i + r * span];
    if (r > 0 && step > 0) {
      const Cf w = twiddles[r * step];
      v = v * (dir < 0 ? w : conj(w));
    }
    u[r] = v;
  }
  if constexpr (R == 2) dft2(u);
  if constexpr (R == 3) dft3(u, dir);
  if constexpr (R == 4) dft4(u, dir);
  if constexpr (R == 5) dft5(u, dir);
  const int j = (i / p) * p * R + k;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int r = 0; r < R; ++r) out[j + r * p] = u[r];
}

TS_FFT_HD void stockham_butterfly(const Cf* in, Cf* out, int n, int p, int radix, int i,
                                  const Cf* twiddles, int dir) {
  switch (radix) {
    case 2: stockham_butterfly_radix<2>(in, out, n, p, i, twiddles, dir); return;
    case 3: stockham_butterfly_radix<3>(in, out, n, p, i, twiddles, dir); return;
    case 4: stockham_butterfly_radix<4>(in, out, n, p, i, twiddles, dir); return;
    default: stockham_butterfly_radix<5>(in, out, n, p, i, twiddles, dir); return;
  }
}

// One plane's shape and its sizes in shared memory, in complex elements: the row phase
// holds `pairs` packed rows of cols elements, the column phase hc columns of rows.
struct Fft2dGeometry {
  int rows = 1, cols = 1;
  int hc = 1;     // cols / 2 + 1 bins per row
  int pairs = 1;  // (rows + 1) / 2 packed rows

  TS_FFT_HD Fft2dGeometry() = default;
  TS_FFT_HD Fft2dGeometry(int r, int c) : rows(r), cols(c), hc(c / 2 + 1), pairs((r + 1) / 2) {}
  TS_FFT_HD int bins() const { return rows * hc; }
  TS_FFT_HD int plane_elems() const { return pairs * cols > hc * rows ? pairs * cols : hc * rows; }
  // Elements from one plane's buffer to the next: odd, so the threads of a warp that read
  // the same element of consecutive planes (store_spectrum, load_spectrum) hit distinct
  // shared-memory banks.
  TS_FFT_HD int plane_stride() const { return plane_elems() | 1; }
};

enum class PhaseKind : int {
  load_rows,       // real planes -> packed complex rows
  row_stage,       // one Stockham stage over every packed row
  split_rows,      // packed rows' spectra -> two half spectra, stored by column
  column_stage,    // one Stockham stage over every column
  store_spectrum,  // columns -> frequency-major global spectrum
  load_spectrum,   // frequency-major global spectrum -> columns
  join_rows,       // columns -> packed rows (row 2j + i row 2j+1, full Hermitian length)
  store_rows,      // packed rows -> real planes
};

struct Phase {
  PhaseKind kind = PhaseKind::load_rows;
  int radix = 0, p = 1;  // stages only
  int src = 0, dst = 0;  // shared-memory buffer 0 or 1
};

struct FftSchedule {
  Fft2dGeometry geometry;
  int dir = -1;  // -1: r2c, +1: c2r
  int count = 0;
  Phase phases[kMaxPhases];
};

// The phases of an r2c (dir = -1) or c2r (dir = +1) of `geometry`; count 0 when a side
// is not a length factor_radices() accepts.
inline FftSchedule build_schedule(const Fft2dGeometry& g, int dir) {
  FftSchedule s;
  s.geometry = g;
  s.dir = dir;
  int row_radices[kMaxStages], col_radices[kMaxStages];
  const int row_stages = factor_radices(g.cols, row_radices);
  const int col_stages = factor_radices(g.rows, col_radices);
  if (row_stages < 0 || col_stages < 0 || g.cols > kMaxLength || g.rows > kMaxLength) return s;
  int cur = 0;
  auto add = [&](PhaseKind kind, int radix, int p, bool swaps) {
    Phase& ph = s.phases[s.count++];
    ph.kind = kind, ph.radix = radix, ph.p = p, ph.src = cur, ph.dst = swaps ? 1 - cur : cur;
    cur = ph.dst;
  };
  auto add_stages = [&](PhaseKind kind, const int* radices, int stages) {
    int p = 1;
    for (int t = 0; t < stages; ++t) {
      add(kind, radices[t], p, true);
      p *= radices[t];
    }
  };
  if (dir < 0) {
    add(PhaseKind::load_rows, 0, 1, false);
    add_stages(PhaseKind::row_stage, row_radices, row_stages);
    add(PhaseKind::split_rows, 0, 1, true);
    add_stages(PhaseKind::column_stage, col_radices, col_stages);
    add(PhaseKind::store_spectrum, 0, 1, false);
  } else {
    add(PhaseKind::load_spectrum, 0, 1, false);
    add_stages(PhaseKind::column_stage, col_radices, col_stages);
    add(PhaseKind::join_rows, 0, 1, true);
    add_stages(PhaseKind::row_stage, row_radices, row_stages);
    add(PhaseKind::store_rows, 0, 1, false);
  }
  return s;
}

// What one block works on: `planes` planes starting at global plane `first_plane`, in two
// shared buffers of planes x plane_stride() elements each.
struct FftBlock {
  const Cf* row_twiddles;  // cols entries
  const Cf* col_twiddles;  // rows entries
  int planes;
  int64_t first_plane;
  int64_t total_planes;  // the spectrum's element stride
  const float* real_in;  // r2c input, plane p at real_in + p * rows * cols
  float* real_out;       // c2r output, same layout
  const Cf* spectrum_in;
  Cf* spectrum_out;
  Cf* buffers[2];
};

// Items are counted in int: a block holds at most kMaxPlanesPerBlock planes of at most
// 128 x 65 elements, and 32-bit division is what the device does fast.
TS_FFT_HD int phase_items(const FftSchedule& s, const Phase& ph, const FftBlock& b) {
  const Fft2dGeometry& g = s.geometry;
  switch (ph.kind) {
    case PhaseKind::load_rows:
    case PhaseKind::join_rows:
    case PhaseKind::store_rows: return b.planes * g.pairs * g.cols;
    case PhaseKind::row_stage: return b.planes * g.pairs * (g.cols / ph.radix);
    case PhaseKind::split_rows: return b.planes * g.pairs * g.hc;
    case PhaseKind::column_stage: return b.planes * g.hc * (g.rows / ph.radix);
    case PhaseKind::store_spectrum:
    case PhaseKind::load_spectrum: return b.planes * g.bins();
  }
  return 0;
}

// Item `item` of phase `ph`. Items of a phase are independent: each writes its own
// elements and reads only what earlier phases wrote. The fastest-varying part of the
// item index walks contiguous global memory (a row, or the planes of one bin).
TS_FFT_HD void run_phase_item(const FftSchedule& s, const Phase& ph, const FftBlock& b, int item) {
  const Fft2dGeometry& g = s.geometry;
  const int pe = g.plane_stride();
  // Selected, not indexed, so the block description stays in registers.
  const Cf* src = ph.src ? b.buffers[1] : b.buffers[0];
  Cf* dst = ph.dst ? b.buffers[1] : b.buffers[0];
  const Cf zero = {0.0f, 0.0f};
  switch (ph.kind) {
    case PhaseKind::load_rows: {
      const int q = item % g.cols, j = item / g.cols % g.pairs;
      const int plane = item / (g.cols * g.pairs);
      const float* real = b.real_in + (b.first_plane + plane) * g.rows * g.cols;
      const float odd = 2 * j + 1 < g.rows ? real[(2 * j + 1) * g.cols + q] : 0.0f;
      dst[plane * pe + j * g.cols + q] = Cf{real[2 * j * g.cols + q], odd};
      return;
    }
    case PhaseKind::row_stage:
    case PhaseKind::column_stage: {
      const bool rows = ph.kind == PhaseKind::row_stage;
      const int n = rows ? g.cols : g.rows, sequences = rows ? g.pairs : g.hc;
      const int per_seq = n / ph.radix;
      const int i = item % per_seq;
      const int seq = item / per_seq;  // plane * sequences + sequence
      const int base = seq / sequences * pe + seq % sequences * n;
      stockham_butterfly(src + base, dst + base, n, ph.p, ph.radix, i,
                         rows ? b.row_twiddles : b.col_twiddles, s.dir);
      return;
    }
    case PhaseKind::split_rows: {
      // Z = FFT(a + i b) of real rows a, b: A[k] = (Z[k] + conj Z[-k]) / 2,
      // B[k] = (Z[k] - conj Z[-k]) / 2i.
      const int k = item % g.hc, j = item / g.hc % g.pairs;
      const int plane = item / (g.hc * g.pairs);
      const Cf* z = src + plane * pe + j * g.cols;
      const Cf zk = z[k % g.cols], zm = conj(z[(g.cols - k) % g.cols]);
      Cf* column = dst + plane * pe + k * g.rows;
      column[2 * j] = scale(zk + zm, 0.5f);
      if (2 * j + 1 < g.rows) column[2 * j + 1] = times_i(scale(zk - zm, 0.5f), -1);
      return;
    }
    case PhaseKind::store_spectrum:
    case PhaseKind::load_spectrum: {
      const int plane = item % b.planes;
      const int f = item / b.planes, r = f / g.hc, c = f % g.hc;
      const int64_t global = int64_t{f} * b.total_planes + b.first_plane + plane;
      if (ph.kind == PhaseKind::store_spectrum)
        b.spectrum_out[global] = src[plane * pe + c * g.rows + r];
      else
        dst[plane * pe + c * g.rows + r] = b.spectrum_in[global];
      return;
    }
    case PhaseKind::join_rows: {
      // The inverse of split_rows over the full row: bins past cols / 2 are the
      // conjugates of their mirror (Hermitian rows). Like FFTW's c2r, the imaginary
      // parts of the DC and Nyquist bins are ignored.
      const int q = item % g.cols, j = item / g.cols % g.pairs;
      const int plane = item / (g.cols * g.pairs);
      const bool mirrored = q >= g.hc;
      const Cf* column = src + plane * pe + (mirrored ? g.cols - q : q) * g.rows;
      Cf a = column[2 * j];
      Cf bb = 2 * j + 1 < g.rows ? column[2 * j + 1] : zero;
      if (mirrored) a = conj(a), bb = conj(bb);
      if (q == 0 || 2 * q == g.cols) a.im = 0.0f, bb.im = 0.0f;
      dst[plane * pe + j * g.cols + q] = a + times_i(bb, 1);
      return;
    }
    case PhaseKind::store_rows: {
      const int q = item % g.cols, j = item / g.cols % g.pairs;
      const int plane = item / (g.cols * g.pairs);
      float* real = b.real_out + (b.first_plane + plane) * g.rows * g.cols;
      const Cf z = src[plane * pe + j * g.cols + q];
      real[2 * j * g.cols + q] = z.re;
      if (2 * j + 1 < g.rows) real[(2 * j + 1) * g.cols + q] = z.im;
      return;
    }
  }
}

// W_n^t = exp(-2 pi i t / n) for t in [0, n), computed in double.
inline std::vector<Cf> make_twiddles(int n) {
  std::vector<Cf> w(static_cast<size_t>(n));
  const double two_pi = 6.283185307179586476925;
  for (int t = 0; t < n; ++t) {
    const double angle = -two_pi * t / n;
    w[static_cast<size_t>(t)] =
        Cf{static_cast<float>(std::cos(angle)), static_cast<float>(std::sin(angle))};
  }
  return w;
}

// Planes one block transforms together: as many as fit `shared_bytes_target` (so
// several blocks share a multiprocessor), at least one, at most kMaxPlanesPerBlock.
constexpr int kMaxPlanesPerBlock = 64;
inline int planes_per_block(const Fft2dGeometry& g, int64_t shared_bytes_target) {
  const int64_t per_plane = 2 * int64_t{g.plane_stride()} * static_cast<int64_t>(sizeof(Cf));
  const int64_t fit = shared_bytes_target / per_plane;
  return static_cast<int>(fit < 1 ? 1 : fit > kMaxPlanesPerBlock ? kMaxPlanesPerBlock : fit);
}
inline int64_t block_shared_bytes(const Fft2dGeometry& g, int planes) {
  return 2 * int64_t{planes} * g.plane_stride() * static_cast<int64_t>(sizeof(Cf));
}

// The host emulation of one block: every phase's items in order, each phase finished
// before the next starts (the kernel's barrier). `block` must point at host memory.
inline void emulate_block(const FftSchedule& s, const FftBlock& block) {
  for (int t = 0; t < s.count; ++t) {
    const Phase& ph = s.phases[t];
    const int items = phase_items(s, ph, block);
    for (int item = 0; item < items; ++item) run_phase_item(s, ph, block, item);
  }
}

// The host emulation of a whole launch: `count` planes in blocks of `planes_per_block`,
// as launch_own_fft (OwnFftCudaKernel.h) runs them; pointers to host memory, as in FftBlock
// (the unused direction's may be null). Returns false when the geometry has no schedule.
inline bool emulate_transform(const Fft2dGeometry& g, int dir, int64_t count, int planes_per_block,
                              const float* real_in, float* real_out, const Cf* spectrum_in,
                              Cf* spectrum_out) {
  const FftSchedule s = build_schedule(g, dir);
  if (s.count == 0) return false;
  const std::vector<Cf> row_twiddles = make_twiddles(g.cols), col_twiddles = make_twiddles(g.rows);
  const size_t buffer_elems = static_cast<size_t>(planes_per_block) * g.plane_stride();
  std::vector<Cf> buffers(2 * buffer_elems, Cf{NAN, NAN});
  for (int64_t first = 0; first < count; first += planes_per_block) {
    const int planes =
        static_cast<int>(count - first < planes_per_block ? count - first : planes_per_block);
    const FftBlock block{row_twiddles.data(),
                         col_twiddles.data(),
                         planes,
                         first,
                         count,
                         real_in,
                         real_out,
                         spectrum_in,
                         spectrum_out,
                         {buffers.data(), buffers.data() + buffer_elems}};
    emulate_block(s, block);
  }
  return true;
}

}  // namespace tunescope::cuda::fft
