#pragma once
// The KernelProfile of one kernel kind of an engine's CUDA backend (photon and proton dose): the
// launcher reports the kernel, its launch shape and its traffic model (KernelStats), LaunchTimes
// (stream_event.cuh) the summed time, and the kernel itself its registers, shared memory and
// occupancy (device_attributes.cuh).
#include <string>

#include "core/cuda/device_attributes.cuh"
#include "core/kernel_profile.hpp"

namespace penumbra::cuda {

/// Attributes of one kernel kind, summed over its launches (beams, directions, batches).
struct KernelStats {
  const void* fn = nullptr;     ///< the kernel's host stub; null for copies and fills
  int grid = 0, block = 0;      ///< blocks and threads per block of a launch
  double bytes = 0, flops = 0;  ///< the engine's traffic model
};

/// Profile of a kernel kind on `device`: `ms` is the sum of its `launches` launches in one run.
inline KernelProfile launchProfile(const std::string& kernel, const std::string& variant,
                                   const KernelStats& st, double ms, int launches,
                                   const std::string& device) {
  KernelProfile p;
  p.device = device;
  p.kernel = kernel;
  p.variant = variant;
  p.gridX = st.grid;
  p.blockX = st.block;
  p.backend = "cuda";
  if (st.fn) describeKernel(st.fn, st.block, p);
  p.repetitions = launches;
  p.medianMs = p.minMs = ms;  // one run: the sum of this kernel kind's launches
  p.bytes = st.bytes;
  p.flops = st.flops;
  return p;
}

}  // namespace penumbra::cuda
