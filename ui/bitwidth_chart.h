// The "Bit widths" dock: two Qt Charts bar charts of the open document's finalized setup —
// quantizers per bit width (activations and weights as separate bars) and quantized weight
// parameters per bit width. Counts come from core's bitwidthDistribution(); the charts redraw
// whenever the quantization changes; clicking a bar reports its bit width and the quantizers it
// counts (the main window then selects them in the graph and the Quantizers table).
#pragma once

#include <QList>
#include <QPointer>
#include <QWidget>

class QChart;
class QChartView;

namespace qs::ui {

class GraphDocument;

/// Bar charts of the bit-width distribution.
class BitwidthChartPanel : public QWidget {
    Q_OBJECT

public:
    explicit BitwidthChartPanel(QWidget* parent = nullptr);

    /// Shows `document`'s distribution (nullptr: empty) and follows its changes.
    void setDocument(GraphDocument* document);

    /// The chart of quantizer counts (series 0: activations, 1: weights).
    QChart& quantizerChart() const { return *m_quantizers; }

    /// The chart of weight parameters.
    QChart& parameterChart() const { return *m_parameters; }

    /// The quantizers of the finalized setup with `bits` bits, weight or activation ones, by id.
    QList<int> quantizersInBar(int bits, bool weights) const;

Q_SIGNALS:
    /// A bar of bit width `bits` was clicked (0: float).
    void bitwidthClicked(int bits);

    /// A bar was clicked: the ids of the quantizers it counts (activation or weight ones).
    void quantizersClicked(const QList<int>& ids);

private:
    void reload();

    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    QChart* m_quantizers;
    QChart* m_parameters;
};

} // namespace qs::ui
