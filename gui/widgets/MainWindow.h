// The main window: Timeline, Candidates, Compare and Run tabs in the centre, kernel table
// and selection statistics in docks (shown with the timeline); File menu with Open
// (traces and results DBs, also dropped on the window), Compare, recent files (QSettings)
// and Export PNG. Loads go
// through TraceLoader; a bad file gets a (non-blocking) error dialog, never a crash.
#pragma once

#include <QMainWindow>

#include "models/TraceDocument.h"

class QDockWidget;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTextBrowser;

namespace tunescope::gui {

class CandidatesView;
class CompareView;
class CriticalPathPanel;
class KernelDock;
class RunView;
class TimelineView;
class TraceLoader;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  static constexpr int kMaxRecentFiles = 8;

  explicit MainWindow(QWidget* parent = nullptr);

  enum Tab { TimelineTab, CandidatesTab, CompareTab, RunTab };

  // What profiler::sniff_file finds in it, whatever the name: a results DB (or another
  // application's SQLite, which the results DB reader refuses naming it) goes to the
  // Candidates tab, anything else is loaded as a trace: ours, a PyTorch profiler trace
  // or an Nsight Systems SQLite export. Open, drag and drop, recent files and the
  // command line all come here.
  void openFile(const QString& path);
  void openResults(const QString& path);
  // Loads both traces and shows them in the Compare tab (A above B).
  void compareFiles(const QString& pathA, const QString& pathB);
  // Compares the trace on the timeline (A) with `pathB`.
  void compareWithCurrent(const QString& pathB);
  bool exportTimelinePng(const QString& path);
  TimelineView* timelineView() const { return timeline_; }
  KernelDock* kernelDock() const { return kernels_; }
  CriticalPathPanel* criticalPathPanel() const { return criticalPath_; }
  CandidatesView* candidatesView() const { return candidates_; }
  CompareView* compareView() const { return compare_; }
  RunView* runView() const { return run_; }
  QTabWidget* tabs() const { return tabs_; }
  TraceDocumentPtr document() const { return document_; }
  TraceLoader* traceLoader() const { return loader_; }
  // The status-bar button that cancels the trace load in flight (visible while loading).
  QPushButton* cancelLoadButton() const { return cancelLoad_; }
  QStringList recentFiles() const;

 signals:
  void documentLoaded();
  void loadFailed(const QString& message);
  void resultsLoaded();
  void compareReady();

 protected:
  // A file dropped on the window opens as openFile does (the first, if several).
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createMenus();
  void createLoadProgress();
  void endLoadProgress();
  void showDocument(TraceDocumentPtr document, qint64 elapsedMs);
  void showLoadError(const QString& path, const QString& message, const QString& title = {});
  void compareLoaded(int side, TraceDocumentPtr document);
  void compareDialog();
  void tabChanged(int index);
  void showSelection(qint64 startNs, qint64 endNs);
  void showWholeTrace();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void openDialog();
  void exportDialog();

  TimelineView* timeline_;
  CandidatesView* candidates_;
  CompareView* compare_;
  RunView* run_;
  QTabWidget* tabs_;
  KernelDock* kernels_;
  QDockWidget* selectionDock_ = nullptr;
  CriticalPathPanel* criticalPath_;
  QTextBrowser* selectionPanel_;
  TraceLoader* loader_;
  QProgressBar* loadProgress_ = nullptr;
  QPushButton* cancelLoad_ = nullptr;
  TraceLoader* compareLoaders_[2];
  TraceDocumentPtr comparePending_[2];
  QMenu* recentMenu_ = nullptr;
  TraceDocumentPtr document_;
};

}  // namespace tunescope::gui
