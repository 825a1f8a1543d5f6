#include "ui/graph_page.h"

#include "ui/graph_document.h"
#include "ui/graph_scene.h"
#include "ui/graph_search_bar.h"
#include "ui/graph_view.h"
#include "ui/job_runner.h"
#include "ui/rule_hint_bar.h"

#include <QLabel>
#include <QVBoxLayout>

namespace qs::ui {

GraphPage::GraphPage(JobRunner& jobs, QWidget* parent)
    : QWidget(parent)
    , m_jobs(jobs)
    , m_scene(new GraphScene(this))
    , m_view(new GraphView(m_scene, this))
    , m_searchBar(new GraphSearchBar(*m_view, this))
    , m_ruleHint(new RuleHintBar(this))
    , m_status(new QLabel(this)) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    column->addWidget(m_searchBar);
    column->addWidget(m_ruleHint);
    column->addWidget(m_status);
    column->addWidget(m_view, 1);
    m_status->setAlignment(Qt::AlignCenter);
    m_status->setContentsMargins(0, 6, 0, 6);
    m_status->hide();
}

void GraphPage::showGraph(GraphDocument& document) {
    const int request = ++m_request;
    m_document = &document;
    disconnect(m_quantizationConnection);
    m_quantizationConnection = connect(&document, &GraphDocument::quantizationChanged, this,
                                       &GraphPage::refreshQuantizers);
    disconnect(m_branchChoiceConnection);
    m_ruleHint->dismiss();
    m_branchChoiceConnection =
        connect(&document, &GraphDocument::branchChoiceMerged, m_ruleHint,
                [this, doc = &document](const QList<int>& ids) { m_ruleHint->offer(*doc, ids); });
    m_layingOut = true;
    m_searchBar->deactivate();
    m_scene->clearGraph();
    m_model = m_scene->prepareLayout(document.graph());
    m_status->setText(
        tr("Laying out %n node(s)…", nullptr, static_cast<int>(m_model.items.size())));
    m_status->show();
    m_view->sceneChanged();
    const layout::LayoutInput input = m_model.input;
    m_jobs.start<layout::Layout>(
        tr("Laying out the graph"),
        [input](Progress& progress) { return layout::computeLayout(input, {}, progress); },
        [this, request](Result<layout::Layout> placed) {
            if (request != m_request) {
                return; // a newer graph was asked for meanwhile
            }
            m_layingOut = false;
            if (!placed.ok() || m_document.isNull()) {
                const QString message = placed.ok()
                                            ? tr("The model was closed")
                                            : QString::fromStdString(placed.error().toString());
                m_status->setText(tr("No layout: %1").arg(message));
                Q_EMIT layoutFinished(false, message);
                return;
            }
            m_status->hide();
            m_scene->populate(m_document->graph(), m_model, *placed);
            refreshQuantizers();
            m_view->sceneChanged();
            m_view->fitGraph();
            m_view->setFocus(); // +, -, Space and the wheel work right away
            Q_EMIT layoutFinished(true, {});
        });
}

void GraphPage::refreshQuantizers() {
    if (m_document.isNull() || m_layingOut) {
        return;
    }
    m_scene->showQuantizers(m_document->quantizerMarks());
}

void GraphPage::revealQuantizer(int id, const QString& nodeName) {
    for (NodeItem* node : m_scene->nodeItems()) {
        if (!node->content().io && node->content().fullName == nodeName) {
            m_view->centerOnNode(node);
            break;
        }
    }
    if (QuantizerBadgeItem* badge = m_scene->badge(id)) {
        m_view->ensureVisible(badge);
    }
}

} // namespace qs::ui
