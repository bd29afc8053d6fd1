#pragma once
/// The host's memory, for the up-front checks that refuse a request before allocating it
/// (check, then run: a plan that cannot fit gets a message with sizes, never std::bad_alloc).
#include <cstddef>
#include <string>

namespace penumbra {

/// Physical memory installed [bytes]; 0 when the system does not say.
std::size_t physicalMemoryBytes();

/// Throws Error(OutOfMemory) when `bytes` exceed 90 % of the installed memory:
/// "<what> needs 1.2 TiB of host memory, more than 90 % of the 23.4 GiB installed (<detail>)".
/// Does nothing when the installed memory is unknown.
void refuseIfHostMemoryExceeded(double bytes, const std::string& what, const std::string& detail);

}  // namespace penumbra
