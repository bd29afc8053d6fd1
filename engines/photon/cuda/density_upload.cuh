#pragma once
// Private part of photon_dose_cuda.cu (included there only, inside its anonymous namespace):
// the density on the GPU - the clamp and HU -> RED kernels, the page-locked upload from
// caller memory (core/cuda/host_upload.cuh), and the key that says whether the cached density
// is the one a request needs.

constexpr int kDensityBlock = 256;

/// The host clamp of resolveDensity (photon_dose.cpp), in place: the same floats.
__global__ void __launch_bounds__(kDensityBlock)
    clampDensityKernel(float* __restrict__ red, int n) {
  const int v = blockIdx.x * kDensityBlock + threadIdx.x;
  if (v >= n) return;
  const float d = red[v];
  if (!(d >= kMinDensity)) red[v] = kMinDensity;  // also catches NaN
}

/// CT -> RED through huToRedTable() (the table the CPU path reads), then the clamp.
__global__ void __launch_bounds__(kDensityBlock)
    huToRedKernel(const std::int16_t* __restrict__ hu, const float* __restrict__ lut,
                  float* __restrict__ red, int n) {
  const int v = blockIdx.x * kDensityBlock + threadIdx.x;
  if (v >= n) return;
  const float d = __ldg(&lut[int(hu[v]) + 32768]);
  red[v] = d >= kMinDensity ? d : kMinDensity;
}

/// The page-locked upload from caller memory (core/cuda/host_upload.cuh, included by
/// photon_dose_cuda.cu outside this anonymous namespace).
using penumbra::cuda::HostUpload;

/// Whether the workspace's density is the one this request needs.
bool densityKeyMatches(const DensityKey& k, const ResolvedRequest& r) {
  const PhotonDoseRequest& q = *r.request;
  if (!k.valid || !r.densityDeferred || k.owner.expired()) return false;
  const std::shared_ptr<const void> owner =
      q.density ? std::shared_ptr<const void>(q.density) : std::shared_ptr<const void>(q.ct);
  if (k.owner.owner_before(owner) || owner.owner_before(k.owner)) return false;  // other owner
  const bool ct = !q.density;
  const void* data = ct ? static_cast<const void*>(q.ct->data.data()) : q.density->data.data();
  const std::size_t voxels = ct ? q.ct->data.size() : q.density->data.size();
  return k.ct == ct && k.data == data && k.voxels == voxels &&
         identicalGrid(k.input, ct ? q.ct->grid : q.density->grid) &&
         identicalGrid(k.dose, r.grid) && (!ct || k.hlut == r.hlut.points());
}

DensityKey densityKeyOf(const ResolvedRequest& r) {
  const PhotonDoseRequest& q = *r.request;
  DensityKey k;
  k.ct = !q.density;
  k.owner = k.ct ? std::shared_ptr<const void>(q.ct) : std::shared_ptr<const void>(q.density);
  k.data = k.ct ? static_cast<const void*>(q.ct->data.data()) : q.density->data.data();
  k.voxels = k.ct ? q.ct->data.size() : q.density->data.size();
  if (k.ct) k.hlut = r.hlut.points();
  k.input = k.ct ? q.ct->grid : q.density->grid;
  k.dose = r.grid;
  k.valid = true;
  return k;
}
