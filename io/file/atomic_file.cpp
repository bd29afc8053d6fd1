#include "file/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace penumbra::io {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)) {
  const fs::path target(path_);
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  folder_ = folder.string();
  std::error_code ec;
  targetExisted_ = fs::exists(target, ec);
  static std::atomic<unsigned> counter{0};
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  tmp_ = (folder / name).string();
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    PENUMBRA_THROW(Io, "cannot write " + what_ + " '" + path_ +
                           "': cannot create a temporary file in '" + folder_ +
                           "': " + std::strerror(err));
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
}

void AtomicFile::fail(const std::string& why, int err) {
  discard();
  PENUMBRA_THROW(Io, "cannot write " + what_ + " '" + path_ + "': " + why + std::strerror(err) +
                         (targetExisted_ ? " (existing file untouched)" : " (nothing written)"));
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  PENUMBRA_REQUIRE(fd_ >= 0 && !committed_, Internal,
                   "AtomicFile: write after finish or after a failure");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("", errno);
    }
    p += n;
    bytes -= std::size_t(n);
  }
}

void AtomicFile::finish() {
  if (fd_ < 0) return;
  if (::fsync(fd_) != 0) fail("", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("", errno);
}

void AtomicFile::commit() {
  PENUMBRA_REQUIRE(!committed_ && !tmp_.empty(), Internal, "AtomicFile: committed twice");
  finish();
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename failed: ", errno);
  committed_ = true;
  // Make the rename itself durable; a failure here loses nothing already on disk, so it is not
  // reported.
  const int dfd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void writeFileAtomically(const std::string& path, const std::string& bytes,
                         const std::string& what) {
  AtomicFile f(path, what);
  f.write(bytes);
  f.commit();
}

}  // namespace penumbra::io
