// The main window: timeline in the centre, kernel table and selection statistics in
// docks; File menu with Open, recent files (QSettings) and Export PNG. Loads go
// through TraceLoader; a bad file gets a (non-blocking) error dialog, never a crash.
#pragma once

#include <QMainWindow>

#include "models/TraceDocument.h"

class QMenu;
class QTextBrowser;

namespace tunescope::gui {

class KernelDock;
class TimelineView;
class TraceLoader;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  static constexpr int kMaxRecentFiles = 8;

  explicit MainWindow(QWidget* parent = nullptr);

  void openFile(const QString& path);
  bool exportTimelinePng(const QString& path);
  TimelineView* timelineView() const { return timeline_; }
  KernelDock* kernelDock() const { return kernels_; }
  TraceDocumentPtr document() const { return document_; }
  QStringList recentFiles() const;

 signals:
  void documentLoaded();
  void loadFailed(const QString& message);

 private:
  void createMenus();
  void showDocument(TraceDocumentPtr document, qint64 elapsedMs);
  void showLoadError(const QString& path, const QString& message);
  void showSelection(qint64 startNs, qint64 endNs);
  void showWholeTrace();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void openDialog();
  void exportDialog();

  TimelineView* timeline_;
  KernelDock* kernels_;
  QTextBrowser* selectionPanel_;
  TraceLoader* loader_;
  QMenu* recentMenu_ = nullptr;
  TraceDocumentPtr document_;
};

}  // namespace tunescope::gui
