// Quantize ▸ Calibrate…: chooses the calibration dataset — a folder of images, a .npy file (one
// model input) or N seeded random samples — the number of samples (300 by default, as NNCF) and
// the batch size (Auto: the model's static batch, else 8) and the range estimator, and checks the
// choice before the dialog closes.
#pragma once

#include "ui/calibration.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QRadioButton;
class QSpinBox;

namespace qs::ui {

/// The dataset chooser of Quantize ▸ Calibrate….
class CalibrationDialog : public QDialog {
    Q_OBJECT

public:
    enum class Source { Images, Npy, Random };

    explicit CalibrationDialog(QWidget* parent = nullptr);

    /// Picks the source and its path (ignored for Random).
    void setSource(Source source, const QString& path = {});

    void setSamples(int samples);

    /// 0: Auto (the one batch-size rule of core/runtime/dataset_request.h).
    void setBatchSize(int batchSize);

    QComboBox& estimatorBox() const { return *m_estimator; }

    /// What the dialog asks for, or an error naming the missing or wrong field.
    Result<CalibrationRequest> request() const;

    /// Accepts only a valid request (otherwise shows why under the fields).
    void accept() override;

    /// The line under the fields that says what is wrong ("" when nothing).
    QString problem() const;

private:
    void browse();

    void updateFields();

    QRadioButton* m_images;
    QRadioButton* m_npy;
    QRadioButton* m_random;
    QLineEdit* m_path;
    QSpinBox* m_samples;
    QSpinBox* m_batchSize;
    QComboBox* m_estimator;
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
};

} // namespace qs::ui
