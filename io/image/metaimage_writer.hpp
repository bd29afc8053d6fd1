#pragma once
/// MetaImage (.mhd header + .raw float32 data), the format 3D Slicer, ITK-SNAP and ParaView
/// open directly: how penumbra-cli writes a dose. Both files are written through AtomicFile
/// (file/atomic_file.hpp): a write that fails (full disk, size limit, unwritable folder) leaves
/// neither a header nor truncated data behind, and existing files of that name untouched.
#include <string>

#include "core/volume.hpp"

namespace penumbra::io {

/// Writes FILE.mhd and FILE.raw (`path` with or without ".mhd"). `comment` goes into the
/// header's Comment line (units, provenance). Patient coordinates LPS (ITK's "RAI").
/// Throws Error(Io) naming the file and the system's reason.
void writeMetaImage(const std::string& path, const Volume<float>& volume,
                    const std::string& comment);

}  // namespace penumbra::io
