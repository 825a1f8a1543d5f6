// Quantize ▸ Calibrate…: chooses the calibration dataset with the shared DatasetPicker — seeded
// random samples, a .npy file (one model input), a folder of images or of class subfolders, an
// optional labels file — the number of samples (300 by default, as NNCF), the batch size
// (automatic: the model's static batch, else 8) and the range estimator, and checks the choice
// before the dialog closes.
#pragma once

#include "ui/features/calibration/calibration.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;

namespace qs::ui {

class DatasetPicker;

/// The dataset chooser of Quantize ▸ Calibrate….
class CalibrationDialog : public QDialog {
    Q_OBJECT

public:
    explicit CalibrationDialog(QWidget* parent = nullptr);

    DatasetPicker& picker() const { return *m_picker; }

    /// Fills the fields from `request` (the last one used).
    void setRequest(const CalibrationRequest& request);

    /// 0: automatic (the one batch-size rule of core/runtime/dataset_request.h).
    void setBatchSize(int batchSize);

    QComboBox& estimatorBox() const { return *m_estimator; }

    /// What the dialog asks for, or an error naming the missing or wrong field.
    Result<CalibrationRequest> request() const;

    /// Accepts only a valid request (otherwise shows why under the fields).
    void accept() override;

    /// The line under the fields that says what is wrong ("" when nothing).
    QString problem() const;

private:
    DatasetPicker* m_picker;
    QComboBox* m_estimator;
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
};

} // namespace qs::ui
