#include "ui/features/calibration/calibration_dialog.h"

#include "ui/dataset_picker.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace qs::ui {

CalibrationDialog::CalibrationDialog(QWidget* parent)
    : QDialog(parent)
    , m_picker(new DatasetPicker({.allowNone = false,
                                  .defaultSamples = runtime::kDefaultCalibrationSamples,
                                  .defaultBatch = 0,
                                  .autoBatch = true},
                                 this))
    , m_estimator(new QComboBox(this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
    setWindowTitle(tr("Calibrate"));
    for (const quantization::RangeEstimator estimator :
         {quantization::RangeEstimator::Nncf, quantization::RangeEstimator::MinMax,
          quantization::RangeEstimator::MeanMinMax, quantization::RangeEstimator::Percentile}) {
        m_estimator->addItem(QString::fromUtf8(quantization::rangeEstimatorName(estimator).data()),
                             static_cast<int>(estimator));
    }
    m_estimator->setToolTip(tr("nncf: NNCF's PTQ default (mean of per-sample min/max per "
                               "tensor, min/max per channel)"));
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #c62828"));
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Calibrate"));
    auto* column = new QVBoxLayout(this);
    column->addWidget(m_picker);
    auto* form = new QFormLayout;
    form->addRow(tr("Range &estimator:"), m_estimator);
    column->addLayout(form);
    column->addWidget(m_problem);
    column->addWidget(m_buttons);
    connect(m_picker, &DatasetPicker::changed, m_problem, &QLabel::clear);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &CalibrationDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &CalibrationDialog::reject);
}

void CalibrationDialog::setRequest(const CalibrationRequest& request) {
    m_picker->showSource(request.dataset);
    m_picker->setBatchSize(static_cast<int>(request.dataset.batchSize.value_or(0)));
    m_estimator->setCurrentIndex(m_estimator->findData(static_cast<int>(request.estimator)));
}

void CalibrationDialog::setBatchSize(int batchSize) {
    m_picker->setBatchSize(batchSize);
}

QString CalibrationDialog::problem() const {
    return m_problem->text();
}

Result<CalibrationRequest> CalibrationDialog::request() const {
    CalibrationRequest request;
    QS_TRY(m_picker->applyTo(request.dataset));
    request.estimator =
        static_cast<quantization::RangeEstimator>(m_estimator->currentData().toInt());
    return request;
}

void CalibrationDialog::accept() {
    const Result<CalibrationRequest> checked = request();
    if (!checked.ok()) {
        m_problem->setText(QString::fromStdString(checked.error().message()));
        return;
    }
    QDialog::accept();
}

} // namespace qs::ui
