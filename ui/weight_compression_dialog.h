// The Compress Weights dialog: NNCF's weight-compression options (mode, group size, ratio,
// group-size fallback, backup mode, all layers) and the sensitivity metric with its dataset
// (none, N random samples, one .npy per input, or an image folder). It only collects a
// WeightCompressionRequest; the controller runs it.
#pragma once

#include "core/compression/compression_workflow.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace qs::ui {

/// What the dialog asks for: options and, for a data-aware metric, the dataset — the request of
/// the core workflow, as the CLI's.
using WeightCompressionRequest = compression::WeightCompressionRequest;

/// Modal options dialog for Quantize ▸ Compress Weights.
class WeightCompressionDialog : public QDialog {
    Q_OBJECT

public:
    explicit WeightCompressionDialog(QWidget* parent = nullptr);

    /// Fills the controls from `request` (the last one used).
    void setRequest(const WeightCompressionRequest& request);

    /// The request the controls describe.
    WeightCompressionRequest request() const;

    QComboBox& modeBox() const { return *m_mode; }

    QDoubleSpinBox& ratioBox() const { return *m_ratio; }

    QComboBox& metricBox() const { return *m_metric; }

    QComboBox& datasetBox() const { return *m_dataset; }

    QLineEdit& datasetPathEdit() const { return *m_datasetPath; }

    QSpinBox& samplesBox() const { return *m_samples; }

private:
    void syncEnabled();

    void browseDataset();

    QComboBox* m_mode;
    QSpinBox* m_groupSize;
    QDoubleSpinBox* m_ratio;
    QComboBox* m_fallback;
    QComboBox* m_backup;
    QCheckBox* m_allLayers;
    QComboBox* m_metric;
    QComboBox* m_dataset;
    QLineEdit* m_datasetPath;
    QSpinBox* m_samples;
    QLabel* m_hint;
};

} // namespace qs::ui
