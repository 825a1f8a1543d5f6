// The "Weight Compression" dock: the open document's compression plan as a table (one row per
// weight: node, op type, weight, shape, parameters, ratio-defining, mode, group size, sensitivity,
// activation statistic, note; the mode coloured by bit width) next to a Qt Charts bar chart of
// parameters per mode (NNCF's "% all parameters" as absolute bars in the bit-width colours). A
// separate dock, not the Quantizers table: weight compression is its own algorithm with its own
// per-weight decisions.
#pragma once

#include <QPointer>
#include <QWidget>

class QChart;
class QLabel;
class QTableWidget;

namespace qs::ui {

class GraphDocument;

/// Table and chart of a weight-compression plan.
class WeightCompressionPanel : public QWidget {
    Q_OBJECT

public:
    enum Column {
        NodeColumn,
        OpTypeColumn,
        WeightColumn,
        ShapeColumn,
        ParametersColumn,
        RatioDefiningColumn,
        ModeColumn,
        GroupSizeColumn,
        SensitivityColumn,
        ActivationColumn,
        NoteColumn,
        ColumnCount
    };

    explicit WeightCompressionPanel(QWidget* parent = nullptr);

    /// Shows `document`'s plan (nullptr: empty) and follows its changes.
    void setDocument(GraphDocument* document);

    QTableWidget& table() const { return *m_table; }

    /// Parameters per mode: one stacked horizontal series, set i (coloured by its bit width) holds
    /// the parameters of mode i in category i, zero elsewhere; widest precision first.
    QChart& chart() const { return *m_chart; }

    /// Redraws from the document's plan.
    void reload();

Q_SIGNALS:
    /// A row was activated: the op `nodeName` consumes the weight.
    void weightActivated(const QString& nodeName);

private:
    void reloadChart();

    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    QLabel* m_summary;
    QTableWidget* m_table;
    QChart* m_chart;
};

} // namespace qs::ui
