// PruningDialog: Compress ▸ Prune… — the weight-memory target (a percentage of the dense FP32
// weight bytes on a slider, or a byte count), the HW config (its SIMD sizes), a SIMD override and
// padding, the importance (lfh, l2, random), the LFH samples, iterations and seed, and the LFH
// samples' dataset (the shared DatasetPicker; l2 and random need none). Accepts only a valid
// request.
#pragma once

#include "core/pruning/pruning_workflow.h"
#include "core/support/result.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;

namespace qs::ui {

class DatasetPicker;

class PruningDialog : public QDialog {
    Q_OBJECT

public:
    explicit PruningDialog(QWidget* parent = nullptr);

    void setRequest(const pruning::PruningRequest& request);

    /// Shows the model's dense weight bytes next to the target (and what the target means).
    void setDenseBytes(int64_t bytes);

    /// The request from the fields, or an error naming the wrong one.
    Result<pruning::PruningRequest> request() const;

    void accept() override;

    QString problem() const;

    QComboBox& targetKindBox() const { return *m_targetKind; }

    QSlider& percentSlider() const { return *m_slider; }

    QDoubleSpinBox& percentBox() const { return *m_percent; }

    QDoubleSpinBox& bytesBox() const { return *m_bytes; }

    QComboBox& importanceBox() const { return *m_importance; }

    QSpinBox& simdBox() const { return *m_simd; }

    QSpinBox& samplesBox() const { return *m_samples; }

    QSpinBox& iterationsBox() const { return *m_iterations; }

    DatasetPicker& picker() const { return *m_picker; }

private:
    void syncFields();

    void showTargetHint();

    QComboBox* m_targetKind;
    QSlider* m_slider;
    QDoubleSpinBox* m_percent;
    QDoubleSpinBox* m_bytes;
    QLabel* m_targetHint;
    QComboBox* m_hw;
    QSpinBox* m_simd;
    QCheckBox* m_padding;
    QComboBox* m_importance;
    QSpinBox* m_samples;
    QSpinBox* m_iterations;
    QSpinBox* m_seed;
    DatasetPicker* m_picker;
    QLabel* m_problem;
    int64_t m_denseBytes = 0;
};

} // namespace qs::ui
