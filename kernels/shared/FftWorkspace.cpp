#include "kernels/shared/FftWorkspace.h"

namespace tunescope {

const Knob<FftWorkspace> fft_workspace_knob{
    [] {
      KnobSpec spec;
      spec.key = "fft_workspace";
      spec.type = KnobType::choice;
      spec.choices = {"reuse", "cache"};
      spec.default_value = "reuse";
      spec.scope = KnobScope::conv_algorithm;
      spec.help =
          "FFT conv memory policy: reuse (one workspace per lane, sized by the largest layer) | "
          "cache (also keep "
          "each FFT layer's forward spectra of x and w for its backward passes)";
      return spec;
    }(),
    {[](std::string_view text) {
       return text == "cache" ? FftWorkspace::cache : FftWorkspace::reuse;
     },
     [](const FftWorkspace& policy) {
       return std::string(policy == FftWorkspace::cache ? "cache" : "reuse");
     }}};

}  // namespace tunescope
