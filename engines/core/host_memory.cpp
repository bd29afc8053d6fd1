#include "core/host_memory.hpp"

#include <unistd.h>

#include "core/device.hpp"
#include "core/error.hpp"

namespace penumbra {

std::size_t physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
}

void refuseIfHostMemoryExceeded(double bytes, const std::string& what, const std::string& detail) {
  const double ram = double(physicalMemoryBytes());
  if (ram > 0 && !(bytes <= 0.9 * ram))  // NaN is refused too
    PENUMBRA_THROW(OutOfMemory, what + " needs " + formatBytes(bytes) +
                                    " of host memory, more than 90 % of the " + formatBytes(ram) +
                                    " installed (" + detail + ")");
}

}  // namespace penumbra
