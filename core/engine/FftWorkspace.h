// The FFT workspace policy (DESIGN.md problem 2), a RunConfig knob: `reuse` gives every
// conv layer of a lane one workspace sized by the largest layer, so FFT layers recompute
// the spectra of x and w in their backward passes; `cache` also keeps each FFT layer's
// forward spectra of x and w for its backward passes (more memory, fewer transforms).
#pragma once

#include <optional>
#include <string_view>

namespace tunescope {

enum class FftWorkspace { reuse, cache };

inline constexpr const char* kFftWorkspaceValues = "reuse, cache";

const char* to_string(FftWorkspace policy);
// nullopt for anything but "reuse" and "cache".
std::optional<FftWorkspace> parse_fft_workspace(std::string_view text);

}  // namespace tunescope
