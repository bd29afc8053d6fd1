#pragma once
// What the CUDA backend of the proton engine keeps between calls (proton_dose.hpp, "GPU cache
// across calls"), and the steps that fill it (proton_workspace.cu): the SPR with the key of the
// volume it came from; the depth-dose and sigma tables of every energy used so far; one slot per
// beam of the last run - its WEPL and BEV dose with the keys of what they were computed from,
// and the superposition's inputs; the patient dose buffer; the stream; and page-locked host
// memory for the next results. One Workspace lives in detail::gpuCacheSlot() while idle; a run
// takes it out (exclusive use) and puts it back at the end (proton_dose_cuda.cu).
#include <cuda_runtime.h>

#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/host_output.cuh"
#include "core/cuda/host_upload.cuh"
#include "core/cuda/stream_event.cuh"
#include "proton/cuda/proton_cuda.cuh"
#include "proton/proton_backend.hpp"

namespace penumbra::proton::detail {

template <typename T>
using DeviceBuffer = penumbra::cuda::DeviceBuffer<T>;
using penumbra::cuda::HostOutput;

/// Grows (never shrinks) a buffer to at least n elements; its contents are lost when it grows.
template <typename T>
void ensure(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < n) b.allocate(n);
}

/// Results made ahead on helper threads. Each takes ~5 ms for hn-2field's 24 MB (zero fill with
/// huge pages plus page-locking, scaled from 14 ms for 64 MiB on the H200 machine), longer than
/// a warm call; two in flight keep back-to-back calls from waiting for them. Doses over 64 MiB
/// (slower calls, and more pinned memory each) get one.
inline std::size_t outputsAhead(std::size_t voxels) {
  return voxels * sizeof(float) <= (std::size_t(64) << 20) ? 2 : 1;
}
/// Distinct energies whose tables stay on the GPU; beyond that the store starts again from the
/// run's own (a table is ~3 000 floats x 2, so this is ~6 MB at most).
inline constexpr std::size_t kMaxCachedTables = 256;

/// Identity of the SPR on the GPU: the input volume (owner, data, size, grid) and, for a CT,
/// the HU -> SPR table it went through.
struct SprKey {
  std::weak_ptr<const void> owner;  ///< owner identity; expired once the volume is gone
  const void* data = nullptr;
  std::size_t voxels = 0;
  bool ct = false;
  std::shared_ptr<const std::vector<float>> lut;  ///< CT: the 65536 entries (by pointer, else in full)
  Grid grid;
  bool valid = false;
};

/// What a beam slot's WEPL was traced from.
struct WeplKey {
  pb::BevGeometry bev{};
  DdaVariant variant = DdaVariant::BranchFree;
  std::uint64_t sprGeneration = 0;  ///< Workspace::sprGeneration when traced
  bool valid = false;
};
/// Bit-for-bit equality of every field (both valid).
bool sameWepl(const WeplKey& a, const WeplKey& b);

/// A beam's superposition inputs as the device has them (host copies, compared with the next
/// run's to decide what to upload and whether the beam's BEV dose still holds).
struct SuperpositionInputs {
  std::vector<cuda::DevLayer> layers;  ///< table offsets into the TableStore
  std::vector<float4> spots;           ///< (a, b, weight, 0)
  std::uint64_t tileListsId = 0;  ///< PreparedBeam::tileListsId of the lists on the GPU (0: none)
  double cutoffSigmas = 0;
  std::uint64_t tableGeneration = 0;  ///< the TableStore's, which the offsets refer to
};

/// One beam's device data.
struct BeamSlot {
  WeplKey wepl;               ///< what dWepl holds
  bool bevValid = false;      ///< dBev is the superposition of dWepl with `inputs`
  SuperpositionInputs inputs;
  DeviceBuffer<float> dWepl, dBev;
  DeviceBuffer<cuda::DevLayer> dLayers;
  DeviceBuffer<float4> dSpots;
  DeviceBuffer<int> dTileBegin, dTileSpots;
  /// Inputs of the tile lists' GPU build (TileLists::OnDevice): positions in double, layers.
  DeviceBuffer<double2> dSpotPos;
  DeviceBuffer<cuda::TileListLayer> dTileLayers;
  DeviceBuffer<unsigned char> dTileScan;  ///< the lists' scan scratch

  void invalidate() {
    wepl = {};
    bevValid = false;
    inputs = {};
  }
  std::size_t deviceBytes() const {
    return (dWepl.size() + dBev.size()) * sizeof(float) + dLayers.size() * sizeof(cuda::DevLayer) +
           dSpots.size() * sizeof(float4) + (dTileBegin.size() + dTileSpots.size()) * sizeof(int) +
           dSpotPos.size() * sizeof(double2) + dTileLayers.size() * sizeof(cuda::TileListLayer) +
           dTileScan.size();
  }
};

/// Depth-dose and sigma tables of the energies used so far, concatenated as float. The tables
/// are immutable machine data (ProtonMachine's cache); `held` keeps the keys' addresses alive.
struct TableStore {
  std::map<const LayerTable*, int> offset;
  std::vector<std::shared_ptr<const LayerTable>> held;
  std::vector<float> idd, sigma;  ///< what the device buffers hold, in order
  DeviceBuffer<float> dIdd, dSigma;
  std::uint64_t generation = 1;  ///< bumped when the store starts again (offsets change meaning)
};

struct Workspace {
  int device = -1;
  penumbra::cuda::Stream stream;
  SprKey sprKey;
  std::uint64_t sprGeneration = 0;  ///< counts the SPR volumes loaded (WEPL keys refer to it)
  DeviceBuffer<float> dSpr;
  TableStore tables;
  std::vector<std::unique_ptr<BeamSlot>> beams;  ///< slots of the last run's beams
  DeviceBuffer<float> dDose;
  std::deque<std::future<HostOutput>> nextOutputs;  ///< of nextOutputSize floats each
  std::size_t nextOutputSize = 0;

  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    for (auto& f : nextOutputs)
      if (f.valid()) f.wait();  // their blocks go back to the voxel pool
  }
  std::size_t deviceBytes() const {
    std::size_t b = (dSpr.size() + tables.dIdd.size() + tables.dSigma.size() + dDose.size()) *
                    sizeof(float);
    for (const auto& s : beams) b += s->deviceBytes();
    return b;
  }
};

// ---- the steps (proton_workspace.cu) ------------------------------------------------------

/// The SPR of a request while it is uploaded: the staging buffers live until the run ends (a
/// cudaFree would wait for the copy), the upload's pages until finish().
struct SprLoad {
  penumbra::cuda::LaunchTimes tUpload, tConvert;
  DeviceBuffer<std::int16_t> dCt;
  DeviceBuffer<float> dLut;
  std::unique_ptr<penumbra::cuda::HostUpload> upload;
  std::string how;
  double bytes = 0;
};
/// Whether the workspace's SPR is the one this request needs.
bool sprKeyMatches(const SprKey& k, const ResolvedRequest& r);
/// Uploads the request's SPR (or CT, converted on the GPU through r.sprLut) into W.dSpr on `s`,
/// and gives it a new generation and the request's key.
void loadSpr(Workspace& W, const ResolvedRequest& r, cudaStream_t s, SprLoad& load);

/// The layers of every beam (empty for an empty beam) with their tables' offsets in W.tables,
/// uploading the tables the store lacks on `s`; adds the bytes uploaded to *bytes.
std::vector<std::vector<cuda::DevLayer>> stageTables(TableStore& T, const ResolvedRequest& r,
                                                     cudaStream_t s, double* bytes);

/// Device bytes the beams of `r` need in slots of their own (WEPL, BEV dose, inputs).
double perBeamSlotBytes(const ResolvedRequest& r);
/// Gives every non-empty beam a slot: the last run's slot whose WEPL key it matches, else a free
/// slot (buffers reused, keys dropped) or a new one. Slots left over move to `unused` (freed
/// once the run has synchronised). perBeam false: every beam gets the same slot, emptied (the
/// low-memory way: no reuse across calls).
std::vector<BeamSlot*> assignSlots(Workspace& W, const ResolvedRequest& r, DdaVariant variant,
                                   bool perBeam, std::vector<std::unique_ptr<BeamSlot>>& unused);

/// The GPU build of tile lists, summed over a run's beams (for its profile row).
struct TileListBuilds {
  penumbra::cuda::LaunchTimes times;
  cuda::KernelStats stats;
};

/// Brings the slot's superposition inputs to those of `beam` on `s`, uploading only the parts
/// that differ, and building the tile lists on the GPU when the beam left them to it; adds the
/// bytes uploaded to *bytes. Returns true when nothing differed.
bool stageInputs(BeamSlot& slot, const PreparedBeam& beam, std::vector<cuda::DevLayer> layers,
                 std::uint64_t tableGeneration, double cutoffSigmas, cudaStream_t s,
                 double* bytes, TileListBuilds& builds);

}  // namespace penumbra::proton::detail
