#pragma once
/// MetaImage reading (.mhd header + separate data file, or .mha with the data after the header):
/// the inverse of metaimage_writer.hpp, for doses written by penumbra-cli, 3D Slicer, ITK-SNAP
/// or pymedphys' tools.
///
/// What is read: an ASCII header of "Key = Value" lines with NDims = 3, DimSize (3 positive
/// integers), ElementSpacing (3 positive mm; ElementSize is accepted in its place), Offset
/// (Origin and Position are synonyms), TransformMatrix (Orientation and Rotation are synonyms;
/// optional, identity by default; 9 values, column after column as ITK writes them, which must
/// be orthonormal), ElementType MET_FLOAT, MET_DOUBLE, MET_SHORT or MET_USHORT, one channel,
/// uncompressed little-endian binary data (BinaryDataByteOrderMSB / ElementByteOrderMSB False
/// or absent), and ElementDataFile: a file name relative to the header's folder, or LOCAL for
/// data that follows the header. Other keys (Comment, ObjectType, AnatomicalOrientation, ...)
/// are ignored. Anything else is refused before any data is read, with a message naming the
/// file and the field; the data file's size must be exactly DimSize x the element size.
#include <string>

#include "core/volume.hpp"

namespace penumbra::io {

struct MetaImage {
  Volume<float> volume;     ///< values converted to float; grid in patient mm (LPS)
  std::string elementType;  ///< as in the header: "MET_FLOAT", "MET_SHORT", ...
  std::string comment;      ///< the header's Comment (units, provenance), or empty
  std::string dataFile;     ///< the file the voxels were read from
};

/// Largest header read, in bytes: a "header" beyond it is not a MetaImage header.
inline constexpr std::size_t kMaxMetaImageHeaderBytes = 64 * 1024;

/// Reads `path`. Throws Error(Io) when the header or data file cannot be opened or read, and
/// Error(Format) naming the file and the field for anything it does not accept:
/// "MetaImage 'dose.mhd': DimSize 10 10 10 needs 4000 bytes of MET_FLOAT in 'dose.raw', which
/// has 3996". Never reads more than the header and the data file's stated size.
MetaImage readMetaImage(const std::string& path);

}  // namespace penumbra::io
