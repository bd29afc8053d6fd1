#pragma once
// Thin helpers over DCMTK used by the importer: one place that silences DCMTK's logger,
// registers the decompression codecs, loads files whatever their encoding, and reads
// attributes with every OFCondition checked. Internal to io/dicom (DCMTK headers must not
// leak into the public API).
#include <dcmtk/dcmdata/dctk.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace penumbra::io::dcm {

/// Silences DCMTK's logger (it would print "W: ..." / "E: ..." to stderr for every odd file;
/// we report problems through ImportMessages instead) and registers the RLE, JPEG and
/// JPEG-LS decoders. Idempotent and thread-safe; called by every entry point.
void initialiseDcmtk();

enum class LoadDepth {
  Headers,  ///< stop before PixelData: what a folder scan needs
  Full      ///< everything, pixel data included
};

/// Loads a DICOM file with or without preamble / file meta (transfer syntax auto-detected).
/// Returns null and sets `error` (naming the file) when DCMTK cannot parse it.
std::unique_ptr<DcmFileFormat> loadFile(const std::string& path, LoadDepth depth,
                                        std::string& error);

/// Trimmed string value (component `pos` of a multi-valued attribute); empty when absent.
std::string getString(DcmItem& item, const DcmTagKey& tag, long pos = 0);
/// All values of a multi-valued decimal-string attribute ("a\b\c"); empty when absent or
/// when any component does not parse.
std::vector<double> getDoubles(DcmItem& item, const DcmTagKey& tag);
std::optional<double> getDouble(DcmItem& item, const DcmTagKey& tag);
std::optional<long> getInt(DcmItem& item, const DcmTagKey& tag);

/// Transfer syntax of the dataset as read, e.g. "JPEG 2000 Image Compression (1.2.840...)".
std::string transferSyntaxName(DcmFileFormat& file);

/// The file name for messages: the last two path components ("CT_2mm/CT.1.dcm").
std::string shortName(const std::string& path);

}  // namespace penumbra::io::dcm
