#pragma once
/// Minimal end-to-end GPU check used by tests and `penumbra-cli devices`: fills out[i] with
/// a*i + b on the device (after poisoning) and copies it back. Throws when CUDA fails.
#include <cstdint>
#include <vector>

namespace penumbra {

std::vector<std::int32_t> cudaSmokeAffine(int n, std::int32_t a, std::int32_t b);

}  // namespace penumbra
