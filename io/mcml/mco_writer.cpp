// .mco writer in MCML's layout (mcmlio.c WriteResult: WriteVersion, WriteInParm, WriteRAT,
// WriteA_layer, WriteA_z, WriteRd_r, WriteRd_a, WriteTt_r, WriteTt_a, WriteA_rz, WriteRd_ra,
// WriteTt_ra). 1D arrays one value a line (%12.4G), 2D arrays five values a line (%12.4E).
#include <sstream>

#include "core/format.hpp"
#include "file/atomic_file.hpp"
#include "mcml/mcml_files.hpp"

namespace penumbra::io {

namespace {

void write1d(std::ostringstream& o, const char* header, const std::vector<double>& v) {
  o << header << "\n";
  for (double x : v) o << formatNumber("%12.4G", x) << "\n";
  o << "\n";
}

void write2d(std::ostringstream& o, const char* comment, const char* name,
             const std::vector<double>& v) {
  o << comment << name << "\n";
  int k = 0;
  for (double x : v) {
    o << formatNumber("%12.4E ", x);
    if (k++ % 5 == 4) o << "\n";
  }
  o << "\n\n";
}

}  // namespace

std::string formatMco(const MciRun& run, const mcml::McmlResult& r, double userSeconds) {
  std::ostringstream o;
  o << "A1 \t# Version number of the file format.\n\n"
    << "####\n# Data categories include: \n# InParm, RAT, \n"
    << "# A_l, A_z, Rd_r, Rd_a, Tt_r, Tt_a, \n# A_rz, Rd_ra, Tt_ra \n####\n\n";
  o << "# User time: " << formatNumber("%8.2lf", userSeconds)
    << " sec = " << formatNumber("%8.2lf", userSeconds / 3600.0)
    << " hr.  Simulation time of this run.\n\n";
  o << "InParm \t\t\t# Input parameters. cm is used.\n"
    << run.outputFile << " \tA\t\t# output file name, ASCII.\n"
    << run.config.packets << " \t\t\t# No. of photons\n"
    << formatNumber("%G", run.config.dz) << "\t" << formatNumber("%G", run.config.dr)
    << "\t\t# dz, dr [cm]\n"
    << run.config.nz << "\t" << run.config.nr << "\t" << run.config.na
    << "\t# No. of dz, dr, da.\n\n"
    << run.medium.layers.size() << "\t\t\t\t\t# Number of layers\n"
    << "#n\tmua\tmus\tg\td\t# One line for each layer\n"
    << formatNumber("%G", run.medium.nAbove) << "\t\t\t\t\t# n for medium above\n";
  for (std::size_t i = 0; i < run.medium.layers.size(); ++i) {
    const mcml::Layer& l = run.medium.layers[i];
    o << formatNumber("%G", l.n) << "\t" << formatNumber("%G", l.mua) << "\t"
      << formatNumber("%G", l.mus) << "\t" << formatNumber("%G", l.g) << "\t"
      << formatNumber("%G", l.d) << "\t# layer " << i + 1 << "\n";
  }
  o << formatNumber("%G", run.medium.nBelow) << "\t\t\t\t\t# n for medium below\n\n";
  o << "RAT #Reflectance, absorption, transmission. \n"
    << formatNumber("%-14.6G", r.Rsp) << " \t#Specular reflectance [-]\n"
    << formatNumber("%-14.6G", r.Rd) << " \t#Diffuse reflectance [-]\n"
    << formatNumber("%-14.6G", r.A) << " \t#Absorbed fraction [-]\n"
    << formatNumber("%-14.6G", r.Tt) << " \t#Transmittance [-]\n"
    << "# Standard errors from " << run.config.batches << " batches (Penumbra): Rd "
    << formatNumber("%.3G", r.RdErr) << ", A " << formatNumber("%.3G", r.AErr) << ", Tt "
    << formatNumber("%.3G", r.TtErr) << "\n\n";
  write1d(o, "A_l #Absorption as a function of layer. [-]", r.A_l);
  write1d(o, "A_z #A[0], [1],..A[nz-1]. [1/cm]", r.A_z);
  write1d(o, "Rd_r #Rd[0], [1],..Rd[nr-1]. [1/cm2]", r.Rd_r);
  write1d(o, "Rd_a #Rd[0], [1],..Rd[na-1]. [sr-1]", r.Rd_a);
  write1d(o, "Tt_r #Tt[0], [1],..Tt[nr-1]. [1/cm2]", r.Tt_r);
  write1d(o, "Tt_a #Tt[0], [1],..Tt[na-1]. [sr-1]", r.Tt_a);
  write2d(o,
          "# A[r][z]. [1/cm3]\n# A[0][0], [0][1],..[0][nz-1]\n# A[1][0], [1][1],..[1][nz-1]\n"
          "# ...\n# A[nr-1][0], [nr-1][1],..[nr-1][nz-1]\n",
          "A_rz", r.A_rz);
  write2d(o,
          "# Rd[r][angle]. [1/(cm2sr)].\n# Rd[0][0], [0][1],..[0][na-1]\n"
          "# Rd[1][0], [1][1],..[1][na-1]\n# ...\n# Rd[nr-1][0], [nr-1][1],..[nr-1][na-1]\n",
          "Rd_ra", r.Rd_ra);
  write2d(o,
          "# Tt[r][angle]. [1/(cm2sr)].\n# Tt[0][0], [0][1],..[0][na-1]\n"
          "# Tt[1][0], [1][1],..[1][na-1]\n# ...\n# Tt[nr-1][0], [nr-1][1],..[nr-1][na-1]\n",
          "Tt_ra", r.Tt_ra);
  return o.str();
}

void writeMcoFile(const std::string& path, const MciRun& run, const mcml::McmlResult& r,
                  double userSeconds) {
  writeFileAtomically(path, formatMco(run, r, userSeconds), "MCML output file");
}

}  // namespace penumbra::io
