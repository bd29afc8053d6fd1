#include "dicom/dcmtk_util.hpp"

#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/oflog/oflog.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <mutex>
#include <random>
#include <string_view>

#include "core/error.hpp"

namespace penumbra::io::dcm {

void initialiseDcmtk() {
  static std::once_flag once;
  std::call_once(once, [] {
    // OFF, not FATAL: test logs must stay clean, and every problem DCMTK would log is
    // turned into a user message by our own checks of its OFConditions.
    OFLog::configure(OFLogger::OFF_LOG_LEVEL);
    DcmRLEDecoderRegistration::registerCodecs();
    DJDecoderRegistration::registerCodecs();
    DJLSDecoderRegistration::registerCodecs();
    // Read attributes written with VR UN (some exporters do, e.g. pydicom's
    // rtdose_rle_1frame.dcm) by their dictionary VR, as pydicom does: otherwise Modality
    // "RTDOSE" reads as the bytes "52\54\44..." and positions as hex.
    dcmEnableUnknownVRConversion.set(OFTrue);
  });
}

std::string plainWords(const OFCondition& c) {
  // What DCMTK says when the data ends before an element or sequence does.
  if (c == EC_StreamNotifyClient) return "the file is truncated or not a complete DICOM file";
  if (c == EC_InvalidStream)
    return "the file is truncated or damaged (its DICOM structure breaks off)";
  if (c == EC_InvalidTag || c == EC_CorruptedData)
    return "the file is damaged: its DICOM data cannot be read";
  return std::string("not a readable DICOM file (") + c.text() + ")";
}

namespace {

// DCMTK reads values longer than DCM_MaxReadLength only when asked, and then allocates the length
// the element claims before reading: a 6 KB file whose element claims 2.2 GB made the scan
// allocate 2.2 GB (found by fuzz_rtstruct). No element can be longer than its file.
bool lengthsFitFile(DcmFileFormat& file, const std::string& path, std::string& error) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return true;  // the load succeeded; the size check has nothing to say
  DcmStack stack;
  while (file.getDataset()->nextObject(stack, OFTrue).good()) {
    DcmObject* obj = stack.top();
    const Uint32 length = obj->getLengthField();
    if (length != DCM_UndefinedLength && std::uintmax_t(length) > size) {
      error = shortName(path) + ": the file is damaged: element " + obj->getTag().toString().c_str() +
              " claims " + std::to_string(length) + " bytes, more than the whole file (" +
              std::to_string(size) + " bytes)";
      return false;
    }
  }
  return true;
}

}  // namespace

std::unique_ptr<DcmFileFormat> loadFile(const std::string& path, LoadDepth depth,
                                        std::string& error, bool* truncated) {
  if (truncated) *truncated = false;
  initialiseDcmtk();
  auto file = std::make_unique<DcmFileFormat>();
  // ERM_autoDetect + EXS_Unknown: accept files without preamble/meta (pydicom's
  // rtstruct.dcm, no_meta.dcm) and let DCMTK guess the transfer syntax. For a scan we stop
  // before PixelData so that a 512x512x300 series costs kilobytes of reading, not 150 MB.
  const DcmTagKey stopAt = depth == LoadDepth::Headers ? DCM_PixelData : DCM_UndefinedTagKey;
  OFCondition cond;
  try {
    cond = file->loadFileUntilTag(path.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength,
                                  ERM_autoDetect, stopAt);
  } catch (const std::exception& e) {
    error = shortName(path) + ": the DICOM parser failed on this file (" + e.what() + ")";
    return nullptr;
  }
  if (cond.bad()) {
    error = shortName(path) + ": " + plainWords(cond);
    const bool endsEarly = cond == EC_StreamNotifyClient || cond == EC_InvalidStream;
    if (truncated && endsEarly && file->getDataset()->card() > 0 &&
        lengthsFitFile(*file, path, error)) {
      *truncated = true;
      return file;
    }
    return nullptr;
  }
  if (!lengthsFitFile(*file, path, error)) return nullptr;
  return file;
}

std::string getString(DcmItem& item, const DcmTagKey& tag, long pos) {
  OFString value;
  if (item.findAndGetOFString(tag, value, pos).bad()) return {};
  std::string s = value.c_str();
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  // DICOM pads with spaces (and UIDs with NUL); trim both so comparisons of UIDs work.
  if (b == std::string::npos) return {};
  s = s.substr(b, e - b + 1);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::vector<double> getDoubles(DcmItem& item, const DcmTagKey& tag) {
  DcmElement* element = nullptr;
  if (item.findAndGetElement(tag, element).bad() || !element) return {};
  std::vector<double> values;
  const unsigned long n = element->getVM();
  for (unsigned long i = 0; i < n; ++i) {
    Float64 v = 0;
    if (element->getFloat64(v, i).bad()) {
      // Decimal strings are read through OFString to survive odd VRs (UN, badVR.dcm).
      OFString s;
      if (element->getOFString(s, i).bad()) return {};
      try {
        v = std::stod(s.c_str());
      } catch (...) {
        return {};
      }
    }
    values.push_back(v);
  }
  return values;
}

namespace {

// The whole of `text` (spaces around it allowed) as a number, NaN when it is not one: no
// trailing units, and independent of the locale (the GUI's may write "2,5").
double parseNumber(std::string_view text) {
  const auto b = text.find_first_not_of(' ');
  const auto e = text.find_last_not_of(' ');
  if (b == std::string_view::npos) return std::numeric_limits<double>::quiet_NaN();
  text = text.substr(b, e - b + 1);
  if (text.front() == '+') text.remove_prefix(1);
  double v = 0;
  // Beyond the range of a double ("1e999") counts as not a number too.
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::numeric_limits<double>::quiet_NaN();
  return v;
}

}  // namespace

std::vector<double> getNumbers(DcmItem& item, const DcmTagKey& tag) {
  DcmElement* element = nullptr;
  if (item.findAndGetElement(tag, element).bad() || !element) return {};
  std::vector<double> values;
  const unsigned long n = element->getVM();
  for (unsigned long i = 0; i < n; ++i) {
    // Binary VRs (FD, FL, US, ...) through DCMTK; text VRs (DS, IS, or UN read as text) by
    // our own strict parse, since DCMTK takes the number at the front of "-1024HU".
    Float64 v = 0;
    if (!element->isaString() && element->getFloat64(v, i).good()) {
      values.push_back(v);
      continue;
    }
    OFString s;
    values.push_back(element->getOFString(s, i).good() ? parseNumber(s.c_str())
                                                       : std::numeric_limits<double>::quiet_NaN());
  }
  return values;
}

std::string rawValue(DcmItem& item, const DcmTagKey& tag) {
  OFString value;
  if (item.findAndGetOFStringArray(tag, value).bad()) return {};
  // Messages quote the value; a damaged element can hold kilobytes (found by fuzz_dicom_ct).
  constexpr std::size_t kShown = 64;
  std::string s(value.c_str());
  if (s.size() > kShown) s = s.substr(0, kShown) + "... (" + std::to_string(s.size()) + " characters)";
  return s;
}

std::optional<double> getDouble(DcmItem& item, const DcmTagKey& tag) {
  auto v = getDoubles(item, tag);
  if (v.empty()) return std::nullopt;
  return v.front();
}

std::optional<long> getInt(DcmItem& item, const DcmTagKey& tag) {
  DcmElement* element = nullptr;
  if (item.findAndGetElement(tag, element).bad() || !element || element->getVM() == 0)
    return std::nullopt;
  Uint16 u16 = 0;
  Sint32 s32 = 0;
  Uint32 u32 = 0;
  if (element->getUint16(u16).good()) return long(u16);
  if (element->getSint32(s32).good()) return long(s32);
  if (element->getUint32(u32).good()) return long(u32);
  OFString s;
  if (element->getOFString(s, 0).good()) {
    try {
      return std::stol(s.c_str());
    } catch (...) {
    }
  }
  return std::nullopt;
}

std::string transferSyntaxName(DcmFileFormat& file) {
  const E_TransferSyntax xfer = file.getDataset()->getOriginalXfer();
  DcmXfer x(xfer);
  return std::string(x.getXferName()) + " (" + x.getXferID() + ")";
}

std::string shortName(const std::string& path) {
  const std::filesystem::path p(path);
  const auto parent = p.parent_path().filename();
  return parent.empty() ? p.filename().string() : (parent / p.filename()).string();
}

std::string newUid() {
  char buf[100];
  dcmGenerateUniqueIdentifier(buf, SITE_INSTANCE_UID_ROOT);
  return buf;
}

std::string decimalString(double v) {
  if (v == 0.0) v = 0.0;  // no "-0"
  char buf[64];
  for (int prec = 10; prec >= 4; --prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strlen(buf) <= 16) break;
  }
  return buf;
}

std::string decimalStrings(std::initializer_list<double> values) {
  std::string s;
  for (double v : values) s += (s.empty() ? "" : "\\") + decimalString(v);
  return s;
}

DateTime now() {
  char date[16], time[16];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(date, sizeof date, "%Y%m%d", &tm);
  std::strftime(time, sizeof time, "%H%M%S", &tm);
  return {date, time};
}

void check(const OFCondition& c, const char* context, const char* what) {
  if (c.bad())
    throw Error(ErrorCode::InvalidArgument,
                std::string(context) + ": cannot set " + what + " (" + c.text() + ")", __FILE__,
                __LINE__);
}

void saveFileAtomically(DcmFileFormat& file, const std::string& path) {
  namespace fs = std::filesystem;
  // Temporary file in the target's folder (same file system), so the rename is atomic.
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()));
  const OFCondition saved =
      file.saveFile(tmp.string().c_str(), EXS_LittleEndianExplicit, EET_ExplicitLength,
                    EGL_recalcGL, EPD_noChange, 0, 0, EWM_fileformat);
  std::error_code ec;
  if (saved.bad()) {
    fs::remove(tmp, ec);
    throw Error(ErrorCode::Io, "cannot write " + path + " (" + saved.text() + ")", __FILE__,
                __LINE__);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(ErrorCode::Io, "cannot replace " + path + " (" + ec.message() + ")", __FILE__,
                __LINE__);
  }
}

}  // namespace penumbra::io::dcm
