// GraphPage: the central page while a model is open — the search bar over the GraphView of a
// GraphScene. It measures the document's graph and groups it by name scopes on the GUI thread
// (linear, no layout), lays out the groups that are open through the JobRunner (progress, cancel;
// the GUI thread never waits on it) and fills the scene when the layout arrives, with the
// document's quantizer badges, which it redraws whenever the quantization changes. Expanding or
// collapsing a group re-lays only what changed (a per-graph cache) and keeps the group where it
// was on screen. A newer request cancels the older one. Groups whose dot call ran out of its time
// budget are drawn by the fast layered fallback first; once the user has been idle for a moment
// they are laid out by dot again in the background with a long budget (any input cancels that)
// and the graph is redrawn with dot's drawing, the view kept where it was.
#pragma once

#include "core/layout/graph_layout.h"
#include "core/layout/group_tree.h"
#include "core/layout/grouped_layout.h"

#include <QPointer>
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QLabel;
class QTimer;

namespace qs::ui {

class GraphDocument;
class NodeItem;
class GraphScene;
class GraphSearchBar;
class GraphView;
class JobRunner;
class RuleHintBar;

/// Graph view, search bar and the layout job behind them.
class GraphPage : public QWidget {
    Q_OBJECT

public:
    explicit GraphPage(JobRunner& jobs, QWidget* parent = nullptr);

    GraphScene* scene() const { return m_scene; }

    GraphView* view() const { return m_view; }

    GraphSearchBar* searchBar() const { return m_searchBar; }

    /// The bar offering the requantization rule for per-branch bit widths.
    RuleHintBar* ruleHint() const { return m_ruleHint; }

    /// Lays out `document`'s graph in the background and shows it when done.
    void showGraph(GraphDocument& document);

    /// True while a layout job for the newest request runs.
    bool isLayingOut() const { return m_layingOut; }

    /// The boxes of the graph shown (for DOT export).
    const layout::GraphLayoutModel& layoutModel() const { return m_model; }

    /// The document whose graph is shown, or nullptr.
    GraphDocument* document() const { return m_document.data(); }

    /// Centres op `nodeName` (selected) with quantizer `id`'s badge in view.
    void revealQuantizer(int id, const QString& nodeName);

    /// Selects op `nodeName` alone and centres it, opening the groups around it first.
    void selectNode(const QString& nodeName);

    /// Redraws the quantizer badges from the document's current setup.
    void refreshQuantizers();

    /// Opens or closes `group` and re-lays the graph, keeping the group in place on screen.
    void toggleGroup(uint32_t group);

    /// Opens (or closes) every group.
    void expandAllGroups(bool expanded);

    /// Opens the groups whose scope path is one of `paths` ("/features/denseblock2"), with
    /// their parents; false when none matched.
    bool expandScopes(const QStringList& paths);

    /// Opens the groups around layout item `item` so that it is drawn, then calls `then`
    /// (right away when nothing had to open).
    void revealItem(uint32_t item, std::function<void()> then);

    /// Which groups are open, by GroupTree index.
    const std::vector<bool>& expandedGroups() const { return m_expanded; }

    /// The keys of the open groups, as a session saves them (SessionView::expandedGroups).
    std::vector<std::string> expandedGroupKeys() const;

    /// Opens exactly the groups named by `keys` (keys this graph lacks are ignored), re-lays the
    /// graph and calls `then` once it is shown; calls `then` at once when nothing changes.
    void showExpandedGroups(const std::vector<std::string>& keys, std::function<void()> then);

    const layout::GroupTree& groupTree() const { return m_tree; }

    /// Cancels the running layout, if any (a second open does this too).
    void cancelLayout();

    /// Layout options for the next layouts (tests shorten the dot budget).
    void setLayoutOptions(const layout::GroupedLayoutOptions& options) { m_options = options; }

    /// How long the user must leave the view alone before fallback groups are refined.
    void setIdleRefinementDelay(int milliseconds);

    /// Groups of the shown graph drawn by the layered fallback and not refined yet.
    size_t pendingRefinements() const;

    /// Fallbacks of the newest layout (dot calls over budget).
    size_t lastFallbacks() const { return m_lastFallbacks; }

    bool eventFilter(QObject* watched, QEvent* event) override;

Q_SIGNALS:
    /// The newest layout was applied (`ok`) or failed/cancelled (`message` says why).
    void layoutFinished(bool ok, const QString& message);

private:
    /// Lays out the open groups in the background; keeps `anchorGroup` where it is on screen
    /// and calls `then` once the new layout is shown.
    void relayout(std::optional<uint32_t> anchorGroup, std::function<void()> then = {});

    /// The drawn box of op `nodeName`, or nullptr.
    NodeItem* opItem(const QString& nodeName) const;

    /// Calls `show` once op `nodeName` is drawn (opening the groups around it first).
    void revealOp(const QString& nodeName, const std::function<void()>& show);

    /// Runs refineFallbacks() in the background, then redraws with what it refined.
    void refineWhenIdle();

    /// Input in the view: stops a running refinement and restarts the idle wait.
    void noteActivity();

    JobRunner& m_jobs;
    GraphScene* m_scene;
    GraphView* m_view;
    GraphSearchBar* m_searchBar;
    RuleHintBar* m_ruleHint;
    QLabel* m_status;
    layout::GraphLayoutModel m_model;
    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_quantizationConnection;
    QMetaObject::Connection m_branchChoiceConnection;
    int m_request = 0;
    bool m_layingOut = false;
    layout::GroupTree m_tree;
    std::vector<bool> m_expanded;
    std::vector<layout::Size> m_groupSizes;
    std::shared_ptr<layout::GroupLayoutCache> m_cache;
    std::shared_ptr<std::atomic<bool>> m_stop; ///< set to cancel the running layout
    layout::GroupedLayoutOptions m_options;
    size_t m_lastFallbacks = 0;
    QTimer* m_idleTimer;
    std::shared_ptr<std::atomic<bool>> m_refineStop; ///< set to cancel the running refinement
};

} // namespace qs::ui
