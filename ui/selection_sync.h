// SelectionSync: keeps the inspector, the Bit Widths chart, the Quantizers table and the graph
// selection in step — a single selected op or badge shows in the Inspector dock, a table row
// reveals its op in the graph and its quantizer there, and a chart bar selects its quantizers in
// the graph and the table.
#pragma once

#include <QObject>

class QDockWidget;

namespace qs::ui {

class BitwidthChartPanel;
class GraphPage;
class InspectorPanel;
class QuantizerPanel;

/// The selection links between the graph page and the docks.
class SelectionSync : public QObject {
    Q_OBJECT

public:
    /// The docks hold the panels; they are shown (and raised) when a selection needs them.
    struct Docks {
        InspectorPanel& inspector;
        QDockWidget& inspectorDock;
        QuantizerPanel& quantizers;
        QDockWidget& quantizerDock;
        BitwidthChartPanel& chart;
    };

    SelectionSync(GraphPage& page, const Docks& docks, QObject* parent = nullptr);

private:
    /// Shows the single selected op or badge in the inspector.
    void inspectSelection();

    GraphPage& m_page;
    Docks m_docks;
};

} // namespace qs::ui
