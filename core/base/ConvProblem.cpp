#include "core/base/ConvProblem.h"

#include "core/base/Error.h"

namespace tunescope {

Shape4 ConvProblem::output() const {
  return {input.n, out_channels, (input.h + 2 * pad_h - kernel_h) / stride_h + 1,
          (input.w + 2 * pad_w - kernel_w) / stride_w + 1};
}

double ConvProblem::flops() const {
  const Shape4 out = output();
  const int64_t channels_per_group = input.c / groups;  // exact: groups divide the channels
  return 2.0 * static_cast<double>(out.count()) *
         static_cast<double>(channels_per_group * kernel_h * kernel_w);
}

double ConvProblem::min_bytes() const {
  return static_cast<double>(sizeof(float)) *
         static_cast<double>(input.count() + filter().count() + output().count());
}

std::string ConvProblem::key() const {
  return cat("n", input.n, "c", input.c, "h", input.h, "w", input.w, "_k", out_channels, "r",
             kernel_h, "s", kernel_w, "_u", stride_h, "v", stride_w, "_p", pad_h, "q", pad_w, "_",
             to_string(layout), groups > 1 ? cat("_g", groups) : std::string(), "_f32");
}

void ConvProblem::validate() const {
  auto positive = [&](int64_t value, const char* field) {
    if (value <= 0)
      fail(ErrorKind::usage, "conv problem ", key(), ": ", field, " must be > 0, got ", value);
  };
  positive(input.n, "batch");
  positive(input.c, "input channels");
  positive(input.h, "input height");
  positive(input.w, "input width");
  positive(out_channels, "output channels");
  positive(kernel_h, "kernel height");
  positive(kernel_w, "kernel width");
  positive(stride_h, "stride height");
  positive(stride_w, "stride width");
  positive(groups, "groups");
  if (input.c % groups != 0 || out_channels % groups != 0)
    fail(ErrorKind::usage, "conv problem ", key(), ": ", groups,
         " groups do not divide the input channels and the output channels");
  if (pad_h < 0 || pad_w < 0)
    fail(ErrorKind::usage, "conv problem ", key(), ": padding must be >= 0");
  if (input.h + 2 * pad_h < kernel_h || input.w + 2 * pad_w < kernel_w)
    fail(ErrorKind::usage, "conv problem ", key(), ": kernel larger than the padded input");
}

}  // namespace tunescope
