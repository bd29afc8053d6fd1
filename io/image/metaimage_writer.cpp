#include "image/metaimage_writer.hpp"

#include <sstream>

#include "file/atomic_file.hpp"

namespace penumbra::io {

void writeMetaImage(const std::string& path, const Volume<float>& v, const std::string& comment) {
  v.validate();
  std::string base = path;
  if (base.size() > 4 && base.substr(base.size() - 4) == ".mhd") base.resize(base.size() - 4);
  const std::string raw = base + ".raw";
  const auto slash = raw.find_last_of('/');
  const std::string rawName = slash == std::string::npos ? raw : raw.substr(slash + 1);
  const Grid& g = v.grid;
  std::ostringstream h;
  h << "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
    << "CompressedData = False\nTransformMatrix =";
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) h << " " << g.direction.m[r][c];
  h << "\nOffset = " << g.origin.x << " " << g.origin.y << " " << g.origin.z << "\n"
    << "AnatomicalOrientation = RAI\n"  // ITK's name for LPS patient coordinates
    << "ElementSpacing = " << g.spacing.x << " " << g.spacing.y << " " << g.spacing.z << "\n"
    << "DimSize = " << g.dims[0] << " " << g.dims[1] << " " << g.dims[2] << "\n"
    << "ElementType = MET_FLOAT\n"
    << "Comment = " << comment << "\n"
    << "ElementDataFile = " << rawName << "\n";
  // Both files complete on disk before either is renamed into place: every I/O error (a full
  // disk shows up in write or fsync) happens while nothing is visible yet.
  AtomicFile data(raw, "MetaImage data");
  data.write(v.data.data(), v.data.size() * sizeof(float));
  AtomicFile header(base + ".mhd", "MetaImage header");
  header.write(h.str());
  data.finish();
  header.finish();
  data.commit();
  header.commit();
}

}  // namespace penumbra::io
