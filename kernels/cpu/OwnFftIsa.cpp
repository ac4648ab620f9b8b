#include "kernels/cpu/OwnFftIsa.h"

#include "kernels/cpu/OwnFftKernelTable.h"

namespace tunescope::cpu {

const OwnFftKernelTable& own_fft_kernels(OwnFftIsa isa) {
  switch (isa) {
    case OwnFftIsa::avx512: return kOwnFftAvx512Kernels;
    case OwnFftIsa::avx2: return kOwnFftAvx2Kernels;
    default: return kOwnFftScalarKernels;
  }
}

}  // namespace tunescope::cpu
