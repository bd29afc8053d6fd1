#include "bench_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <sstream>

namespace penumbra::cli {

KernelProfile timedProfile(const std::string& kernel, const std::string& variant, Backend backend,
                           const std::string& device, const std::vector<double>& ms) {
  KernelProfile p;
  p.kernel = kernel;
  p.variant = variant;
  p.backend = toString(backend);
  p.device = device;
  p.repetitions = int(ms.size());
  p.medianMs = medianOf(ms);
  p.minMs = ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end());
  return p;
}

std::string todayIso() {
  const std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

void applyMeasuredPeak(std::vector<BenchRow>& rows, double peakGBs) {
  for (auto& r : rows)
    if (r.profile.backend == "cuda" && r.profile.bytes > 0) r.profile.peakBandwidthGBs = peakGBs;
}

void printBenchTable(const std::vector<BenchRow>& rows) {
  std::printf("\n%-10s %-12s %-26s %-17s %-4s %10s %9s %16s %6s  %s\n", "suite", "case", "kernel",
              "variant", "bknd", "median_ms", "min_ms", "rate", "%peak", "device / note");
  for (const auto& r : rows) {
    const auto& p = r.profile;
    char peak[16] = "-";
    if (p.peakBandwidthGBs > 0) std::snprintf(peak, sizeof peak, "%.1f", p.pctPeakBandwidth());
    std::printf("%-10s %-12s %-26s %-17s %-4s %10.3f %9.3f %16s %6s  %s%s%s\n", r.suite.c_str(),
                r.caseName.c_str(), p.kernel.c_str(), p.variant.c_str(), p.backend.c_str(),
                p.medianMs, p.minMs,
                r.rate.c_str(), peak, p.device.c_str(), r.note.empty() ? "" : " / ",
                r.note.c_str());
  }
  std::fflush(stdout);
}

std::vector<std::string> splitList(const char* env, const std::string& fallback) {
  std::vector<std::string> out;
  std::stringstream ss(env && *env ? env : fallback);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string benchRowsToJson(const std::vector<BenchRow>& rows, const std::string& date) {
  std::ostringstream os;
  os << "{\n  \"date\": \"" << date << "\",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const auto& p = r.profile;
    os << "    {\"suite\": \"" << r.suite << "\", \"case\": \"" << r.caseName
       << "\", \"variant\": \"" << p.variant << "\", \"kernel\": \"" << p.kernel
       << "\", \"backend\": \"" << p.backend << "\", \"device\": \"" << p.device
       << "\", \"repetitions\": " << p.repetitions << ", \"time_ms\": " << p.medianMs
       << ", \"min_ms\": " << p.minMs;
    if (p.bytes > 0) os << ", \"gbps\": " << p.gbPerS();
    if (p.peakBandwidthGBs > 0) os << ", \"pct_peak_bw\": " << p.pctPeakBandwidth();
    if (p.flops > 0) os << ", \"gflops\": " << p.gflopPerS();
    if (!std::isnan(r.speedupVsBaseline)) os << ", \"speedup_vs_baseline\": " << r.speedupVsBaseline;
    if (!std::isnan(r.speedupVsCpu)) os << ", \"speedup_vs_cpu\": " << r.speedupVsCpu;
    if (!std::isnan(r.accuracy))
      os << ", \"accuracy\": " << r.accuracy << ", \"accuracy_what\": \"" << r.accuracyWhat << "\"";
    os << ", \"rate\": \"" << r.rate << "\", \"note\": \"" << r.note << "\"}"
       << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  os << "  ]\n}\n";
  return os.str();
}

}  // namespace penumbra::cli
