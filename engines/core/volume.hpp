#pragma once
/// Grid plus contiguous voxel data (i fastest). The one image type of the engines.
#include <cstdint>

#include "core/error.hpp"
#include "core/grid.hpp"
#include "core/voxel_memory.hpp"

namespace penumbra {

template <typename T>
struct Volume {
  Grid grid;
  VoxelVector<T> data;  ///< pooled from 8 MiB on (core/voxel_memory.hpp)

  Volume() = default;
  explicit Volume(const Grid& g, T fill = T{}) : grid(g), data(g.voxelCount(), fill) {}

  T& at(int i, int j, int k) { return data[grid.linearIndex(i, j, k)]; }
  const T& at(int i, int j, int k) const { return data[grid.linearIndex(i, j, k)]; }
  bool empty() const { return data.empty(); }
  /// Throws when data and grid disagree; called by engines before trusting a volume.
  void validate() const {
    PENUMBRA_REQUIRE(data.size() == grid.voxelCount(), Internal,
                     "volume data size does not match its grid");
  }
};

/// CT in Hounsfield units.
using CtVolume = Volume<std::int16_t>;
/// Binary mask: 1 inside, 0 outside.
using Mask = Volume<std::uint8_t>;

}  // namespace penumbra
