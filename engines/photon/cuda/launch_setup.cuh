#pragma once
// Private part of photon_dose_cuda.cu (included there only, inside its anonymous namespace,
// after direction_plan.cuh): the memory check of a run, and the constants of one beam's TERMA
// launch and of one transport launch, filled on the host from the prepared beam and the
// direction plans.

/// Throws OutOfMemory, before anything is allocated, when the run's minimum does not fit in
/// the free GPU memory plus the workspace's own buffers (`workspaceBytes`, reused); returns
/// the atomic-free slot budget per launch (0 for the atomic deposit).
double checkDeviceMemory(const ResolvedRequest& r, std::size_t workspaceBytes, bool ctOnGpu,
                         bool atomicFree, int termaBlocks) {
  const Grid& g = r.grid;
  const std::size_t n = g.voxelCount(), nDir = r.cones.directions.size();
  std::size_t mapMax = 0, blocksMax = 0;
  for (const PreparedBeam& b : r.beams) {
    mapMax = std::max(mapMax, b.openFraction.size());
    std::size_t blocks = 0;
    for (const TransportLattice& L : b.lattices) {
      blocks += std::size_t((L.lines0() + pc::kLinesX - 1) / pc::kLinesX) *
                std::size_t((L.lines1() + pc::kLinesY - 1) / pc::kLinesY);
    }
    blocksMax = std::max(blocksMax, blocks);
  }
  std::size_t freeBytes = 0, totalBytes = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  // The workspace's buffers are reused (or regrown) by this run: they count as available.
  const double available = double(freeBytes) + double(workspaceBytes);
  const double volBytes = 4.0 * double(n);
  const double baseBytes =
      3 * volBytes + (ctOnGpu ? 2.0 * double(n) + 4.0 * 65536 : 0.0) + 4.0 * double(mapMax) +
      double(sizeof(pc::Partial)) * double(std::max<std::size_t>(termaBlocks, blocksMax)) +
      double(sizeof(pc::Partial)) * double(r.beams.size() * (nDir + 1)) +
      (atomicFree ? 16.0 * double(nDir) * double(g.dims[0] + g.dims[1] + g.dims[2]) : 0.0) +
      double(n) / 512 + double(g.dims[0] + g.dims[1] + g.dims[2]) * 64;  // TERMA bricks
  // AtomicFree minimum: one direction whose shadow box is the whole volume (<= 3 pattern
  // segments per slice).
  const double minSlotBytes = atomicFree ? 3 * volBytes : 0.0;
  if (baseBytes + minSlotBytes > 0.95 * available)
    throw Error(ErrorCode::OutOfMemory,
                "photon dose (GPU) needs at least " + formatBytes(baseBytes + minSlotBytes) +
                    " on the GPU (density, TERMA, dose " + formatBytes(3 * volBytes) +
                    (atomicFree ? ", atomic-free slot buffers " + formatBytes(minSlotBytes)
                                : std::string()) +
                    ") but " + formatBytes(available) + " are free",
                __FILE__, __LINE__);
  // Slot buffers of as many directions per launch as fit in the budget: half of what is left,
  // at most kMaxSlotBytes (photon_backend.hpp), at least one direction over the whole volume.
  return atomicFree ? std::max(minSlotBytes, std::min(kMaxSlotBytes, 0.5 * (available - baseBytes)))
                    : 0.0;
}

/// The TERMA kernel's constants for `beam` on grid g: frame, source, open-field map (with the
/// box of its open pixels for the kernel's quick reject), spectrum and softening.
pc::TermaConst termaConstOf(const ResolvedRequest& r, const PreparedBeam& beam, const Grid& g,
                            const dda::Geometry& geo) {
  pc::TermaConst tc{};
  tc.geo = geo;
  for (int a = 0; a < 3; ++a) {
    tc.source[a] = beam.source[a];
    tc.u[a] = beam.u[a];
    tc.v[a] = beam.v[a];
    tc.w[a] = beam.w[a];
  }
  tc.sad = beam.sadMm;
  voxelFootprint(beam, g, tc.footU, tc.footV);
  tc.mapU0 = beam.mapU0;
  tc.mapV0 = beam.mapV0;
  tc.mapPitch = beam.mapPitch;
  tc.mapNu = beam.mapNu;
  tc.mapNv = beam.mapNv;
  tc.openLo[0] = tc.openLo[1] = INT_MAX;
  tc.openHi[0] = tc.openHi[1] = INT_MIN;
  for (int j = 0; j < beam.mapNv; ++j)
    for (int i = 0; i < beam.mapNu; ++i)
      if (beam.openFraction[std::size_t(j) * std::size_t(beam.mapNu) + std::size_t(i)] > 0) {
        tc.openLo[0] = std::min(tc.openLo[0], i), tc.openHi[0] = std::max(tc.openHi[0], i);
        tc.openLo[1] = std::min(tc.openLo[1], j), tc.openHi[1] = std::max(tc.openHi[1], j);
      }
  const Spectrum& sp = r.model->spectrum;
  tc.nE = int(sp.energyMeV.size());
  for (int e = 0; e < tc.nE; ++e) {
    tc.released[e] = float(sp.fluence[std::size_t(e)] * sp.energyMeV[std::size_t(e)] *
                           sp.muRho[std::size_t(e)]);
    tc.muMm[e] = float(sp.muRho[std::size_t(e)] / 10.0);
  }
  tc.softeningPerDeg = r.model->offAxisSofteningPerDeg;
  tc.voxelCm3 = g.voxelVolumeMm3() / 1000.0;
  return tc;
}

/// The directions of one transport launch and what they need on the device.
struct TransportBatch {
  std::vector<pc::LineDirection> lines;
  std::vector<pc::GatherDirection> gathers;  ///< atomic-free only
  std::vector<pc::SliceEntry> sliceTable;    ///< atomic-free only: every direction's slices
  int blocks = 0;
  long long slotBase = 0;  ///< atomic-free slot entries of the launch
};

/// The next launch's directions, from order[next] on (ConeSet order; `next` advances past
/// them): at most kMaxDirectionsPerLaunch, and for the atomic-free deposit as many as their
/// slot storage fits in slotBudget bytes (at least one). `ts` holds the TERMA box.
TransportBatch nextTransportBatch(const ResolvedRequest& r, const PreparedBeam& beam,
                                  const std::vector<DirectionPlan>& plans,
                                  const std::vector<int>& order, std::size_t& next,
                                  const pc::Partial& ts, bool atomicFree, double slotBudget) {
  TransportBatch b;
  std::vector<pc::LineDirection>& lines = b.lines;
  std::vector<pc::GatherDirection>& gathers = b.gathers;
  std::vector<pc::SliceEntry>& sliceTable = b.sliceTable;
  int& blocks = b.blocks;
  long long& slotBase = b.slotBase;
  int nb[3];
  pc::brickDims(r.grid.dims.data(), nb);
  const int brickStride[3] = {1, nb[0], nb[0] * nb[1]};
  while (next < order.size() && int(lines.size()) < pc::kMaxDirectionsPerLaunch) {
    const DirectionPlan& p = plans[std::size_t(order[next])];
    const long long slotElems = p.slotElems;
    if (atomicFree && !lines.empty() && 4.0 * double(slotBase + slotElems) > slotBudget) break;
    const TransportLattice& L = *p.L;
    const ConeDirection& cd = r.cones.directions[std::size_t(p.cone)];
    const ConeBand& band = r.cones.bands[std::size_t(cd.band)];
    pc::LineDirection D{};
    for (int a = 0; a < 3; ++a) {
      D.tNext[a] = p.start.tNext[a];
      D.tDelta[a] = p.start.tDelta[a];
      D.voxel[a] = p.start.voxel[a];
      D.step[a] = p.start.step[a];
    }
    D.length = p.start.length;
    D.bounds = L.bounds();
    D.strideA = int(L.stride[L.dominant]);
    D.stride0 = int(L.stride[L.lateral0]);
    D.stride1 = int(L.stride[L.lateral1]);
    D.rect0Lo = p.rect0Lo;
    D.rect1Lo = p.rect1Lo;
    D.rectW0 = p.rect0Hi - p.rect0Lo + 1;
    D.rectW1 = p.rect1Hi - p.rect1Lo + 1;
    D.tiles0 = (D.rectW0 + pc::kLinesX - 1) / pc::kLinesX;
    D.blockBegin = blocks;
    D.boxALo = ts.lo[L.dominant];
    D.boxAHi = ts.hi[L.dominant];
    D.box0Lo = ts.lo[L.lateral0];
    D.box0Hi = ts.hi[L.lateral0];
    D.box1Lo = ts.lo[L.lateral1];
    D.box1Hi = ts.hi[L.lateral1];
    D.brickA = brickStride[L.dominant];
    D.brick0 = brickStride[L.lateral0];
    D.brick1 = brickStride[L.lateral1];
    D.amp0 = float(band.A * cd.weight / 10.0);
    D.mu0 = float(band.a / 10.0);
    D.amp1 = float(band.B * cd.weight / 10.0);
    D.mu1 = float(band.b / 10.0);
    D.doseScale = float(beam.gyPerRawDose / (L.sliceChordMm / 10.0));
    D.crossCm2 = float(L.crossSectionMm2 / 100.0);
    D.slotBase = slotBase;
    D.nBase = p.nBase;
    D.area =
        (p.hi[L.lateral0] - p.lo[L.lateral0] + 1) * (p.hi[L.lateral1] - p.lo[L.lateral1] + 1);
    D.lat0Lo = p.lo[L.lateral0];
    D.lat1Lo = p.lo[L.lateral1];
    D.ext0 = p.hi[L.lateral0] - p.lo[L.lateral0] + 1;
    lines.push_back(D);
    if (atomicFree) {
      pc::GatherDirection G{};
      G.A = L.dominant;
      G.L0 = L.lateral0;
      G.L1 = L.lateral1;
      for (int c = 0; c < 3; ++c) G.lo[c] = p.lo[c], G.hi[c] = p.hi[c];
      G.sliceBase = int(sliceTable.size());
      G.nBase = D.nBase;
      G.area = D.area;
      G.ext0 = D.ext0;
      G.slotBase = slotBase;
      gathers.push_back(G);
      sliceTable.insert(sliceTable.end(), p.slices.begin(), p.slices.end());
    }
    blocks += p.blocks();
    slotBase += slotElems;
    ++next;
  }
  return b;
}
