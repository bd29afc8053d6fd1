#pragma once
// The plan objective on the GPU (objective.hpp for the terms). Laid out for two passes:
//  - the residual r = df/dd, per voxel of the union of the structures: each voxel gathers its
//    terms in the CPU's order (structures, then their terms), so r is bit for bit the CPU's
//    r for the same dose, and no two threads write one voxel (no atomics);
//  - f and the curvature q^T H q, per term: a fixed grid of blocks sums the term's voxels in a
//    fixed order (tree in shared memory), one thread sums the blocks and the terms in the CPU's
//    order. Deterministic: the same dose gives the same f on every run.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "optimise/objective.hpp"

namespace penumbra::optimise::detail {

/// Blocks per term in the f and curvature sums (fixed: determinism does not depend on timing).
inline constexpr int kTermBlocks = 64;
inline constexpr int kReduceThreads = 256;

struct DeviceTerm {
  int type;           // TermType
  double level;       // Gy
  double c;           // weight / N (f and r)
  double curvCoef;    // 2 weight / N (curvature), as the CPU computes it
  std::int64_t begin, end;  // the structure's voxels in DeviceObjective::voxels
};

class DeviceObjective {
 public:
  explicit DeviceObjective(const PlanObjective& objective) {
    std::vector<DeviceTerm> terms;
    std::vector<std::int32_t> voxels;
    std::vector<std::int32_t> unionVoxels;
    // Terms of each voxel, in structure then term order (the CPU's accumulation order): a
    // counting sort on the voxel index, filled in that order (linear in the voxel-term pairs,
    // 3.7e6 on hn-2field, where a stable sort of the pairs was part of every Optimise's setup).
    std::int64_t maxVoxel = -1;
    for (const StructureObjective& s : objective.structures())
      for (std::int64_t v : s.voxels) maxVoxel = std::max(maxVoxel, v);
    std::vector<std::int32_t> cursor(std::size_t(maxVoxel + 1), 0);  // terms per voxel, then positions
    for (const StructureObjective& s : objective.structures()) {
      const double invN = 1.0 / double(s.voxels.size());
      const std::int64_t begin = std::int64_t(voxels.size());
      for (std::int64_t v : s.voxels) {
        voxels.push_back(std::int32_t(v));
        cursor[std::size_t(v)] += std::int32_t(s.terms.size());
      }
      for (const ObjectiveTerm& t : s.terms)
        terms.push_back(DeviceTerm{int(t.type), t.levelGy, t.weight * invN,
                                   2 * t.weight * invN, begin, std::int64_t(voxels.size())});
    }
    std::vector<std::int32_t> ptr{0}, termIds;
    for (std::size_t v = 0; v < cursor.size(); ++v) {
      if (cursor[v] == 0) continue;
      unionVoxels.push_back(std::int32_t(v));
      const std::int32_t n = cursor[v];
      cursor[v] = ptr.back();
      ptr.push_back(ptr.back() + n);
    }
    termIds.resize(std::size_t(ptr.back()));
    std::int32_t id = 0;
    for (const StructureObjective& s : objective.structures())
      for (std::size_t k = 0; k < s.terms.size(); ++k, ++id)
        for (std::int64_t v : s.voxels) termIds[std::size_t(cursor[std::size_t(v)]++)] = id;
    termCount = int(terms.size());
    unionCount = std::int64_t(unionVoxels.size());
    hostTerms = terms;
    if (!terms.empty()) {
      this->terms.allocate(terms.size() * sizeof(DeviceTerm));
      this->terms.upload(reinterpret_cast<const std::uint8_t*>(terms.data()),
                         terms.size() * sizeof(DeviceTerm));
    }
    this->voxels.upload(voxels);
    this->unionVoxels.upload(unionVoxels);
    this->unionPtr.upload(ptr);
    this->unionTerms.upload(termIds);
    partials.allocate(std::size_t(std::max(1, termCount)) * kTermBlocks);
  }

  int termCount = 0;
  std::int64_t unionCount = 0;
  std::vector<DeviceTerm> hostTerms;
  penumbra::cuda::DeviceBuffer<std::uint8_t> terms;  // DeviceTerm[termCount]
  penumbra::cuda::DeviceBuffer<std::int32_t> voxels, unionVoxels, unionPtr, unionTerms;
  penumbra::cuda::DeviceBuffer<double> partials;  // [term][block]
};

}  // namespace penumbra::optimise::detail
