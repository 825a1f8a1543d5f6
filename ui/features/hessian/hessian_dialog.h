// Quantize ▸ Compute Hessian Scores…: the dataset with the shared DatasetPicker (random samples,
// a .npy file, images, class folders), the number of samples scored (the picker's sample count:
// random N, or the first N of a file or folder), the Hessian batch (the picker's batch size) and
// the Hutchinson iterations (100 by default, MCT's); checked before the dialog closes.
#pragma once

#include "core/hessian/hessian_scores_request.h"
#include "core/runtime/dataset_request.h"
#include "core/support/result.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QSpinBox;

namespace qs::ui {

class DatasetPicker;

/// What the dialog asks for: the dataset and the estimator's settings.
struct HessianJobRequest {
    runtime::DatasetRequest dataset;
    int64_t samples = 8;
    int64_t batch = 8;
    int iterations = hessian::kDefaultHessianIterations;

    /// The core request: activation scores per output channel (the per-tensor score is their
    /// sum) of the default targets (every Conv, ConvTranspose, Gemm and MatMul).
    hessian::HessianScoresRequest scoresRequest() const;
};

class HessianDialog : public QDialog {
    Q_OBJECT

public:
    explicit HessianDialog(QWidget* parent = nullptr);

    DatasetPicker& picker() const { return *m_picker; }

    QSpinBox& iterationsBox() const { return *m_iterations; }

    void setRequest(const HessianJobRequest& request);

    /// What the dialog asks for, or an error naming the wrong field.
    Result<HessianJobRequest> request() const;

    void accept() override;

    QString problem() const;

private:
    DatasetPicker* m_picker;
    QSpinBox* m_iterations;
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
};

} // namespace qs::ui
