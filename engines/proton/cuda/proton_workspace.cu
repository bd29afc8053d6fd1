// The steps that fill the proton engine's GPU cache (proton_workspace.cuh): the SPR and its key,
// the table store, the beam slots and each beam's superposition inputs. Host code; uploads are
// enqueued on the run's stream (pageable host-to-device copies are staged by the driver at once,
// so the host vectors may change afterwards).
#include <algorithm>
#include <cstring>

#include "proton/cuda/proton_workspace.cuh"
#include "proton/prepare_cache.hpp"

namespace penumbra::proton::detail {

namespace {

bool sameBits(const double* a, const double* b, int n) {
  return std::memcmp(a, b, sizeof(double) * std::size_t(n)) == 0;
}

/// Equal sizes and bytes (the element types have no padding).
template <typename T>
bool sameContents(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <typename T>
void upload(DeviceBuffer<T>& d, const std::vector<T>& h, cudaStream_t s, double* bytes) {
  ensure(d, h.size());
  if (h.empty()) return;
  PENUMBRA_CUDA_CHECK(
      cudaMemcpyAsync(d.get(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  *bytes += double(h.size() * sizeof(T));
}

/// The same table: the same object (makeSprLut() shares its cached one), or equal contents.
bool sameLut(const std::shared_ptr<const std::vector<float>>& a,
             const std::shared_ptr<const std::vector<float>>& b) {
  return a == b || (a && b && sameContents(*a, *b));
}

std::shared_ptr<const void> ownerOf(const ProtonDoseRequest& q) {
  return q.spr ? std::shared_ptr<const void>(q.spr) : std::shared_ptr<const void>(q.ct);
}

}  // namespace

bool sameWepl(const WeplKey& a, const WeplKey& b) {
  const pb::BevGeometry &g = a.bev, &h = b.bev;
  return a.valid && b.valid && a.variant == b.variant && a.sprGeneration == b.sprGeneration &&
         sameBits(g.source, h.source, 3) && sameBits(g.u, h.u, 3) && sameBits(g.v, h.v, 3) &&
         sameBits(g.w, h.w, 3) && sameBits(&g.sad, &h.sad, 1) && g.nA == h.nA && g.nB == h.nB &&
         g.nD == h.nD && sameBits(&g.a0, &h.a0, 1) && sameBits(&g.b0, &h.b0, 1) &&
         sameBits(&g.da, &h.da, 1) && sameBits(&g.db, &h.db, 1) && sameBits(&g.d0, &h.d0, 1) &&
         sameBits(&g.dd, &h.dd, 1);
}

bool sprKeyMatches(const SprKey& k, const ResolvedRequest& r) {
  const ProtonDoseRequest& q = *r.request;
  if (!k.valid || k.owner.expired()) return false;
  const std::shared_ptr<const void> owner = ownerOf(q);
  if (k.owner.owner_before(owner) || owner.owner_before(k.owner)) return false;  // other owner
  const bool ct = !q.spr;
  const void* data = ct ? static_cast<const void*>(q.ct->data.data()) : q.spr->data.data();
  const std::size_t voxels = ct ? q.ct->data.size() : q.spr->data.size();
  return k.ct == ct && k.data == data && k.voxels == voxels &&
         identicalGrid(k.grid, ct ? q.ct->grid : q.spr->grid) && (!ct || sameLut(k.lut, r.sprLut));
}

void loadSpr(Workspace& W, const ResolvedRequest& r, cudaStream_t s, SprLoad& L) {
  const ProtonDoseRequest& q = *r.request;
  W.sprKey = SprKey{};  // invalid until the new SPR is on its way
  const Grid& g = q.spr ? q.spr->grid : q.ct->grid;
  const std::size_t n = g.voxelCount();
  ensure(W.dSpr, n);
  L.tUpload.begin(s);
  if (q.spr) {
    L.upload = std::make_unique<penumbra::cuda::HostUpload>(W.dSpr.get(), q.spr->data.data(),
                                                            n * sizeof(float), s);
    L.how = "float SPR";
    L.bytes = 4.0 * double(n);
  } else {
    const std::vector<float>& lut = *r.sprLut;
    L.dLut.allocate(lut.size());
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(L.dLut.get(), lut.data(), lut.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, s));
    L.dCt.allocate(n);
    L.upload = std::make_unique<penumbra::cuda::HostUpload>(L.dCt.get(), q.ct->data.data(),
                                                            n * sizeof(std::int16_t), s);
    L.how = "int16 CT, HU -> SPR on the GPU";
    L.bytes = 2.0 * double(n) + 4.0 * double(lut.size());
  }
  L.tUpload.end(s);
  if (!q.spr) {
    L.tConvert.begin(s);
    cuda::launchHuToSpr(L.dCt.get(), L.dLut.get(), W.dSpr.get(), n, s);
    L.tConvert.end(s);
  }
  L.how += L.upload->pageLocked() ? ", page-locked memcpy" : ", pageable memcpy";
  ++W.sprGeneration;
  SprKey k;
  k.owner = ownerOf(q);
  k.ct = !q.spr;
  k.data = k.ct ? static_cast<const void*>(q.ct->data.data()) : q.spr->data.data();
  k.voxels = n;
  if (k.ct) k.lut = r.sprLut;
  k.grid = g;
  k.valid = true;
  W.sprKey = std::move(k);
}

std::vector<std::vector<cuda::DevLayer>> stageTables(TableStore& T, const ResolvedRequest& r,
                                                     cudaStream_t s, double* bytes) {
  std::vector<std::shared_ptr<const LayerTable>> missing;
  auto collectMissing = [&] {
    missing.clear();
    for (const PreparedBeam& b : r.beams) {
      if (b.layout.empty) continue;
      for (const PreparedLayer& l : b.layers) {
        const LayerTable* t = l.table.get();
        if (!T.offset.count(t) &&
            std::none_of(missing.begin(), missing.end(), [&](const auto& m) { return m.get() == t; }))
          missing.push_back(l.table);
      }
    }
  };
  collectMissing();
  std::size_t uploadFrom = T.idd.size();
  if (T.held.size() + missing.size() > kMaxCachedTables) {  // start again from this run's tables
    T.offset.clear();
    T.held.clear();
    T.idd.clear();
    T.sigma.clear();
    ++T.generation;
    collectMissing();
    uploadFrom = 0;
  }
  for (const auto& t : missing) {
    T.offset.emplace(t.get(), int(T.idd.size()));
    T.held.push_back(t);
    for (double v : t->idd) T.idd.push_back(float(v));
    for (double v : t->sigmaMm) T.sigma.push_back(float(v));
  }
  if (T.dIdd.size() < T.idd.size()) {  // room for as much again: new energies come in batches
    T.dIdd.allocate(2 * T.idd.size());
    T.dSigma.allocate(2 * T.sigma.size());
    uploadFrom = 0;
  }
  const std::size_t n = T.idd.size() - uploadFrom;
  if (n > 0) {
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(T.dIdd.get() + uploadFrom, T.idd.data() + uploadFrom,
                                        n * sizeof(float), cudaMemcpyHostToDevice, s));
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(T.dSigma.get() + uploadFrom, T.sigma.data() + uploadFrom,
                                        n * sizeof(float), cudaMemcpyHostToDevice, s));
    *bytes += 8.0 * double(n);
  }
  std::vector<std::vector<cuda::DevLayer>> layers(r.beams.size());
  for (std::size_t b = 0; b < r.beams.size(); ++b) {
    if (r.beams[b].layout.empty) continue;
    for (const PreparedLayer& l : r.beams[b].layers)
      layers[b].push_back({T.offset.at(l.table.get()), int(l.table->idd.size()),
                           float(1.0 / l.table->dzMm), 0});
  }
  return layers;
}

double perBeamSlotBytes(const ResolvedRequest& r) {
  double bytes = 0;
  // Spot and layer counts from the request: the beams may hold their layouts only yet
  // (ResolvedRequest::prepareBeams).
  for (std::size_t i = 0; i < r.beams.size(); ++i) {
    const PreparedBeam& b = r.beams[i];
    const double spots = double(r.request->beams[i].spotCount());
    const double layers = double(r.request->beams[i].layers.size());
    bytes += 8.0 * double(b.layout.bevSamples()) + 16.0 * spots +
             double(sizeof(cuda::DevLayer)) * layers +
             (b.tileListsOnHost
                  ? 4.0 * double(b.tileLayerBegin.size() + b.tileSpots.size())
                  : 4.0 * (double(b.layout.tileCount()) * layers + 1.0 +
                           1.25 * double(b.layout.tileListBound)) +
                        16.0 * spots + double(sizeof(cuda::TileListLayer)) * layers);
  }
  return bytes;
}

std::vector<BeamSlot*> assignSlots(Workspace& W, const ResolvedRequest& r, DdaVariant variant,
                                   bool perBeam, std::vector<std::unique_ptr<BeamSlot>>& unused) {
  std::vector<std::unique_ptr<BeamSlot>> old = std::move(W.beams);
  W.beams.clear();
  std::vector<BeamSlot*> slotOf(r.beams.size(), nullptr);
  auto takeOld = [&](std::size_t i) {
    W.beams.push_back(std::move(old[i]));
    old.erase(old.begin() + std::ptrdiff_t(i));
    return W.beams.back().get();
  };
  if (!perBeam) {
    BeamSlot* shared = old.empty() ? nullptr : takeOld(0);
    if (!shared) {
      W.beams.push_back(std::make_unique<BeamSlot>());
      shared = W.beams.back().get();
    }
    shared->invalidate();
    for (std::size_t b = 0; b < r.beams.size(); ++b)
      if (!r.beams[b].layout.empty) slotOf[b] = shared;
  } else {
    // First the slots whose WEPL a beam can reuse, then free ones for the rest.
    for (std::size_t b = 0; b < r.beams.size(); ++b) {
      if (r.beams[b].layout.empty) continue;
      const WeplKey key{r.beams[b].layout.bev, variant, W.sprGeneration, true};
      for (std::size_t i = 0; i < old.size(); ++i)
        if (sameWepl(old[i]->wepl, key)) {
          slotOf[b] = takeOld(i);
          break;
        }
    }
    for (std::size_t b = 0; b < r.beams.size(); ++b) {
      if (r.beams[b].layout.empty || slotOf[b]) continue;
      if (!old.empty()) {
        slotOf[b] = takeOld(0);
        slotOf[b]->invalidate();
      } else {
        W.beams.push_back(std::make_unique<BeamSlot>());
        slotOf[b] = W.beams.back().get();
      }
    }
  }
  for (auto& s : old) unused.push_back(std::move(s));
  return slotOf;
}

namespace {

/// The beam's tile lists built on the GPU from its layout, layers and spot positions.
void buildTileLists(BeamSlot& S, const PreparedBeam& beam, cudaStream_t s, double* bytes,
                    TileListBuilds& builds) {
  const BeamLayout& L = beam.layout;
  std::vector<double2> pos(beam.spotA.size());
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = make_double2(beam.spotA[i], beam.spotB[i]);
  std::vector<cuda::TileListLayer> layers(beam.layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l)
    layers[l] = {beam.layers[l].spotBegin, beam.layers[l].spotEnd, L.cullRadiusIsoMm[l]};
  upload(S.dSpotPos, pos, s, bytes);
  upload(S.dTileLayers, layers, s, bytes);
  const long long cells = (long long)L.tileCount() * (long long)layers.size();
  ensure(S.dTileBegin, std::size_t(cells) + 1);
  ensure(S.dTileScan, cuda::tileListScanBytes(cells));
  // A quarter to spare when the list buffer grows: the bound moves a little with every
  // isocentre drag, and a reallocation (cudaFree) would wait for the GPU.
  if (S.dTileSpots.size() < std::max<std::size_t>(L.tileListBound, 1))
    S.dTileSpots.allocate(std::max<std::size_t>(L.tileListBound + L.tileListBound / 4, 1));
  cuda::TileListArgs A{};
  A.g = L.bev;
  A.tilesA = L.tilesA;
  A.tilesB = L.tilesB;
  A.nLayers = int(layers.size());
  A.spots = S.dSpotPos.get();
  A.layers = S.dTileLayers.get();
  A.begin = S.dTileBegin.get();
  A.tileSpots = S.dTileSpots.get();
  A.capacity = (long long)S.dTileSpots.size();
  A.scanTemp = S.dTileScan.get();
  A.scanTempBytes = S.dTileScan.size();
  builds.times.begin(s);
  cuda::launchTileLists(A, s, builds.stats);
  builds.times.end(s);
}

}  // namespace

bool stageInputs(BeamSlot& S, const PreparedBeam& beam, std::vector<cuda::DevLayer> layers,
                 std::uint64_t tableGeneration, double cutoffSigmas, cudaStream_t s,
                 double* bytes, TileListBuilds& builds) {
  std::vector<float4> spots(beam.spotA.size());
  for (std::size_t i = 0; i < spots.size(); ++i)
    spots[i] = make_float4(float(beam.spotA[i]), float(beam.spotB[i]), float(beam.spotW[i]), 0.f);
  SuperpositionInputs& in = S.inputs;
  bool same = std::memcmp(&in.cutoffSigmas, &cutoffSigmas, sizeof cutoffSigmas) == 0 &&
              in.tableGeneration == tableGeneration;
  if (!sameContents(in.layers, layers)) {
    upload(S.dLayers, layers, s, bytes);
    in.layers = std::move(layers);
    same = false;
  }
  if (!sameContents(in.spots, spots)) {  // a weights-only edit stops here
    upload(S.dSpots, spots, s, bytes);
    in.spots = std::move(spots);
    same = false;
  }
  // By the lists' id, not their contents (megabytes for hn-2field: comparing and keeping a copy
  // took ~0.8 ms of an isocentre edit); lists built otherwise (id 0) are always uploaded.
  if (beam.tileListsId == 0 || in.tileListsId != beam.tileListsId) {
    in.tileListsId = 0;  // invalid until both are up
    if (beam.tileListsOnHost) {
      upload(S.dTileBegin, beam.tileLayerBegin, s, bytes);
      upload(S.dTileSpots, beam.tileSpots, s, bytes);
    } else {
      buildTileLists(S, beam, s, bytes, builds);
    }
    in.tileListsId = beam.tileListsId;
    same = false;
  }
  in.cutoffSigmas = cutoffSigmas;
  in.tableGeneration = tableGeneration;
  return same;
}

std::pair<std::vector<int>, std::vector<int>> deviceTileListsForTests(const PreparedBeam& beam) {
  PENUMBRA_REQUIRE(!beam.layout.empty, InvalidArgument, "tile lists: the beam misses the dose grid");
  penumbra::cuda::Stream stream;
  BeamSlot S;
  const std::size_t cells = beam.layout.tileCount() * beam.layers.size();
  ensure(S.dTileBegin, cells + 1);
  S.dTileSpots.allocate(std::max<std::size_t>(beam.layout.tileListBound + 16, 1));
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(S.dTileBegin.get(), 0xFF, S.dTileBegin.size() * sizeof(int), stream.s));
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(S.dTileSpots.get(), 0xFF, S.dTileSpots.size() * sizeof(int), stream.s));
  double bytes = 0;
  TileListBuilds builds;
  buildTileLists(S, beam, stream.s, &bytes, builds);
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream.s));
  std::vector<int> begin(cells + 1);
  PENUMBRA_CUDA_CHECK(cudaMemcpy(begin.data(), S.dTileBegin.get(), begin.size() * sizeof(int),
                                 cudaMemcpyDeviceToHost));
  const int n = begin.back();
  PENUMBRA_REQUIRE(n >= 0 && std::size_t(n) <= S.dTileSpots.size(), Internal,
                   "tile lists: the GPU build's length is outside its buffer");
  std::vector<int> spots(static_cast<std::size_t>(n));
  if (n > 0)
    PENUMBRA_CUDA_CHECK(cudaMemcpy(spots.data(), S.dTileSpots.get(), spots.size() * sizeof(int),
                                   cudaMemcpyDeviceToHost));
  return {std::move(begin), std::move(spots)};
}

}  // namespace penumbra::proton::detail
