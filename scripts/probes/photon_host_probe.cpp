// Probe (device tool, not part of the build): where the photon engine's host time goes in a warm
// call on the 256^3 water cube (issue 15: whole dose <= 8 ms). Times the CUDA runtime calls the
// engine makes per call and the host stages of computePhotonDose(), median of 20.
//   g++ -O2 -std=c++20 -Iengines -I/usr/local/cuda/include scripts/probes/photon_host_probe.cpp \
//     build-gpu/engines/libpenumbra_photon_dose.a build-gpu/engines/libpenumbra_photon_physics.a \
//     build-gpu/engines/libpenumbra_raytrace.a build-gpu/engines/libpenumbra_core.a \
//     -L/usr/local/cuda/lib64 -lcudart -lpthread -o /tmp/hostprobe && /tmp/hostprobe
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <vector>

#include "core/device.hpp"
#include "photon/photon_backend.hpp"
#include "photon/photon_dose.hpp"

using namespace penumbra;
using namespace penumbra::photon;
using Clock = std::chrono::steady_clock;

static double medianMs(const std::function<void()>& f, int reps = 20) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cudaFree(nullptr);
  Grid g;
  g.dims = {256, 256, 256};
  g.spacing = {2, 2, 2};
  g.origin = {-255, -255, -255};
  auto density = std::make_shared<Volume<float>>(g, 1.0f);
  PhotonDoseRequest q;
  q.density = density;
  PhotonBeam b;
  q.beams = {b};
  q.backend = Backend::Cuda;
  q.params.deposit = DepositStrategy::Atomic;
  q.params.variant = DdaVariant::Classic;
  auto model = defaultPhotonModel();
  q.model = model;
  auto cones = detail::cachedCones(model, 8, 12);
  std::size_t fb = 0, tb = 0;
  std::printf("%-44s %8.3f ms\n", "cudaMemGetInfo",
              medianMs([&] { cudaMemGetInfo(&fb, &tb); }));
  std::printf("%-44s %8.3f ms\n", "queryCudaDevices",
              medianMs([&] { (void)queryCudaDevices(nullptr); }));
  std::printf("%-44s %8.3f ms\n", "selectBackend(Auto)",
              medianMs([&] { (void)selectBackend(Backend::Auto); }));
  std::printf("%-44s %8.3f ms\n", "cudaStreamCreate+Destroy", medianMs([&] {
                cudaStream_t s;
                cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
                cudaStreamDestroy(s);
              }));
  std::printf("%-44s %8.3f ms\n", "2x cudaEventCreate+Destroy", medianMs([&] {
                cudaEvent_t a, c;
                cudaEventCreate(&a);
                cudaEventCreate(&c);
                cudaEventDestroy(a);
                cudaEventDestroy(c);
              }));
  std::printf("%-44s %8.3f ms\n", "std::async start + get (empty)",
              medianMs([&] { std::async(std::launch::async, [] {}).get(); }));
  std::printf("%-44s %8.3f ms\n", "workspaceBytes (validates)",
              medianMs([&] { (void)workspaceBytes(q); }));
  std::printf("%-44s %8.3f ms\n", "resolveRequest (map + 96 lattices)",
              medianMs([&] { (void)detail::resolveRequest(q, *model, true, cones.get()); }));
  std::printf("%-44s %8.3f ms\n", "prepareBeam",
              medianMs([&] { (void)detail::prepareBeam(b, g, *cones, *model); }));
  std::printf("%-44s %8.3f ms\n", "96 x makeLattice", medianMs([&] {
                for (const auto& d : cones->directions)
                  (void)makeLattice(g, normalized(Vec3{d.x, d.y, d.z}));
              }));
  for (int i = 0; i < 3; ++i) (void)computePhotonDose(q);
  std::vector<PhotonDoseResult> keep;
  std::printf("%-44s %8.3f ms\n", "computePhotonDose warm (back to back)",
              medianMs([&] { keep.push_back(computePhotonDose(q)); }));
  const PhotonDoseResult& r = keep.back();
  for (const KernelProfile& p : r.profiles)
    std::printf("  %-42s %8.3f ms  (%s)\n", p.kernel.c_str(), p.medianMs, p.variant.c_str());
  return 0;
}
