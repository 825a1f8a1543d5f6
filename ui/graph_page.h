// GraphPage: the central page while a model is open — the search bar over the GraphView of a
// GraphScene. It measures the document's graph on the GUI thread, lays it out through the
// JobRunner (progress, cancel; the window stays responsive) and fills the scene when the layout
// arrives, with the document's quantizer badges, which it redraws whenever the quantization
// changes; a newer request makes older results stale.
#pragma once

#include "core/layout/graph_layout.h"

#include <QPointer>
#include <QWidget>

class QLabel;

namespace qs::ui {

class GraphDocument;
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

    /// Redraws the quantizer badges from the document's current setup.
    void refreshQuantizers();

Q_SIGNALS:
    /// The newest layout was applied (`ok`) or failed/cancelled (`message` says why).
    void layoutFinished(bool ok, const QString& message);

private:
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
};

} // namespace qs::ui
