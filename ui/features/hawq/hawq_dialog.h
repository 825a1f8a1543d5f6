// HawqDialog: Quantize ▸ HAWQ… — HW config, target BitOps compression ratio, candidate bits,
// activation assignment mode, search (trace order or the exact Pareto front), the Hessian samples
// and iterations, and the dataset (the shared DatasetPicker). Accepts only a valid request.
#pragma once

#include "core/mixed_precision/hawq_workflow.h"
#include "core/support/result.h"

#include <QDialog>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace qs::ui {

class DatasetPicker;

class HawqDialog : public QDialog {
    Q_OBJECT

public:
    explicit HawqDialog(QWidget* parent = nullptr);

    void setRequest(const mixed_precision::HawqRequest& request);

    /// The request from the fields (settings other than the HW config are the document's).
    Result<mixed_precision::HawqRequest> request() const;

    void accept() override;

    QComboBox& hwBox() const { return *m_hw; }

    QDoubleSpinBox& ratioBox() const { return *m_ratio; }

    QLineEdit& bitsEdit() const { return *m_bits; }

    QComboBox& searchBox() const { return *m_search; }

    DatasetPicker& picker() const { return *m_picker; }

private:
    QComboBox* m_hw;
    QDoubleSpinBox* m_ratio;
    QLineEdit* m_bits;
    QComboBox* m_mode;
    QComboBox* m_search;
    QSpinBox* m_samples;
    QSpinBox* m_iterations;
    DatasetPicker* m_picker;
    QLabel* m_problem;
};

} // namespace qs::ui
