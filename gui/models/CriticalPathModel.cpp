#include "models/CriticalPathModel.h"

#include <algorithm>
#include <exception>

#include "models/TimeFormat.h"
#include "profiler/analysis/StepAnalysis.h"

namespace tunescope::gui {

namespace an = profiler::analysis;

CriticalPathModel::CriticalPathModel(const profiler::Trace& trace) {
  if (trace.activities.empty()) {
    whyNot_ = QStringLiteral("the trace holds no activities");
    return;
  }
  if (trace.activities.size() > kMaxActivities) {
    whyNot_ = QStringLiteral("%1 activities: above the viewer's %2 (run tunescope analyze)")
                  .arg(trace.activities.size())
                  .arg(kMaxActivities);
    return;
  }
  an::TraceAnalysis analysis;
  try {
    analysis = an::analyze(trace);
    if (analysis.graph.lanes > 1 && analysis.graph.cross_lane_edges() == 0) {
      whyNot_ =
          QStringLiteral("no dependencies between its %1 lanes: what waited for what is unknown")
              .arg(analysis.graph.lanes);
      return;
    }
    findings_ = an::find_findings(trace, analysis);
  } catch (const std::exception& e) {
    whyNot_ = QString::fromStdString(e.what());
    return;
  }
  if (analysis.steps.empty()) {
    whyNot_ = QStringLiteral("no steps");
    return;
  }
  const an::DependencyGraph& graph = analysis.graph;
  const an::PathSummary& recorded = analysis.recorded;
  const an::Step& step = analysis.steps[recorded.median_step];
  stepName_ = QString::fromStdString(step.name);
  stepWindow_ = {recorded.median_path.start_ns, recorded.median_path.end_ns};
  stepNs_ = recorded.median_step_ns;
  for (size_t node : recorded.median_path.nodes)
    path_.push_back(static_cast<uint32_t>(graph.activity[node]));
  sortedPath_ = path_;
  std::sort(sortedPath_.begin(), sortedPath_.end());
  for (size_t b = 0; b < an::kBoundCount; ++b) {
    const int64_t ns = recorded.median_path.bound_ns[b];
    breakdown_.push_back(
        {QString::fromUtf8(an::to_string(static_cast<an::Bound>(b))), ns,
         stepNs_ > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(stepNs_) : 0.0});
  }
  for (size_t n = 0; n < graph.size(); ++n)
    for (const an::Edge& e : graph.predecessors[n])
      if (e.kind != an::EdgeKind::lane)
        links_.push_back({static_cast<uint32_t>(graph.activity[e.from]),
                          static_cast<uint32_t>(graph.activity[n]), e.kind});
  std::sort(links_.begin(), links_.end(), [](const DependencyLink& a, const DependencyLink& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  linksByTo_.resize(links_.size());
  for (size_t i = 0; i < links_.size(); ++i) linksByTo_[i] = i;
  std::sort(linksByTo_.begin(), linksByTo_.end(),
            [&](size_t a, size_t b) { return links_[a].to < links_[b].to; });
  names_.reserve(trace.activities.size());
  for (const profiler::Activity& a : trace.activities) names_.push_back(a.name);
}

bool CriticalPathModel::onPath(uint32_t activity) const {
  return std::binary_search(sortedPath_.begin(), sortedPath_.end(), activity);
}

std::vector<DependencyLink> CriticalPathModel::linksOf(uint32_t activity) const {
  std::vector<DependencyLink> out;
  auto from = std::lower_bound(links_.begin(), links_.end(), activity,
                               [](const DependencyLink& l, uint32_t a) { return l.from < a; });
  for (; from != links_.end() && from->from == activity; ++from) out.push_back(*from);
  auto to = std::lower_bound(linksByTo_.begin(), linksByTo_.end(), activity,
                             [&](size_t i, uint32_t a) { return links_[i].to < a; });
  for (; to != linksByTo_.end() && links_[*to].to == activity; ++to) out.push_back(links_[*to]);
  return out;
}

std::optional<uint32_t> CriticalPathModel::firstOf(const std::vector<std::string>& names) const {
  const auto named = [&](uint32_t a) {
    return std::find(names.begin(), names.end(), names_[a]) != names.end();
  };
  for (uint32_t a : path_)
    if (named(a)) return a;
  for (uint32_t a = 0; a < names_.size(); ++a)
    if (named(a)) return a;
  return std::nullopt;
}

std::optional<uint32_t> CriticalPathModel::firstLinkedOnPath() const {
  for (uint32_t a : path_)
    for (const DependencyLink& link : linksOf(a))
      if (link.kind != profiler::analysis::EdgeKind::launch) return a;
  return std::nullopt;
}

QString CriticalPathModel::findingText(size_t index) const {
  const an::Finding& f = findings_.at(index);
  const double percent =
      stepNs_ > 0 ? 100.0 * static_cast<double>(f.gain_ns) / static_cast<double>(stepNs_) : 0.0;
  return QStringLiteral("[%1] %2 — gain %3%4 (%5 %)")
      .arg(QString::fromStdString(f.rule), QString::fromStdString(f.summary),
           f.gain_is_bound ? QStringLiteral("up to ") : QString(),
           formatDuration(static_cast<double>(f.gain_ns)))
      .arg(percent, 0, 'f', 1);
}

}  // namespace tunescope::gui
