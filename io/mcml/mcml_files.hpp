#pragma once
/// MCML's own file formats (Wang and Jacques, "Monte Carlo Modeling of Light Transport in
/// Multi-layered Tissues in Standard C", the MCML manual, 1992/1995): the .mci input (several runs
/// per file, '#' comments, one datum group per line) and the .mco output (sections InParm, RAT,
/// A_l, A_z, Rd_r, Rd_a, Tt_r, Tt_a, A_rz, Rd_ra, Tt_ra), so existing MCML inputs run unchanged.
#include <string>
#include <vector>

#include "mcml/mcml.hpp"

namespace penumbra::io {

/// One run of a .mci file.
struct MciRun {
  std::string outputFile;   ///< as written in the file (relative to the .mci's folder)
  char outputFormat = 'A';  ///< 'A' (ASCII) or 'B' (binary; written as ASCII here)
  mcml::LayeredMedium medium;
  mcml::McmlConfig config;  ///< packets, dz, dr, nz, nr, na from the file; the rest default
  int line = 0;             ///< line of the run's output-file entry (for messages)
};

/// Parses .mci text. `source` names the file in messages ("skin.mci:12: ...").
/// Throws Error(Format) naming the line for malformed input.
std::vector<MciRun> parseMci(const std::string& text, const std::string& source = "input");
/// Reads and parses a .mci file; throws Error(Io) when it cannot be read.
std::vector<MciRun> readMciFile(const std::string& path);

/// .mci text for runs (the inverse of parseMci).
std::string formatMci(const std::vector<MciRun>& runs);

/// .mco text in MCML's layout. `userSeconds` goes in the "# User time" line.
std::string formatMco(const MciRun& run, const mcml::McmlResult& r, double userSeconds);
/// Writes formatMco's text atomically (file/atomic_file.hpp): a failed write leaves no partial
/// .mco and an existing one untouched. Throws Error(Io) naming the file.
void writeMcoFile(const std::string& path, const MciRun& run, const mcml::McmlResult& r,
                  double userSeconds);

}  // namespace penumbra::io
