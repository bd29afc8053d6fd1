// CPU reference TERMA: one ray per voxel from the point source to the voxel centre (gather), the
// radiological path by 3D-DDA through the relative electron density in double precision, and
// the polyenergetic attenuation of the beam model's spectrum (beam hardening follows from the
// per-energy exponentials: the low energies die out first).
#include <cmath>

#include "core/parallel_for.hpp"
#include "photon/photon_backend.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::photon::detail {

std::vector<double> computeTermaCpu(const ResolvedRequest& r, const PreparedBeam& beam,
                                    DdaVariant variant, int threads, const JobControl& job) {
  const Grid& g = r.grid;
  std::vector<double> terma(g.voxelCount(), 0.0);
  if (beam.openFraction.empty()) return terma;  // closed field
  const dda::Geometry geo = makeDdaGeometry(g);
  const Spectrum& sp = r.model->spectrum;
  const std::size_t nE = sp.energyMeV.size();
  // f_E E mu/rho_E: the energy released per unit mass and fluence by each bin at zero depth.
  std::vector<double> released(nE), mu(nE);
  for (std::size_t e = 0; e < nE; ++e) {
    released[e] = sp.fluence[e] * sp.energyMeV[e] * sp.muRho[e];
    mu[e] = sp.muRho[e];
  }
  const double softening = r.model->offAxisSofteningPerDeg;
  double footU = 0, footV = 0;
  voxelFootprint(beam, g, footU, footV);
  const float* rho = r.density.data();
  const int nx = g.dims[0], ny = g.dims[1], nz = g.dims[2];
  const std::size_t rows = std::size_t(ny) * std::size_t(nz);
  parallelFor(rows, threads, job, [&](std::size_t row, int thread) {
    if (thread == 0 && row % 64 == 0) job.report(double(row) / double(rows), {});
    const int j = int(row % std::size_t(ny)), k = int(row / std::size_t(ny));
    for (int i = 0; i < nx; ++i) {
      const Vec3 p = g.indexToWorld(Vec3{double(i), double(j), double(k)});
      const double open = voxelOpenFraction(beam, p, footU, footV);
      if (!(open > 0)) continue;  // outside the field: no primary photons, TERMA 0
      const Vec3 rel = p - beam.source;
      const double dist = norm(rel);
      dda::RayData ray{};
      for (int a = 0; a < 3; ++a) {
        ray.origin[a] = beam.source[a];
        ray.direction[a] = rel[a];
      }
      ray.tMax = dist;
      double pathMm = 0;  // water-equivalent mm (RED x geometric length)
      dda::Start<double> s;
      if (dda::setupRay(geo, ray, s)) {
        auto visit = [&](int vi, int vj, int vk, double len) {
          pathMm += double(rho[g.linearIndex(vi, vj, vk)]) * len;
        };
        dda::traverse(variant, s, g.dims.data(), visit);
      }
      const double pathCm = pathMm / 10.0;
      double scale = 1.0;
      if (softening != 0) {
        const double c = std::clamp(dot(rel, beam.w) / dist, -1.0, 1.0);
        scale = 1.0 + softening * std::acos(c) * 180.0 / 3.14159265358979323846;
      }
      double sum = 0;
      for (std::size_t e = 0; e < nE; ++e) sum += released[e] * std::exp(-mu[e] * scale * pathCm);
      const double inv = beam.sadMm / dist;
      terma[g.linearIndex(i, j, k)] = open * inv * inv * sum;
    }
  });
  return terma;
}

}  // namespace penumbra::photon::detail
