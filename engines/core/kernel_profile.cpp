#include "core/kernel_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace penumbra {

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static std::string jsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}

std::string profilesToJson(const std::vector<KernelProfile>& ps) {
  std::ostringstream os;
  os.precision(6);
  os << "[\n";
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const auto& p = ps[i];
    os << "  {\"kernel\": \"" << jsonEscape(p.kernel) << "\", \"variant\": \""
       << jsonEscape(p.variant) << "\", \"backend\": \"" << jsonEscape(p.backend)
       << "\", \"device\": \"" << jsonEscape(p.device) << "\", \"repetitions\": " << p.repetitions
       << ", \"time_ms\": " << p.medianMs << ", \"min_ms\": " << p.minMs
       << ", \"gbps\": " << p.gbPerS() << ", \"gflops\": " << p.gflopPerS()
       << ", \"pct_peak_bw\": " << p.pctPeakBandwidth() << ", \"grid\": " << p.gridX
       << ", \"block\": " << p.blockX << ", \"registers\": " << p.registersPerThread
       << ", \"shared_bytes\": " << p.sharedBytesPerBlock
       << ", \"occupancy\": " << p.theoreticalOccupancy << "}" << (i + 1 < ps.size() ? "," : "")
       << "\n";
  }
  os << "]\n";
  return os.str();
}

}  // namespace penumbra
