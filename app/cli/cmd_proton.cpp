// penumbra-cli proton: proton pencil-beam dose of a plan on a built-in phantom (water, box =
// matRad's BOXPHANTOM, hn = the head-and-neck-sized benchmark case), written as MetaImage
// (.mhd header + .raw float32), the format 3D Slicer, ITK-SNAP and ParaView open directly.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli_commands.hpp"
#include "core/error.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::cli {

namespace {

/// Writes FILE.mhd and FILE.raw (FILE without extension, or with .mhd removed).
void writeMetaImage(const std::string& path, const Volume<float>& v) {
  std::string base = path;
  if (base.size() > 4 && base.substr(base.size() - 4) == ".mhd") base.resize(base.size() - 4);
  const std::string raw = base + ".raw";
  const std::string rawName = raw.substr(raw.find_last_of('/') == std::string::npos ? 0 : raw.find_last_of('/') + 1);
  std::ofstream h(base + ".mhd");
  if (!h) PENUMBRA_THROW(Io, "cannot write '" + base + ".mhd'");
  const Grid& g = v.grid;
  h << "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
    << "CompressedData = False\n"
    << "TransformMatrix = " << g.direction.m[0][0] << " " << g.direction.m[1][0] << " " << g.direction.m[2][0]
    << " " << g.direction.m[0][1] << " " << g.direction.m[1][1] << " " << g.direction.m[2][1] << " "
    << g.direction.m[0][2] << " " << g.direction.m[1][2] << " " << g.direction.m[2][2] << "\n"
    << "Offset = " << g.origin.x << " " << g.origin.y << " " << g.origin.z << "\n"
    << "AnatomicalOrientation = RAI\n"  // ITK's name for LPS patient coordinates
    << "ElementSpacing = " << g.spacing.x << " " << g.spacing.y << " " << g.spacing.z << "\n"
    << "DimSize = " << g.dims[0] << " " << g.dims[1] << " " << g.dims[2] << "\n"
    << "ElementType = MET_FLOAT\n"
    << "Comment = proton dose in Gy (spot weights in units of 1e9 protons), DICOM LPS mm\n"
    << "ElementDataFile = " << rawName << "\n";
  std::ofstream r(raw, std::ios::binary);
  if (!r) PENUMBRA_THROW(Io, "cannot write '" + raw + "'");
  r.write(reinterpret_cast<const char*>(v.data.data()), std::streamsize(v.data.size() * sizeof(float)));
  if (!r) PENUMBRA_THROW(Io, "error writing '" + raw + "'");
}

}  // namespace

int cmdProton(Args args) {
  const std::string phantom = takeOption(args, "--phantom", "box");
  const std::string backend = takeOption(args, "--backend", "auto");
  const std::string variant = takeOption(args, "--variant", "dda-nc");
  const std::string out = takeOption(args, "--out");
  const bool matrix = takeFlag(args, "--matrix");
  if (!args.empty()) {
    std::cerr << "penumbra-cli proton: unexpected argument '" << args.front() << "'\n"
              << "usage: penumbra-cli proton [--phantom water|box|hn] [--backend cpu|cuda|auto]\n"
              << "                           [--variant classic|dda-nc] [--out FILE.mhd] [--matrix]\n";
    return 2;
  }
  proton::ProtonPhantomCase pc;
  if (phantom == "water") pc = proton::makeWaterPhantomCase();
  else if (phantom == "box") pc = proton::makeBoxPhantomCase();
  else if (phantom == "hn") pc = proton::makeHeadNeckCase(1.0);
  else {
    std::cerr << "penumbra-cli proton: unknown phantom '" << phantom << "' (water, box, hn)\n";
    return 2;
  }
  proton::ProtonDoseRequest req;
  req.ct = std::make_shared<CtVolume>(std::move(pc.ct));
  req.beams = pc.beams;
  req.doseGrid = pc.doseGrid;
  req.backend = parseBackend(backend);
  req.variant = parseDdaVariant(variant);
  req.params.computeDoseMatrix = matrix;
  std::printf("phantom %s: %zu beams, %zu spots, dose grid %dx%dx%d\n", pc.name.c_str(),
              req.beams.size(), proton::totalSpotCount(req.beams), req.doseGrid.dims[0],
              req.doseGrid.dims[1], req.doseGrid.dims[2]);
  const proton::WorkspaceEstimate est = proton::workspaceBytes(req);
  std::printf("memory estimate: %s\n", est.breakdown.c_str());
  const proton::ProtonDoseResult res = proton::computeProtonDose(req);
  for (const auto& m : res.messages) std::printf("note: %s\n", m.c_str());
  float dmax = 0;
  for (float d : res.dose.data) dmax = std::max(dmax, d);
  std::printf("backend %s (%s), variant %s: max dose %.4g Gy, %.1f ms (tables included on first use)\n",
              toString(res.backend), res.device.c_str(), variant.c_str(), double(dmax), res.elapsedMs);
  for (const auto& p : res.profiles)
    std::printf("  %-26s %-12s %9.3f ms\n", p.kernel.c_str(), p.variant.c_str(), p.medianMs);
  if (res.matrix)
    std::printf("dose matrix: %lld x %lld, %lld non-zeros (fp16), %lld dropped below %.0e of column max\n",
                (long long)res.matrix->rows, (long long)res.matrix->cols, (long long)res.matrix->nnz(),
                (long long)res.matrix->droppedEntries, res.matrix->relativeCutoff);
  if (!out.empty()) {
    writeMetaImage(out, res.dose);
    std::printf("wrote %s (MetaImage, float32 Gy)\n", out.c_str());
  }
  return 0;
}

}  // namespace penumbra::cli
