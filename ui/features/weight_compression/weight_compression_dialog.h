// The Compress Weights dialog: NNCF's weight-compression options (mode, group size, ratio,
// group-size fallback, backup mode, all layers) and the sensitivity metric with its dataset (the
// shared DatasetPicker: none, N random samples, a .npy file, an image folder or class subfolders,
// optional labels). It only collects and checks a WeightCompressionRequest; the controller runs it.
#pragma once

#include "core/compression/compression_workflow.h"
#include "ui/dataset_picker.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
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

    /// The request the controls describe, or an error naming the missing or wrong field.
    Result<WeightCompressionRequest> request() const;

    /// Accepts only a valid request (otherwise shows why under the fields).
    void accept() override;

    QComboBox& modeBox() const { return *m_mode; }

    QDoubleSpinBox& ratioBox() const { return *m_ratio; }

    QComboBox& metricBox() const { return *m_metric; }

    DatasetPicker& picker() const { return *m_picker; }

private:
    void syncEnabled();

    QComboBox* m_mode;
    QSpinBox* m_groupSize;
    QDoubleSpinBox* m_ratio;
    QComboBox* m_fallback;
    QComboBox* m_backup;
    QCheckBox* m_allLayers;
    QComboBox* m_metric;
    DatasetPicker* m_picker;
    QLabel* m_hint;
    QLabel* m_problem;
};

} // namespace qs::ui
