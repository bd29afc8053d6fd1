// Reader for the Mackie et al. (1988) monoenergetic point kernels as shipped by WiscPlan/OpenTPS:
// little-endian float32 binaries, C order [energy][polar][radial] (see the data README; a
// third-party reader that reshapes as [energy][radial][polar] is wrong).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "photon/physics/photon_beam_model.hpp"

namespace penumbra::photon {

namespace {

/// Reads exactly `count` little-endian float32 values; the file size must match.
std::vector<double> readFloat32(const std::string& path, std::size_t count) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    PENUMBRA_THROW(Io, "kernel file not found: '" + path + "'");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) PENUMBRA_THROW(Io, "cannot stat kernel file '" + path + "': " + ec.message());
  if (size != count * 4)
    PENUMBRA_THROW(Format, "'" + path + "' has " + std::to_string(size) + " bytes, expected " +
                               std::to_string(count * 4) + " (" + std::to_string(count) +
                               " float32 values)");
  std::ifstream in(path, std::ios::binary);
  if (!in) PENUMBRA_THROW(Io, "cannot open kernel file '" + path + "'");
  std::vector<unsigned char> bytes(size);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (!in) PENUMBRA_THROW(Io, "cannot read kernel file '" + path + "'");
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t u = std::uint32_t(bytes[4 * i]) | (std::uint32_t(bytes[4 * i + 1]) << 8) |
                            (std::uint32_t(bytes[4 * i + 2]) << 16) |
                            (std::uint32_t(bytes[4 * i + 3]) << 24);
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (!std::isfinite(f))
      PENUMBRA_THROW(Format, "'" + path + "': value " + std::to_string(i) + " is not finite");
    out[i] = f;
  }
  return out;
}

void requireAscending(const std::vector<double>& v, const std::string& path, double lowerBound) {
  double prev = lowerBound;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] > prev))
      PENUMBRA_THROW(Format, "'" + path + "': value " + std::to_string(i) + " (" +
                                 std::to_string(v[i]) + ") does not increase");
    prev = v[i];
  }
}

}  // namespace

MackieKernels MackieKernels::load(const std::string& dir) {
  const std::string headerPath = dir + "/kernel_header.txt";
  std::ifstream hin(headerPath);
  if (!hin) PENUMBRA_THROW(Io, "kernel header not found: '" + headerPath + "'");
  // "Nradii Nangles Nenergies" then the three numbers.
  std::string title;
  std::getline(hin, title);
  long nR = 0, nA = 0, nE = 0;
  if (!(hin >> nR >> nA >> nE) || nR < 1 || nA < 1 || nE < 1 || nR > 10000 || nA > 10000 ||
      nE > 10000)
    PENUMBRA_THROW(Format, headerPath + ":2: expected 'Nradii Nangles Nenergies' (e.g. 24 48 14)");

  MackieKernels k;
  k.energyMeV = readFloat32(dir + "/energies.bin", static_cast<std::size_t>(nE));
  k.radiusCm = readFloat32(dir + "/radii.bin", static_cast<std::size_t>(nR));
  k.polarUpperDeg = readFloat32(dir + "/angles.bin", static_cast<std::size_t>(nA));
  k.total = readFloat32(dir + "/total.bin", static_cast<std::size_t>(nE * nA * nR));
  requireAscending(k.energyMeV, dir + "/energies.bin", 0.0);
  requireAscending(k.radiusCm, dir + "/radii.bin", 0.0);
  requireAscending(k.polarUpperDeg, dir + "/angles.bin", 0.0);
  if (std::abs(k.polarUpperDeg.back() - 180.0) > 1e-3)
    PENUMBRA_THROW(Format, "'" + dir + "/angles.bin': last polar edge is " +
                               std::to_string(k.polarUpperDeg.back()) + " deg, expected 180");
  for (std::size_t i = 0; i < k.total.size(); ++i)
    if (k.total[i] < 0)
      PENUMBRA_THROW(
          Format, "'" + dir + "/total.bin': negative kernel value at index " + std::to_string(i));
  return k;
}

}  // namespace penumbra::photon
