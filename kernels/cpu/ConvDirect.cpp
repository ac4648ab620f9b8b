// The "direct" convolution algorithm: register-tiled correlation loops, one engine per
// layout, used by all three passes.
//
// Every pass first copies one image into zero-padded per-slot scratch, so the inner
// loops never test bounds:
//  - forward runs the correlation engine on the padded input;
//  - backward data splits dx into stride phases (rows h with equal (h + pad) mod
//    stride): each phase is a stride-1 correlation of padded dy with a flipped,
//    channel-transposed sub-filter, written straight into dx, so no work is spent on
//    the zeros a dilated dy would hold nor on padding that would be cropped;
//  - backward filter accumulates per-slot partial filters and sums them at the end.
// Two correlation engines, chosen by the number of output channels rather than by the
// tensors' layout (images are converted while they are padded): one vectorises over
// output columns (tiles of 8 or 16) with a block of 4 output channels, for at most 8
// output channels; the other over 8 or 16 output channels with a block of 4 output
// pixels, reading a filter reorganised to [r][s][c][k] so vector loads are contiguous.
// Backward filter likewise vectorises over columns, input channels or output channels.
//
// Parallelism is over slots: contiguous shares of the batch, one per hardware thread
// (parallel_slots), so a batch of 1 runs on one thread. Workspace is per slot and does
// not depend on the pool.
#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "core/base/ConvAlgorithm.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/ConvGrouped.h"
#include "kernels/cpu/Vec8.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/WorkspaceLayout.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {
namespace {

constexpr int kNchwChannels = 4;       // output channels per NCHW tile
constexpr int64_t kNchwWideTile = 16;  // output columns per NCHW tile (8 when Q is small)
constexpr int64_t kNhwcPixels = 4;     // output pixels per NHWC tile
constexpr int64_t kFilterVec = 8;      // input channels per NHWC backward-filter Vec8
constexpr int kFilterOutBlock = 8;     // output channels per NHWC backward-filter tile

// One correlation on a zero-padded input, the engine of forward and backward data:
//   out[k][p][q] = sum over c, r, s of filter[k][c][r][s] * in[c][p*u + r][q*v + s]
// The input must hold every row and column a full tile reads; stores are clipped.
struct Correlation {
  int64_t C, K, R, S, P, Q, u, v;
  const float* in;
  int64_t in_rows, in_cols;  // NCHW: [C][in_rows][in_cols]; NHWC: [in_rows][in_cols][C]
  // NCHW: [K][C][R][S]; NHWC: [R][S][C][round_up(K, nhwc_channel_block(K))], zeros beyond K.
  const float* filter;
  float* out;
  int64_t out_channel, out_row, out_col;  // element strides of out
};

int64_t nchw_tile_width(int64_t Q) { return Q >= 12 ? kNchwWideTile : 8; }

// NHWC output channels per tile: one Vec8 when there are few (LeNet's 6), else two.
int64_t nhwc_channel_block(int64_t channels) { return channels <= 8 ? 8 : 16; }

// Stores `count` (<= 8 * NV) floats of a vector tile to out[i * step].
template <int NV>
void store_tile(const Vec8 (&tile)[NV], float* out, int64_t step, int64_t count) {
  if (step == 1 && count == 8 * NV) {
    for (int n = 0; n < NV; ++n) store8(out + 8 * n, tile[n]);
    return;
  }
  float values[8 * NV];
  for (int n = 0; n < NV; ++n) store8(values + 8 * n, tile[n]);
  for (int64_t i = 0; i < count; ++i) out[i * step] = values[i];
}

// KB output channels x QT output columns, accumulated in registers.
template <int KB, int64_t QT, int V>
void nchw_tile(const Correlation& a, int64_t k0, int64_t p, int64_t q0) {
  constexpr int NV = static_cast<int>(QT / 8);
  const int64_t v = V > 0 ? V : a.v;  // a constant step makes the column loads vector loads
  const int64_t crs = a.C * a.R * a.S;
  Vec8 acc[KB][NV] = {};
  for (int64_t c = 0; c < a.C; ++c)
    for (int64_t r = 0; r < a.R; ++r) {
      const float* row = a.in + (c * a.in_rows + p * a.u + r) * a.in_cols + q0 * v;
      const float* f = a.filter + k0 * crs + (c * a.R + r) * a.S;
      for (int64_t s = 0; s < a.S; ++s) {
        Vec8 xv[NV];
        for (int n = 0; n < NV; ++n) xv[n] = load8_strided<V>(row + s + 8 * n * v, v);
        for (int kb = 0; kb < KB; ++kb) {
          const Vec8 wv = splat8(f[kb * crs + s]);
          for (int n = 0; n < NV; ++n) acc[kb][n] += wv * xv[n];
        }
      }
    }
  const int64_t count = std::min(QT, a.Q - q0);
  for (int kb = 0; kb < KB; ++kb)
    store_tile(acc[kb], a.out + (k0 + kb) * a.out_channel + p * a.out_row + q0 * a.out_col,
               a.out_col, count);
}

template <int64_t QT, int V>
void nchw_correlate(const Correlation& a) {
  for (int64_t k0 = 0; k0 < a.K; k0 += kNchwChannels) {
    const int64_t kb = std::min<int64_t>(kNchwChannels, a.K - k0);
    for (int64_t p = 0; p < a.P; ++p)
      for (int64_t q0 = 0; q0 < a.Q; q0 += QT) switch (kb) {
          case 4: nchw_tile<4, QT, V>(a, k0, p, q0); break;
          case 3: nchw_tile<3, QT, V>(a, k0, p, q0); break;
          case 2: nchw_tile<2, QT, V>(a, k0, p, q0); break;
          default: nchw_tile<1, QT, V>(a, k0, p, q0); break;
        }
  }
}

template <int64_t QT>
void nchw_correlate_step(const Correlation& a) {
  if (a.v == 1) return nchw_correlate<QT, 1>(a);
  if (a.v == 2) return nchw_correlate<QT, 2>(a);
  nchw_correlate<QT, 0>(a);
}

template <int V, int NV>
void nhwc_tile(const Correlation& a, int64_t k0, int64_t p, int64_t q0) {
  const int64_t v = V > 0 ? V : a.v;
  const int64_t kp = round_up(a.K, 8 * NV);
  Vec8 acc[kNhwcPixels][NV] = {};
  for (int64_t r = 0; r < a.R; ++r)
    for (int64_t s = 0; s < a.S; ++s) {
      const float* px = a.in + ((p * a.u + r) * a.in_cols + q0 * v + s) * a.C;
      const float* f = a.filter + (r * a.S + s) * a.C * kp + k0;
      for (int64_t c = 0; c < a.C; ++c) {
        Vec8 fv[NV];
        for (int n = 0; n < NV; ++n) fv[n] = load8(f + c * kp + 8 * n);
        for (int64_t j = 0; j < kNhwcPixels; ++j) {
          const Vec8 xv = splat8(px[j * v * a.C + c]);
          for (int n = 0; n < NV; ++n) acc[j][n] += xv * fv[n];
        }
      }
    }
  const int64_t pixels = std::min(kNhwcPixels, a.Q - q0);
  const int64_t channels = std::min<int64_t>(8 * NV, a.K - k0);
  for (int64_t j = 0; j < pixels; ++j)
    store_tile(acc[j], a.out + p * a.out_row + (q0 + j) * a.out_col + k0 * a.out_channel,
               a.out_channel, channels);
}

template <int V, int NV>
void nhwc_correlate(const Correlation& a) {
  for (int64_t p = 0; p < a.P; ++p)
    for (int64_t q0 = 0; q0 < a.Q; q0 += kNhwcPixels)
      for (int64_t k0 = 0; k0 < a.K; k0 += 8 * NV) nhwc_tile<V, NV>(a, k0, p, q0);
}

template <int NV>
void nhwc_correlate_step(const Correlation& a) {
  if (a.v == 1) return nhwc_correlate<1, NV>(a);
  if (a.v == 2) return nhwc_correlate<2, NV>(a);
  nhwc_correlate<0, NV>(a);
}

void correlate(Layout layout, const Correlation& a) {
  if (layout == Layout::NCHW) {
    if (nchw_tile_width(a.Q) == kNchwWideTile) return nchw_correlate_step<kNchwWideTile>(a);
    return nchw_correlate_step<8>(a);
  }
  if (nhwc_channel_block(a.K) == 8) return nhwc_correlate_step<1>(a);
  nhwc_correlate_step<2>(a);
}

// Output columns (NCHW) or pixels (NHWC) a correlation tile row covers: Q rounded up.
int64_t tiled_width(Layout layout, int64_t Q) {
  return round_up(Q, layout == Layout::NCHW ? nchw_tile_width(Q) : kNhwcPixels);
}

// Copies one image (channels x h x w, contiguous in layout `from`) into a zeroed padded
// buffer of rows x cols at (top, left), laid out as `to`: channel planes (NCHW) or
// pixels of `pitch` channel slots (NHWC). Converting here lets either correlation engine
// serve tensors of either layout.
void pack_padded(Layout from, const float* image, int64_t channels, int64_t h, int64_t w, Layout to,
                 float* buf, int64_t rows, int64_t cols, int64_t top, int64_t left, int64_t pitch) {
  std::fill_n(buf, (to == Layout::NCHW ? channels : pitch) * rows * cols, 0.0f);
  for (int64_t y = 0; y < h; ++y) {
    if (from == Layout::NCHW && to == Layout::NCHW) {
      for (int64_t c = 0; c < channels; ++c)
        std::copy_n(image + (c * h + y) * w, w, buf + (c * rows + top + y) * cols + left);
    } else if (from == Layout::NHWC && to == Layout::NHWC) {
      for (int64_t x = 0; x < w; ++x)
        std::copy_n(image + (y * w + x) * channels, channels,
                    buf + ((top + y) * cols + left + x) * pitch);
    } else if (from == Layout::NCHW) {  // planes -> pixels
      float* row = buf + ((top + y) * cols + left) * pitch;
      for (int64_t c = 0; c < channels; ++c) {
        const float* src = image + (c * h + y) * w;
        for (int64_t x = 0; x < w; ++x) row[x * pitch + c] = src[x];
      }
    } else {  // pixels -> planes
      const float* src = image + y * w * channels;
      for (int64_t c = 0; c < channels; ++c) {
        float* row = buf + (c * rows + top + y) * cols + left;
        for (int64_t x = 0; x < w; ++x) row[x] = src[x * channels + c];
      }
    }
  }
}

// The correlation engine for `outs` output channels and rows of `cols` output columns:
// vectors over output columns (the NCHW engine) for at most 8 channels, where channel
// vectors would be mostly empty (LeNet's 6, backward data into 1 or 3 input channels),
// and for NCHW tensors with rows of whole 16-column tiles, which it stores without
// scattering; vectors over output channels (the NHWC engine) otherwise, which stays
// efficient on 4x4 and 8x8 maps. The tensors' layout otherwise only decides how images
// are packed in and results stored.
Layout engine_for(int64_t outs, int64_t cols, Layout tensors) {
  if (outs <= 8 || (tensors == Layout::NCHW && cols >= kNchwWideTile)) return Layout::NCHW;
  return Layout::NHWC;
}

// How backward filter vectorises: over output columns for few input and output
// channels (LeNet's first layer), else over input channels, or over output channels
// when there are fewer than 8 input channels (the stem).
enum class FilterEngine { over_columns, over_input_channels, over_output_channels };

FilterEngine filter_engine_for(const ConvProblem& p) {
  if (p.input.c >= kFilterVec) return FilterEngine::over_input_channels;
  return p.out_channels <= 8 ? FilterEngine::over_columns : FilterEngine::over_output_channels;
}

// Writes filter taps in the order the correlation engine reads them. Tap (b, d) of the
// result is w[.., .., r0 + dr * b, s0 + ds * d]; `transpose` swaps the roles of k and c
// (backward data correlates dy's K channels into dx's C channels).
void arrange_filter(const Tensor& w, Layout layout, bool transpose, int64_t taps_h, int64_t taps_w,
                    int64_t r0, int64_t dr, int64_t s0, int64_t ds, float* out) {
  const int64_t outs = transpose ? w.shape().c : w.shape().n;
  const int64_t ins = transpose ? w.shape().n : w.shape().c;
  const int64_t outs_padded = round_up(outs, nhwc_channel_block(outs));
  if (layout == Layout::NHWC) std::fill_n(out, taps_h * taps_w * ins * outs_padded, 0.0f);
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t i = 0; i < ins; ++i)
      for (int64_t b = 0; b < taps_h; ++b)
        for (int64_t d = 0; d < taps_w; ++d) {
          const float value = transpose ? w.at(i, o, r0 + dr * b, s0 + ds * d)
                                        : w.at(o, i, r0 + dr * b, s0 + ds * d);
          if (layout == Layout::NCHW)
            out[((o * ins + i) * taps_h + b) * taps_w + d] = value;
          else
            out[((b * taps_w + d) * ins + i) * outs_padded + o] = value;
        }
}

// Element strides (channel, row, column) of one image of `layout`.
struct ImageStrides {
  int64_t channel, row, col;
};
ImageStrides image_strides(Layout layout, int64_t channels, int64_t rows, int64_t cols) {
  if (layout == Layout::NCHW) return {rows * cols, cols, 1};
  return {1, cols * channels, channels};
}

// One stride phase of backward data: the dx rows h with (h + pad_h) mod u == ph_h, and
// the columns likewise. In the padded frame these are rows ph_h + u * a; only those
// inside dx (a in [first_h, first_h + rows)) are computed, so nothing is cropped.
struct Phase {
  int64_t ph_h, ph_w;
  int64_t taps_h, taps_w;    // filter taps with r = ph_h (mod u), s = ph_w (mod v)
  int64_t first_h, first_w;  // first a (row) and column index inside dx
  int64_t rows, cols;        // how many
  int64_t dx_row, dx_col;    // where the first lands in dx
  size_t filter_offset = 0;  // its arranged sub-filter in the workspace
};

struct DirectPlan {
  int64_t slots = 1;
  Layout engine = Layout::NCHW;  // of the pass: see engine_for and filter_engine_for
  FilterEngine filter_engine = FilterEngine::over_columns;
  // forward and backward filter: padded input per slot
  int64_t x_rows = 0, x_cols = 0, x_pitch = 0;
  size_t x_offset = 0;
  size_t filter_offset = 0;  // forward: the filter arranged for the engine
  // backward data
  std::vector<Phase> phases;
  int64_t dy_rows = 0, dy_cols = 0, dy_top = 0, dy_left = 0;
  size_t dy_offset = 0;
  // backward filter
  // dy copied into the engine's order, zero-padded so vector loads need no tail
  // handling: planes with rows of dy_tiled columns, or pixels of dy_pitch channels.
  int64_t dy_tiled = 0, dy_pitch = 0, dy_copy_elements = 0;
  size_t dy_copy_offset = 0, partial_offset = 0;
  size_t bytes = 0;
};

DirectPlan make_plan(const ConvProblem& p, ConvPass pass) {
  DirectPlan plan;
  const Shape4 out = p.output();
  const int64_t C = p.input.c, K = p.out_channels, R = p.kernel_h, S = p.kernel_w;
  const int64_t u = p.stride_h, v = p.stride_w;
  const int64_t Hp = p.input.h + 2 * p.pad_h, Wp = p.input.w + 2 * p.pad_w;
  plan.slots = parallel_slots(p);
  plan.filter_engine = filter_engine_for(p);
  plan.engine = pass == ConvPass::forward ? engine_for(K, out.w, p.layout)
                : pass == ConvPass::backward_data
                    ? engine_for(C, ceil_div(p.input.w, v), p.layout)  // columns of one phase
                : plan.filter_engine == FilterEngine::over_columns ? Layout::NCHW
                                                                   : Layout::NHWC;
  const bool nchw = plan.engine == Layout::NCHW;
  WorkspaceLayout ws;
  if (pass == ConvPass::forward || pass == ConvPass::backward_filter) {
    // Backward filter over input channels reads them as vectors, hence the pitch.
    plan.x_pitch =
        pass == ConvPass::backward_filter && plan.filter_engine == FilterEngine::over_input_channels
            ? round_up(C, kFilterVec)
            : C;
    plan.x_rows = Hp;
    // One column of slack: stride-2 vector loads read one float past the last tap.
    plan.x_cols = std::max(Wp, (tiled_width(plan.engine, out.w) - 1) * v + S + 1);
    plan.x_offset = ws.add_floats(plan.slots * plan.x_rows * plan.x_cols * plan.x_pitch);
  }
  if (pass == ConvPass::forward)
    plan.filter_offset = ws.add_floats(R * S * C * round_up(K, nhwc_channel_block(K)));
  if (pass == ConvPass::backward_data) {
    const int64_t max_taps_h = ceil_div(R, u), max_taps_w = ceil_div(S, v);
    plan.dy_top = max_taps_h - 1;
    plan.dy_left = max_taps_w - 1;
    // Taps r = ph + u * b of a phase meet padded rows ph + u * a from dy row a - b; the
    // rows inside dx are a in [ceil((pad - ph) / u), ceil((pad + H - ph) / u)).
    auto span = [](int64_t ph, int64_t step, int64_t pad, int64_t extent) {
      const int64_t first = pad > ph ? ceil_div(pad - ph, step) : 0;
      return std::pair{first, std::max<int64_t>(0, ceil_div(pad + extent - ph, step) - first)};
    };
    for (int64_t ph = 0; ph < u; ++ph)
      for (int64_t pw = 0; pw < v; ++pw) {
        Phase phase{};
        phase.ph_h = ph;
        phase.ph_w = pw;
        phase.taps_h = std::max<int64_t>(0, ceil_div(R - ph, u));
        phase.taps_w = std::max<int64_t>(0, ceil_div(S - pw, v));
        std::tie(phase.first_h, phase.rows) = span(ph, u, p.pad_h, p.input.h);
        std::tie(phase.first_w, phase.cols) = span(pw, v, p.pad_w, p.input.w);
        phase.dx_row = ph + u * phase.first_h - p.pad_h;
        phase.dx_col = pw + v * phase.first_w - p.pad_w;
        phase.filter_offset = ws.add_floats(phase.taps_h * phase.taps_w * K *
                                            (nchw ? C : round_up(C, nhwc_channel_block(C))));
        // The phase reads dy-buffer rows up to dy_top + first + rows - 1, and columns up
        // to dy_left + first + (rows rounded up to whole tiles) - 1.
        plan.dy_rows = std::max(plan.dy_rows, plan.dy_top + phase.first_h + phase.rows);
        plan.dy_cols = std::max(
            plan.dy_cols, plan.dy_left + phase.first_w + tiled_width(plan.engine, phase.cols));
        plan.phases.push_back(phase);
      }
    // dy itself sits at (dy_top, dy_left), whether or not a phase reads all of it.
    plan.dy_rows = std::max(plan.dy_rows, plan.dy_top + out.h);
    plan.dy_cols = std::max(plan.dy_cols, plan.dy_left + out.w);
    plan.dy_offset = ws.add_floats(plan.slots * K * plan.dy_rows * plan.dy_cols);
  }
  if (pass == ConvPass::backward_filter) {
    plan.dy_tiled = nchw ? round_up(out.w, 8) : out.w;
    plan.dy_pitch = plan.filter_engine == FilterEngine::over_output_channels ? round_up(K, 8) : K;
    plan.dy_copy_elements = nchw ? K * out.h * plan.dy_tiled : out.h * out.w * plan.dy_pitch;
    plan.dy_copy_offset = ws.add_floats(plan.slots * plan.dy_copy_elements);
    plan.partial_offset = ws.add_floats(plan.slots > 1 ? plan.slots * p.filter().count() : 0);
  }
  plan.bytes = ws.total_bytes();
  return plan;
}

// Runs body(slot, first_image, end_image) for each slot in parallel: slot g owns a
// contiguous share of the batch and its own scratch.
template <typename Body>
void for_each_slot(ThreadPool& pool, int64_t slots, int64_t batch, Body body) {
  pool.parallel_for(slots, [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) body(g, g * batch / slots, (g + 1) * batch / slots);
  });
}

// NCHW backward filter of one image: partial[k][c][r][s] += sum over p, q of
// dy[k][p][q] * x[c][p*u + r][q*v + s], vectorised over q (dy rows zero-padded to whole
// vectors so the tail columns add nothing), KB output channels at a time.
template <int KB, int V>
void nchw_filter_tile(const ConvProblem& p, const float* xbuf, int64_t x_rows, int64_t x_cols,
                      const float* dy, int64_t dy_cols, float* partial, int64_t k0, int64_t c,
                      int64_t r, int64_t s) {
  const int64_t v = V > 0 ? V : p.stride_w;
  const int64_t P = p.output().h;
  Vec8 acc[KB] = {};
  for (int64_t pp = 0; pp < P; ++pp) {
    const float* xrow = xbuf + (c * x_rows + pp * p.stride_h + r) * x_cols + s;
    for (int64_t q0 = 0; q0 < dy_cols; q0 += 8) {
      const Vec8 xv = load8_strided<V>(xrow + q0 * v, v);
      for (int kb = 0; kb < KB; ++kb)
        acc[kb] += load8(dy + ((k0 + kb) * P + pp) * dy_cols + q0) * xv;
    }
  }
  const Strides4 fs = strides_for(p.filter(), p.layout);  // partials are laid out like dw
  for (int kb = 0; kb < KB; ++kb) {
    float lanes[8];
    store8(lanes, acc[kb]);
    float sum = 0.0f;
    for (float lane : lanes) sum += lane;
    partial[(k0 + kb) * fs.n + c * fs.c + r * fs.h + s * fs.w] += sum;
  }
}

template <int V>
void nchw_filter_image(const ConvProblem& p, const float* xbuf, int64_t x_rows, int64_t x_cols,
                       const float* dy, int64_t dy_cols, float* partial) {
  const int64_t K = p.out_channels;
  for (int64_t k0 = 0; k0 < K; k0 += kNchwChannels)
    for (int64_t c = 0; c < p.input.c; ++c)
      for (int64_t r = 0; r < p.kernel_h; ++r)
        for (int64_t s = 0; s < p.kernel_w; ++s) switch (std::min<int64_t>(kNchwChannels, K - k0)) {
            case 4:
              nchw_filter_tile<4, V>(p, xbuf, x_rows, x_cols, dy, dy_cols, partial, k0, c, r, s);
              break;
            case 3:
              nchw_filter_tile<3, V>(p, xbuf, x_rows, x_cols, dy, dy_cols, partial, k0, c, r, s);
              break;
            case 2:
              nchw_filter_tile<2, V>(p, xbuf, x_rows, x_cols, dy, dy_cols, partial, k0, c, r, s);
              break;
            default:
              nchw_filter_tile<1, V>(p, xbuf, x_rows, x_cols, dy, dy_cols, partial, k0, c, r, s);
              break;
          }
}

void nchw_filter_image_step(const ConvProblem& p, const float* xbuf, int64_t x_rows, int64_t x_cols,
                            const float* dy, int64_t dy_cols, float* partial) {
  if (p.stride_w == 1) return nchw_filter_image<1>(p, xbuf, x_rows, x_cols, dy, dy_cols, partial);
  if (p.stride_w == 2) return nchw_filter_image<2>(p, xbuf, x_rows, x_cols, dy, dy_cols, partial);
  nchw_filter_image<0>(p, xbuf, x_rows, x_cols, dy, dy_cols, partial);
}

// NHWC backward filter of one image: partial[k][r][s][c] += sum over pixels of
// dy[p][q][k] * x[p*u + r][q*v + s][c], vectorised over c (x pixels padded to a
// whole vector of channels), KB output channels at a time.
template <int KB>
void nhwc_filter_tile(const ConvProblem& p, const float* xbuf, int64_t x_cols, int64_t pitch,
                      const float* dy, float* partial, int64_t k0, int64_t r, int64_t s,
                      int64_t c0) {
  const Shape4 out = p.output();
  const int64_t K = p.out_channels, C = p.input.c;
  const Strides4 fs = strides_for(p.filter(), p.layout);  // partials are laid out like dw
  Vec8 acc[KB] = {};
  for (int64_t pp = 0; pp < out.h; ++pp) {
    const float* xrow = xbuf + ((pp * p.stride_h + r) * x_cols + s) * pitch + c0;
    const float* drow = dy + pp * out.w * K + k0;
    for (int64_t q = 0; q < out.w; ++q) {
      const Vec8 xv = load8(xrow + q * p.stride_w * pitch);
      for (int kb = 0; kb < KB; ++kb) acc[kb] += splat8(drow[q * K + kb]) * xv;
    }
  }
  const int64_t n = std::min(kFilterVec, C - c0);
  for (int kb = 0; kb < KB; ++kb) {
    float lanes[8];
    store8(lanes, acc[kb]);
    float* o = partial + (k0 + kb) * fs.n + c0 * fs.c + r * fs.h + s * fs.w;
    for (int64_t i = 0; i < n; ++i) o[i * fs.c] += lanes[i];
  }
}

template <int KB>
void nhwc_filter_block(const ConvProblem& p, const float* xbuf, int64_t x_cols, int64_t pitch,
                       const float* dy, float* partial, int64_t k0) {
  for (int64_t r = 0; r < p.kernel_h; ++r)
    for (int64_t s = 0; s < p.kernel_w; ++s)
      for (int64_t c0 = 0; c0 < p.input.c; c0 += kFilterVec)
        nhwc_filter_tile<KB>(p, xbuf, x_cols, pitch, dy, partial, k0, r, s, c0);
}

void nhwc_filter_image(const ConvProblem& p, const float* xbuf, int64_t x_cols, int64_t pitch,
                       const float* dy, float* partial) {
  const int64_t K = p.out_channels;
  int64_t k0 = 0;
  for (; k0 + kFilterOutBlock <= K; k0 += kFilterOutBlock)
    nhwc_filter_block<kFilterOutBlock>(p, xbuf, x_cols, pitch, dy, partial, k0);
  for (; k0 + 4 <= K; k0 += 4) nhwc_filter_block<4>(p, xbuf, x_cols, pitch, dy, partial, k0);
  for (; k0 < K; ++k0) nhwc_filter_block<1>(p, xbuf, x_cols, pitch, dy, partial, k0);
}

// NHWC backward filter for few input channels (the stem's 3, LeNet's 1), where a
// vector of input channels would be mostly empty: vectorised over 8 output channels
// instead, all C input channels broadcast; dy pixels are read from a copy with a
// pitch of whole vectors.
template <int CB>
void nhwc_filter_tile_over_k(const ConvProblem& p, const float* xbuf, int64_t x_cols, int64_t pitch,
                             const float* dy, int64_t dy_pitch, float* partial, int64_t k0,
                             int64_t r, int64_t s) {
  const Shape4 out = p.output();
  Vec8 acc[CB] = {};
  for (int64_t pp = 0; pp < out.h; ++pp) {
    const float* xrow = xbuf + ((pp * p.stride_h + r) * x_cols + s) * pitch;
    const float* drow = dy + pp * out.w * dy_pitch + k0;
    for (int64_t q = 0; q < out.w; ++q) {
      const Vec8 d = load8(drow + q * dy_pitch);
      const float* xv = xrow + q * p.stride_w * pitch;
      for (int cb = 0; cb < CB; ++cb) acc[cb] += splat8(xv[cb]) * d;
    }
  }
  const int64_t n = std::min<int64_t>(8, p.out_channels - k0);
  const Strides4 fs = strides_for(p.filter(), p.layout);  // partials are laid out like dw
  for (int cb = 0; cb < CB; ++cb) {
    float lanes[8];
    store8(lanes, acc[cb]);
    float* o = partial + k0 * fs.n + cb * fs.c + r * fs.h + s * fs.w;
    for (int64_t i = 0; i < n; ++i) o[i * fs.n] += lanes[i];
  }
}

template <int CB>
void nhwc_filter_image_over_k(const ConvProblem& p, const float* xbuf, int64_t x_cols,
                              int64_t pitch, const float* dy, int64_t dy_pitch, float* partial) {
  for (int64_t r = 0; r < p.kernel_h; ++r)
    for (int64_t s = 0; s < p.kernel_w; ++s)
      for (int64_t k0 = 0; k0 < p.out_channels; k0 += 8)
        nhwc_filter_tile_over_k<CB>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial, k0, r, s);
}

void nhwc_filter_image_over_k(const ConvProblem& p, const float* xbuf, int64_t x_cols,
                              int64_t pitch, const float* dy, int64_t dy_pitch, float* partial) {
  switch (p.input.c) {
    case 1: return nhwc_filter_image_over_k<1>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial);
    case 2: return nhwc_filter_image_over_k<2>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial);
    case 3: return nhwc_filter_image_over_k<3>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial);
    case 4: return nhwc_filter_image_over_k<4>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial);
    case 5: return nhwc_filter_image_over_k<5>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial);
    case 6: return nhwc_filter_image_over_k<6>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial);
    default: return nhwc_filter_image_over_k<7>(p, xbuf, x_cols, pitch, dy, dy_pitch, partial);
  }
}

class ConvDirect final : public ConvAlgorithm {
 public:
  std::string name() const override { return "direct"; }
  std::string unsupported_reason(const ConvProblem& problem) const override {
    return invalid_problem_reason(problem, GroupedConv::supported);
  }
  // One workspace serves all three passes, and every pass insists on all of it, so a
  // caller that sized it for one pass only fails at once rather than on a later pass.
  size_t workspace_bytes(const ConvProblem& problem) const override {
    if (!unsupported_reason(problem).empty() || problem.groups > 1) return 0;  // grouped: none
    size_t bytes = 0;
    for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
      bytes = std::max(bytes, make_plan(problem, pass).bytes);
    return bytes;
  }

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    const ConvProblem& p = call.problem;
    check_conv_args(name(), ConvPass::forward, p, x, w, y);
    const ExecContext& ex = call.exec;
    profiler::KernelScope scope(ex.tracer, "direct.fwd", ex.device, ex.lane, p.flops(),
                                conv_pass_bytes(p));
    if (p.groups > 1) return grouped_conv_forward(p, ex.pool, x, w, y);
    const DirectPlan plan = make_plan(p, ConvPass::forward);
    check_workspace(name(), call, workspace_bytes(p));
    const Shape4 out = p.output();
    const int64_t C = p.input.c, K = p.out_channels;
    float* filter = WorkspaceLayout::at(call.workspace, plan.filter_offset);
    arrange_filter(w, plan.engine, false, p.kernel_h, p.kernel_w, 0, 1, 0, 1, filter);
    const ImageStrides ys = image_strides(p.layout, K, out.h, out.w);
    for_each_slot(ex.pool, plan.slots, p.input.n, [&](int64_t slot, int64_t first, int64_t end) {
      float* buf = WorkspaceLayout::at(call.workspace, plan.x_offset) +
                   slot * plan.x_rows * plan.x_cols * plan.x_pitch;
      for (int64_t n = first; n < end; ++n) {
        pack_padded(p.layout, x.data() + n * p.input.item_count(), C, p.input.h, p.input.w,
                    plan.engine, buf, plan.x_rows, plan.x_cols, p.pad_h, p.pad_w, plan.x_pitch);
        const Correlation a{C,
                            K,
                            p.kernel_h,
                            p.kernel_w,
                            out.h,
                            out.w,
                            p.stride_h,
                            p.stride_w,
                            buf,
                            plan.x_rows,
                            plan.x_cols,
                            filter,
                            y.data() + n * out.item_count(),
                            ys.channel,
                            ys.row,
                            ys.col};
        correlate(plan.engine, a);
      }
    });
  }

  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    const ConvProblem& p = call.problem;
    check_conv_args(name(), ConvPass::backward_data, p, dy, w, dx);
    const ExecContext& ex = call.exec;
    profiler::KernelScope scope(ex.tracer, "direct.bwd_data", ex.device, ex.lane, p.flops(),
                                conv_pass_bytes(p));
    if (p.groups > 1) return grouped_conv_backward_data(p, ex.pool, dy, w, dx);
    const DirectPlan plan = make_plan(p, ConvPass::backward_data);
    check_workspace(name(), call, workspace_bytes(p));
    const Shape4 out = p.output();
    const int64_t C = p.input.c, K = p.out_channels, H = p.input.h, W = p.input.w;
    const int64_t u = p.stride_h, v = p.stride_w;
    // Phase filter tap b is r = ph + u * (taps - 1 - b): flipped, so correlating the
    // padded dy sums dy[p] * w[r] over h = p * u + r.
    for (const Phase& ph : plan.phases)
      arrange_filter(w, plan.engine, true, ph.taps_h, ph.taps_w, ph.ph_h + u * (ph.taps_h - 1), -u,
                     ph.ph_w + v * (ph.taps_w - 1), -v,
                     WorkspaceLayout::at(call.workspace, ph.filter_offset));
    const ImageStrides xs = image_strides(p.layout, C, H, W);
    for_each_slot(ex.pool, plan.slots, p.input.n, [&](int64_t slot, int64_t first, int64_t end) {
      float* dybuf = WorkspaceLayout::at(call.workspace, plan.dy_offset) +
                     slot * K * plan.dy_rows * plan.dy_cols;
      for (int64_t n = first; n < end; ++n) {
        float* dx_image = dx.data() + n * p.input.item_count();
        pack_padded(p.layout, dy.data() + n * out.item_count(), K, out.h, out.w, plan.engine, dybuf,
                    plan.dy_rows, plan.dy_cols, plan.dy_top, plan.dy_left, K);
        for (const Phase& ph : plan.phases) {
          if (ph.rows == 0 || ph.cols == 0) continue;
          // Phases with fewer taps start further into the shared top/left zero border.
          const int64_t row0 = plan.dy_top - (ph.taps_h - 1) + ph.first_h;
          const int64_t col0 = plan.dy_left - (ph.taps_w - 1) + ph.first_w;
          const float* in = plan.engine == Layout::NCHW ? dybuf + row0 * plan.dy_cols + col0
                                                        : dybuf + (row0 * plan.dy_cols + col0) * K;
          const Correlation a{K,
                              C,
                              ph.taps_h,
                              ph.taps_w,
                              ph.rows,
                              ph.cols,
                              1,
                              1,
                              in,
                              plan.dy_rows,
                              plan.dy_cols,
                              WorkspaceLayout::at(call.workspace, ph.filter_offset),
                              dx_image + ph.dx_row * xs.row + ph.dx_col * xs.col,
                              xs.channel,
                              u * xs.row,
                              v * xs.col};
          correlate(plan.engine, a);
        }
      }
    });
  }

  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    const ConvProblem& p = call.problem;
    check_conv_args(name(), ConvPass::backward_filter, p, x, dy, dw);
    const ExecContext& ex = call.exec;
    profiler::KernelScope scope(ex.tracer, "direct.bwd_filter", ex.device, ex.lane, p.flops(),
                                conv_pass_bytes(p));
    if (p.groups > 1) return grouped_conv_backward_filter(p, ex.pool, x, dy, dw);
    const DirectPlan plan = make_plan(p, ConvPass::backward_filter);
    check_workspace(name(), call, workspace_bytes(p));
    const Shape4 out = p.output();
    const int64_t C = p.input.c, K = p.out_channels, filter_elements = p.filter().count();
    float* partials = WorkspaceLayout::at(call.workspace, plan.partial_offset);
    for_each_slot(ex.pool, plan.slots, p.input.n, [&](int64_t slot, int64_t first, int64_t end) {
      float* buf = WorkspaceLayout::at(call.workspace, plan.x_offset) +
                   slot * plan.x_rows * plan.x_cols * plan.x_pitch;
      float* dycopy =
          WorkspaceLayout::at(call.workspace, plan.dy_copy_offset) + slot * plan.dy_copy_elements;
      float* partial = plan.slots > 1 ? partials + slot * filter_elements : dw.data();
      std::fill_n(partial, filter_elements, 0.0f);
      for (int64_t n = first; n < end; ++n) {
        pack_padded(p.layout, x.data() + n * p.input.item_count(), C, p.input.h, p.input.w,
                    plan.engine, buf, plan.x_rows, plan.x_cols, p.pad_h, p.pad_w, plan.x_pitch);
        pack_padded(p.layout, dy.data() + n * out.item_count(), K, out.h, out.w, plan.engine,
                    dycopy, out.h, plan.dy_tiled, 0, 0, plan.dy_pitch);
        switch (plan.filter_engine) {
          case FilterEngine::over_columns:
            nchw_filter_image_step(p, buf, plan.x_rows, plan.x_cols, dycopy, plan.dy_tiled,
                                   partial);
            break;
          case FilterEngine::over_input_channels:
            nhwc_filter_image(p, buf, plan.x_cols, plan.x_pitch, dycopy, partial);
            break;
          case FilterEngine::over_output_channels:
            nhwc_filter_image_over_k(p, buf, plan.x_cols, plan.x_pitch, dycopy, plan.dy_pitch,
                                     partial);
            break;
        }
      }
    });
    if (plan.slots > 1)
      ex.pool.parallel_for(
          filter_elements,
          [&](int64_t b, int64_t e) {
            float* out_dw = dw.data();
            std::copy(partials + b, partials + e, out_dw + b);
            for (int64_t g = 1; g < plan.slots; ++g) {
              const float* part = partials + g * filter_elements;
              for (int64_t i = b; i < e; ++i) out_dw[i] += part[i];
            }
          },
          1024);
  }
};

const ConvAlgorithmRegistration registration("cpu", "direct", [](const KnobValues&) {
  return std::make_unique<ConvDirect>();
});

}  // namespace
}  // namespace tunescope::cpu
