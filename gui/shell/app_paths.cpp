#include "gui/shell/app_paths.hpp"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace penumbra::gui {

namespace {
constexpr auto kRecentKey = "recentFolders";
constexpr auto kDemoRel = "phantoms/BOXPHANTOM";
}  // namespace

QStringList demoCaseCandidates() {
  QStringList out;
  const QString env = qEnvironmentVariable("PENUMBRA_TEST_DATA");
  if (!env.isEmpty()) out << QDir(env).filePath(kDemoRel);
#ifdef PENUMBRA_SOURCE_DIR
  out << QDir::cleanPath(QStringLiteral(PENUMBRA_SOURCE_DIR "/../shared/data/") + kDemoRel);
#endif
  const QString data = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
  if (!data.isEmpty()) out << QDir(data).filePath("penumbra/demo/BOXPHANTOM");
  return out;
}

QString findDemoCase() {
  for (const QString& c : demoCaseCandidates())
    if (QFileInfo(c).isDir()) return c;
  return {};
}

QString syntheticDemoFolder() {
  // The same folder scripts/penumbra-demo fills with `penumbra-cli make-demo`.
  return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation))
      .filePath("penumbra/demo");
}

QStringList recentFolders() { return QSettings().value(kRecentKey).toStringList(); }

void addRecentFolder(const QString& folder) {
  const QString clean = QDir::cleanPath(QFileInfo(folder).absoluteFilePath());
  QStringList list = recentFolders();
  list.removeAll(clean);
  list.prepend(clean);
  while (list.size() > kMaxRecentFolders) list.removeLast();
  QSettings().setValue(kRecentKey, list);
}

void clearRecentFolders() { QSettings().remove(kRecentKey); }

}  // namespace penumbra::gui
