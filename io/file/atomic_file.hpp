#pragma once
/// Files that are either written completely or not at all (issue 12: "nothing written half-way").
/// The content goes to a temporary file in the target's folder (".NAME.tmp-PID-N", same file
/// system, so the final rename is atomic), is flushed to disk, and only then renamed over the
/// target. On any failure, and when the object dies uncommitted (an exception between two
/// writes), the temporary is removed and an existing target is left untouched. A disk that
/// fills up, a file-size limit or an unwritable folder therefore never leaves a truncated dose
/// or case behind.
#include <cstddef>
#include <string>

namespace penumbra::io {

class AtomicFile {
public:
  /// Creates the temporary next to `path`. `what` names the file in messages ("case file",
  /// "MetaImage header"). Throws Error(Io): "cannot write case file 'x.json': cannot create a
  /// temporary file in 'dir': Permission denied".
  AtomicFile(std::string path, std::string what);
  ~AtomicFile();  ///< removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends bytes; throws Error(Io) naming the file and the system's reason (and removes the
  /// temporary).
  void write(const void* data, std::size_t bytes);
  void write(const std::string& text) { write(text.data(), text.size()); }
  /// fsync and close: after this only the rename is left. Throws Error(Io) like write().
  void finish();
  /// finish() if not done, then renames the temporary over the target (and makes the rename
  /// durable). Throws Error(Io).
  void commit();

  const std::string& path() const { return path_; }

private:
  [[noreturn]] void fail(const std::string& why, int err);
  void discard() noexcept;

  std::string path_, what_, tmp_, folder_;
  int fd_ = -1;
  bool targetExisted_ = false;
  bool committed_ = false;
};

/// Writes `bytes` to `path` through an AtomicFile.
void writeFileAtomically(const std::string& path, const std::string& bytes,
                         const std::string& what);

}  // namespace penumbra::io
