#include "ui/selection_sync.h"

#include "ui/bitwidth_chart.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/inspector_panel.h"
#include "ui/quantizer_panel.h"

#include <QDockWidget>

#include <vector>

namespace qs::ui {

SelectionSync::SelectionSync(GraphPage& page, const Docks& docks, QObject* parent)
    : QObject(parent)
    , m_page(page)
    , m_docks(docks) {
    connect(m_page.scene(), &QGraphicsScene::selectionChanged, this,
            &SelectionSync::inspectSelection);
    // A row first reveals its op (which the inspector then shows), then its quantizer wins.
    connect(&m_docks.quantizers, &QuantizerPanel::quantizerActivated, &m_page,
            &GraphPage::revealQuantizer);
    connect(&m_docks.quantizers, &QuantizerPanel::quantizerActivated, &m_docks.inspector,
            &InspectorPanel::showQuantizer);
    connect(&m_docks.chart, &BitwidthChartPanel::quantizersClicked, this,
            [this](const QList<int>& ids) {
                m_page.scene()->selectQuantizers(std::vector<int>(ids.begin(), ids.end()));
                m_docks.quantizers.selectQuantizers(ids);
                m_docks.quantizerDock.show();
            });
}

void SelectionSync::inspectSelection() {
    const QList<QGraphicsItem*> selected = m_page.scene()->selectedItems();
    if (selected.size() != 1) {
        return; // a multi-selection (a chart bar) keeps what the inspector shows
    }
    const QGraphicsItem* item = selected.front();
    if (item->type() == QuantizerBadgeItem::Type) {
        const int id = static_cast<const QuantizerBadgeItem*>(item)->quantizerId();
        m_docks.inspector.showQuantizer(id);
        m_docks.quantizers.selectQuantizers({id}); // the table follows the graph
    } else if (item->type() == NodeItem::Type) {
        const auto* node = static_cast<const NodeItem*>(item);
        if (!node->node().valid()) {
            return; // graph inputs and outputs have nothing to inspect
        }
        m_docks.inspector.showNode(node->content().fullName);
    } else {
        return;
    }
    if (m_docks.inspectorDock.isHidden()) {
        m_docks.inspectorDock.show();
    }
    m_docks.inspectorDock.raise();
}

} // namespace qs::ui
