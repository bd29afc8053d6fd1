// Probe (device tool, not part of the build): can unlocking a downloaded result's host memory
// overlap its download, or can a page-locked staging buffer replace the unlocking? A result
// volume (64 MiB: 256^3 floats) is (mode 0/1) page-locked in K chunks, downloaded chunk by chunk
// (an event after each), and each chunk is unregistered as soon as its event has fired, on the
// caller or on a helper thread; or (mode 2) downloaded in K chunks into a staging buffer made
// once with cudaMallocHost, from which T threads copy each chunk into plain memory as it
// arrives. K = 1 in mode 0 is what the engines do (download everything, then unregister).
//   nvcc -O2 -std=c++17 -arch=sm_90 -o /tmp/unlock scripts/probes/host_unlock_probe.cu && /tmp/unlock
//
// Found on an H100 machine (2026-11-26, median of 12): download 1.23 ms, + unregister 1.22 ms;
// chunked unregistering does not overlap the download (it waits for the device: 2.50-3.56 ms
// for K = 2-32, worse on a helper thread). Staging: 1.53-1.68 ms with 2-4 MiB chunks and 8-12
// threads, 1.9-3.7 ms with 2-4 threads. Inside the photon engine the staging did not pay
// (photon_dose_cuda.cu, A/B on one machine, water 256^3 classic atomic, two runs each):
// warm 10.0-10.1 / paced 10.4-10.7 ms staged against 9.9-10.0 / 9.9-10.0 ms with the direct
// download and unlock; the host saw the staged download end 1.5-1.9 ms after it began (DMA
// 1.3-1.4 ms), and the engine keeps the direct DMA into the page-locked result.
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

using Clock = std::chrono::steady_clock;
static double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

__global__ void fill(float* p, std::size_t n, float salt) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = float(i % 1000003) * 0.5f + salt;
}

static float* touchedHost(std::size_t n) {
  const std::size_t bytes = n * sizeof(float), huge = std::size_t(2) << 20;
  void* p = nullptr;
  if (posix_memalign(&p, huge, bytes)) std::exit(2);
  (void)madvise(p, bytes, MADV_HUGEPAGE);
  std::fill_n(static_cast<float*>(p), n, 0.f);
  return static_cast<float*>(p);
}

int main() {
  const std::size_t n = std::size_t(256) * 256 * 256, bytes = n * sizeof(float);
  float* dev = nullptr;
  CK(cudaMalloc(&dev, bytes));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s\n", prop.name);
  std::printf("%-26s %4s %10s %10s %10s %10s\n", "mode", "K", "register", "download", "to-plain",
              "overlap");
  const int reps = 12;
  for (int mode = 0; mode < 2; ++mode) {
    for (int K : {1, 2, 4, 8, 16, 32}) {
      if (mode == 1 && K == 1) continue;
      std::vector<double> reg, dl, total;
      for (int r = 0; r < reps; ++r) {
        float* host = touchedHost(n);
        const std::size_t chunk = ((bytes / K) + 4095) & ~std::size_t(4095);
        std::vector<std::pair<char*, std::size_t>> parts;
        for (std::size_t off = 0; off < bytes; off += chunk)
          parts.push_back({reinterpret_cast<char*>(host) + off, std::min(chunk, bytes - off)});
        const auto r0 = Clock::now();
        for (auto& p : parts) CK(cudaHostRegister(p.first, p.second, cudaHostRegisterPortable));
        const auto r1 = Clock::now();
        fill<<<264, 512, 0, s>>>(dev, n, float(r));
        CK(cudaStreamSynchronize(s));
        std::vector<cudaEvent_t> ev(parts.size());
        for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const auto t0 = Clock::now();
        CK(cudaEventRecord(e0, s));
        std::size_t off = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) {
          CK(cudaMemcpyAsync(parts[i].first, reinterpret_cast<char*>(dev) + off, parts[i].second,
                             cudaMemcpyDeviceToHost, s));
          CK(cudaEventRecord(ev[i], s));
          off += parts[i].second;
        }
        CK(cudaEventRecord(e1, s));
        if (mode == 0) {
          // Unregister each chunk on this thread as soon as its DMA is done.
          for (std::size_t i = 0; i < parts.size(); ++i) {
            CK(cudaEventSynchronize(ev[i]));
            CK(cudaHostUnregister(parts[i].first));
          }
        } else {
          // The same on a helper thread; this thread only waits for the helper.
          std::thread t([&] {
            for (std::size_t i = 0; i < parts.size(); ++i) {
              CK(cudaEventSynchronize(ev[i]));
              CK(cudaHostUnregister(parts[i].first));
            }
          });
          t.join();
        }
        const auto t1 = Clock::now();
        CK(cudaStreamSynchronize(s));
        float dms = 0;
        CK(cudaEventElapsedTime(&dms, e0, e1));
        // Every value arrived (poison would be 0 from the zero fill: check a spread of them).
        for (std::size_t i = 0; i < n; i += 4099)
          if (host[i] != float(i % 1000003) * 0.5f + float(r)) {
            std::printf("MISMATCH at %zu\n", i);
            return 3;
          }
        reg.push_back(ms(r0, r1));
        dl.push_back(dms);
        total.push_back(ms(t0, t1));
        for (auto& e : ev) cudaEventDestroy(e);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        std::free(host);
      }
      auto med = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      const double d = med(dl), t = med(total);
      std::printf("%-26s %4d %10.3f %10.3f %10.3f %10.3f\n",
                  mode == 0 ? "unregister on caller" : "unregister on helper", K, med(reg), d, t,
                  t - d);
    }
  }
  // Mode 2: no registration of the result at all. A persistent page-locked staging buffer
  // (allocated once), the download in K chunks, and T host threads copying each chunk into the
  // result (plain memory, touched beforehand as HostOutput::make does) as soon as its event
  // has fired: download-start-to-result time.
  float* staging = nullptr;
  CK(cudaMallocHost(&staging, bytes));
  for (int K : {8, 16, 32})
    for (int T : {2, 4, 8, 12}) {
      std::vector<double> total, dl;
      for (int r = 0; r < reps; ++r) {
        float* host = touchedHost(n);
        fill<<<264, 512, 0, s>>>(dev, n, float(r));
        CK(cudaStreamSynchronize(s));
        const std::size_t chunk = ((bytes / K) + 4095) & ~std::size_t(4095);
        std::vector<std::pair<std::size_t, std::size_t>> parts;
        for (std::size_t off = 0; off < bytes; off += chunk) parts.push_back({off, std::min(chunk, bytes - off)});
        std::vector<cudaEvent_t> ev(parts.size());
        for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        const auto t0 = Clock::now();
        CK(cudaEventRecord(e0, s));
        for (std::size_t i = 0; i < parts.size(); ++i) {
          CK(cudaMemcpyAsync(reinterpret_cast<char*>(staging) + parts[i].first,
                             reinterpret_cast<char*>(dev) + parts[i].first, parts[i].second,
                             cudaMemcpyDeviceToHost, s));
          CK(cudaEventRecord(ev[i], s));
        }
        CK(cudaEventRecord(e1, s));
        std::vector<std::thread> workers;
        for (int t = 0; t < T; ++t)
          workers.emplace_back([&, t] {
            for (std::size_t i = 0; i < parts.size(); ++i) {
              CK(cudaEventSynchronize(ev[i]));
              const std::size_t per = (parts[i].second / T + 63) & ~std::size_t(63);
              const std::size_t b0 = std::min(parts[i].second, per * t),
                                b1 = std::min(parts[i].second, per * (t + 1));
              if (b1 > b0)
                std::memcpy(reinterpret_cast<char*>(host) + parts[i].first + b0,
                            reinterpret_cast<char*>(staging) + parts[i].first + b0, b1 - b0);
            }
          });
        for (auto& w : workers) w.join();
        const auto t1 = Clock::now();
        float dms = 0;
        CK(cudaEventElapsedTime(&dms, e0, e1));
        for (std::size_t i = 0; i < n; i += 4099)
          if (host[i] != float(i % 1000003) * 0.5f + float(r)) {
            std::printf("MISMATCH (staging) at %zu\n", i);
            return 3;
          }
        total.push_back(ms(t0, t1));
        dl.push_back(dms);
        for (auto& e : ev) cudaEventDestroy(e);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        std::free(host);
      }
      std::sort(total.begin(), total.end());
      std::sort(dl.begin(), dl.end());
      std::printf("%-20s K=%2d T=%2d %10s %10.3f %10.3f %10.3f\n", "staging + copy", K, T, "-",
                  dl[dl.size() / 2], total[total.size() / 2],
                  total[total.size() / 2] - dl[dl.size() / 2]);
    }
  cudaFreeHost(staging);
  return 0;
}
