// ModelInfoPanel: the summary of an open model — file, producer, opsets, node and parameter
// counts, MACs, the inputs and outputs with dtype and shape, how often each op type occurs, the
// ops we keep opaque, and import warnings. It renders a core ModelInfo and computes nothing.
#pragma once

#include "core/report/model_info.h"

#include <QWidget>

#include <map>

class QChartView;
class QGroupBox;
class QLabel;
class QTreeWidget;

namespace qs::ui {

/// Shows a report::ModelInfo with forms and tables.
class ModelInfoPanel : public QWidget {
    Q_OBJECT

public:
    explicit ModelInfoPanel(QWidget* parent = nullptr);

    /// Replaces what the panel shows.
    void setInfo(const report::ModelInfo& info);

    /// The rows of the summary form.
    enum class Field { File, Producer, IrVersion, Opsets, Nodes, Initializers, Parameters, Macs };

    /// The text shown for `field` in the summary form.
    QString summaryValue(Field field) const;

    QTreeWidget* inputs() const { return m_inputs; }

    QTreeWidget* outputs() const { return m_outputs; }

    QTreeWidget* opTypes() const { return m_opTypes; }

    QTreeWidget* opaqueOps() const { return m_opaqueOps; }

    QTreeWidget* warnings() const { return m_warnings; }

    /// Bar chart of the most frequent op types.
    QChartView* opTypeChart() const { return m_opTypeChart; }

protected:
    void changeEvent(QEvent* event) override;

private:
    QGroupBox* makeSummaryBox();

    QWidget* makeDetailsColumn();

    void arrangePage();

    void fillSummary(const report::ModelInfo& info);

    void fillOpTypes(const report::ModelInfo& info);

    void fillOpaqueOps(const report::ModelInfo& info);

    void fillWarnings(const report::ModelInfo& info);

    void fillOpTypeChart(const report::ModelInfo& info);

    void applyChartColors();

    std::map<Field, QLabel*> m_summary;
    QTreeWidget* m_inputs;
    QTreeWidget* m_outputs;
    QTreeWidget* m_opTypes;
    QTreeWidget* m_opaqueOps;
    QTreeWidget* m_warnings;
    QChartView* m_opTypeChart;
    QGroupBox* m_inputsBox = nullptr;
    QGroupBox* m_outputsBox = nullptr;
    QGroupBox* m_opTypesBox = nullptr;
    QGroupBox* m_opaqueBox = nullptr;
    QGroupBox* m_warningsBox = nullptr;
    QGroupBox* m_opTypeChartBox = nullptr;
};

} // namespace qs::ui
