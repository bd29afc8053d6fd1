#pragma once
/// Where the engines find the shipped resources (resources/: calibration curves, beam models).
#include <string>

namespace penumbra {

/// Folder of the shipped resources: $PENUMBRA_RESOURCES when set, else the source tree's
/// resources/ (compiled in).
std::string resourceDir();

}  // namespace penumbra
