#include "core/base/OpChecks.h"

#include <climits>

#include "core/base/Error.h"

namespace tunescope::op_checks {

namespace {

std::string describe(const Tensor& t) { return cat(t.shape().str(), " ", to_string(t.layout())); }

void check_same_layout(const char* op, const char* name, const Tensor& t, const char* ref_name,
                       const Tensor& ref) {
  if (t.layout() != ref.layout())
    fail(ErrorKind::runtime, op, ": ", name, " is ", to_string(t.layout()), " but ", ref_name,
         " is ", to_string(ref.layout()));
}

}  // namespace

void check_present(const char* op, const char* name, const Tensor& t) {
  if (t.empty())
    fail(ErrorKind::runtime, op, ": ", name, " is empty (shape ", t.shape().str(), ")");
}

void check_shape(const char* op, const char* name, const Tensor& t, const Shape4& expected) {
  check_present(op, name, t);
  if (!(t.shape() == expected))
    fail(ErrorKind::runtime, op, ": ", name, " has shape ", t.shape().str(), ", expected ",
         expected.str());
}

void check_like(const char* op, const char* name, const Tensor& t, const char* ref_name,
                const Tensor& ref) {
  check_present(op, name, t);
  if (!(t.shape() == ref.shape()) || t.layout() != ref.layout())
    fail(ErrorKind::runtime, op, ": ", name, " is ", describe(t), " but ", ref_name, " is ",
         describe(ref), " (they must match)");
}

void check_channel_param(const char* op, const char* name, const Tensor& t, int64_t channels) {
  check_shape(op, name, t, Shape4{1, channels, 1, 1});
}

void check_elementwise(const char* op, std::initializer_list<NamedTensor> tensors) {
  const NamedTensor& ref = *tensors.begin();
  check_present(op, ref.first, *ref.second);
  for (auto it = tensors.begin() + 1; it != tensors.end(); ++it)
    check_like(op, it->first, *it->second, ref.first, *ref.second);
}

void check_per_channel(const char* op, const char* data_name, const Tensor& data,
                       const char* param_name, const Tensor& param) {
  check_present(op, data_name, data);
  check_channel_param(op, param_name, param, data.shape().c);
}

void check_batchnorm_forward(const char* op, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, const Tensor& running_mean,
                             const Tensor& running_var, const Tensor& y) {
  check_present(op, "x", x);
  check_like(op, "y", y, "x", x);
  const int64_t channels = x.shape().c;
  check_channel_param(op, "gamma", gamma, channels);
  check_channel_param(op, "beta", beta, channels);
  check_channel_param(op, "running_mean", running_mean, channels);
  check_channel_param(op, "running_var", running_var, channels);
}

void check_batchnorm_backward(const char* op, const Tensor& x, const Tensor& dy,
                              const Tensor& gamma, const BatchNormSaved& saved, const Tensor& dx,
                              const Tensor& dgamma, const Tensor& dbeta) {
  check_present(op, "x", x);
  check_like(op, "dy", dy, "x", x);
  check_like(op, "dx", dx, "x", x);
  const int64_t channels = x.shape().c;
  check_channel_param(op, "gamma", gamma, channels);
  check_channel_param(op, "saved.mean", saved.mean, channels);
  check_channel_param(op, "saved.inv_std", saved.inv_std, channels);
  check_channel_param(op, "dgamma", dgamma, channels);
  check_channel_param(op, "dbeta", dbeta, channels);
}

Shape4 check_pool(const char* op, const PoolParams& params, const Tensor& in, const char* in_name,
                  const Tensor& out, const char* out_name) {
  check_present(op, in_name, in);
  if (params.pad_h >= params.kernel_h || params.pad_w >= params.kernel_w)
    fail(ErrorKind::runtime, op, ": padding ", params.pad_h, "x", params.pad_w,
         " must be smaller than the kernel ", params.kernel_h, "x", params.kernel_w);
  const Shape4 expected = params.output(in.shape());
  check_shape(op, out_name, out, expected);
  check_same_layout(op, out_name, out, in_name, in);
  return expected;
}

void check_global_pool(const char* op, const Tensor& full, const char* full_name,
                       const Tensor& pooled, const char* pooled_name) {
  check_present(op, full_name, full);
  const Shape4 s = full.shape();
  check_shape(op, pooled_name, pooled, Shape4{s.n, s.c, 1, 1});
  check_same_layout(op, pooled_name, pooled, full_name, full);
}

void check_fc_weight(const char* op, const char* data_name, const Tensor& data,
                     const char* weight_name, const Tensor& weight) {
  check_present(op, data_name, data);
  check_present(op, weight_name, weight);
  const Shape4 d = data.shape(), w = weight.shape();
  if (d.c != w.c || d.h != w.h || d.w != w.w || data.layout() != weight.layout())
    fail(ErrorKind::runtime, op, ": ", weight_name, " ", w.str(), " ", to_string(weight.layout()),
         " does not match ", data_name, " ", d.str(), " ", to_string(data.layout()),
         " (expected OUTx", d.c, "x", d.h, "x", d.w, " in the same layout)");
}

void check_fc_outputs(const char* op, const char* name, const Tensor& t, int64_t batch,
                      int64_t outputs, Layout layout) {
  check_shape(op, name, t, Shape4{batch, outputs, 1, 1});
  if (t.layout() != layout)
    fail(ErrorKind::runtime, op, ": ", name, " is ", to_string(t.layout()), " but the data is ",
         to_string(layout));
}

void check_softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                 const Tensor* dlogits) {
  constexpr const char* op = "softmax_xent";
  check_present(op, "logits", logits);
  const Shape4 s = logits.shape();
  if (s.h != 1 || s.w != 1)
    fail(ErrorKind::runtime, op, ": logits must be Nx", s.c, "x1x1, got ", s.str());
  if (static_cast<int64_t>(labels.size()) != s.n)
    fail(ErrorKind::runtime, op, ": ", labels.size(), " labels for a batch of ", s.n);
  for (int64_t i = 0; i < s.n; ++i)
    if (labels[i] < 0 || labels[i] >= s.c)
      fail(ErrorKind::input, op, ": label ", i, " is ", labels[i], ", outside [0, ", s.c, ")");
  if (dlogits) check_like(op, "dlogits", *dlogits, "logits", logits);
}

void check_transpose(const Tensor& x, const Tensor& y) {
  check_present("transpose", "x", x);
  check_shape("transpose", "y", y, x.shape());
  if (x.layout() == y.layout())
    fail(ErrorKind::runtime, "transpose: x and y are both ", to_string(x.layout()),
         " (y must have the other layout)");
}

void check_scatter(const Tensor& batch, int64_t first, const Tensor& shard) {
  const Shape4 b = batch.shape(), s = shard.shape();
  if (b.c != s.c || b.h != s.h || b.w != s.w || batch.layout() != shard.layout() || first < 0 ||
      first >= b.n)
    fail(ErrorKind::runtime, "scatter: rows from ", first, " of ", b.str(), " do not fit ",
         s.str());
}

void check_alike(const char* op, const Tensor& a, const Tensor& b) {
  if (!(a.shape() == b.shape()) || a.layout() != b.layout())
    fail(ErrorKind::runtime, op, ": ", describe(a), " does not match ", describe(b));
}

int blas_int(int64_t value) {
  if (value > INT_MAX)
    fail(ErrorKind::unsupported, "BLAS dimension ", value, " exceeds the BLAS integer range");
  return static_cast<int>(value);
}

}  // namespace tunescope::op_checks
