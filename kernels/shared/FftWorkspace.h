// The FFT workspace policy (problem 2 of docs/ARCHITECTURE.md), a knob the FFT
// convolutions declare (config key `fft_workspace`): `reuse` gives every conv layer of a
// lane one workspace sized by the largest layer, so FFT layers recompute the spectra of
// x and w in their backward passes; `cache` also keeps each FFT layer's forward spectra
// of x and w for its backward passes (more memory, fewer transforms). Shared by the cpu
// and cuda FFT convolutions, which read it when they are made.
#pragma once

#include "core/base/Knob.h"

namespace tunescope {

enum class FftWorkspace { reuse, cache };

extern const Knob<FftWorkspace> fft_workspace_knob;

}  // namespace tunescope
