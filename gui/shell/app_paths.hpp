#pragma once
/// Where the application finds its demo case, and the recent-folders list (QSettings).
#include <QString>
#include <QStringList>

namespace penumbra::gui {

/// Places searched for the BOXPHANTOM demo case, in order:
///  1. $PENUMBRA_TEST_DATA/phantoms/BOXPHANTOM (the path the tests use),
///  2. <source dir>/../shared/data/phantoms/BOXPHANTOM (compile definition PENUMBRA_SOURCE_DIR),
///  3. <GenericDataLocation>/penumbra/demo/BOXPHANTOM (~/.local/share/penumbra/demo/BOXPHANTOM).
QStringList demoCaseCandidates();
/// The first candidate that exists, or empty.
QString findDemoCase();

/// Folder for the synthetic demo case generated when BOXPHANTOM is absent
/// (<GenericCacheLocation>/penumbra/demo, i.e. ~/.cache/penumbra/demo, as scripts/penumbra-demo).
QString syntheticDemoFolder();

/// Most recent first; at most kMaxRecentFolders entries.
QStringList recentFolders();
void addRecentFolder(const QString& folder);
void clearRecentFolders();
inline constexpr int kMaxRecentFolders = 8;

}  // namespace penumbra::gui
