#include "ui/features/calibration/calibration_dialog.h"

#include "ui/dataset_picker.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace qs::ui {

namespace {
constexpr int kDefaultBatch = 8;
} // namespace

CalibrationDialog::CalibrationDialog(QWidget* parent)
    : QDialog(parent)
    , m_picker(new DatasetPicker({.allowNone = false,
                                  .defaultSamples = quantization::kDefaultCalibrationSamples,
                                  .defaultBatch = kDefaultBatch,
                                  .autoBatch = false},
                                 this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
    setWindowTitle(tr("Calibrate"));
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #c62828"));
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Calibrate"));
    auto* column = new QVBoxLayout(this);
    column->addWidget(m_picker);
    column->addWidget(m_problem);
    column->addWidget(m_buttons);
    connect(m_picker, &DatasetPicker::changed, m_problem, &QLabel::clear);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &CalibrationDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &CalibrationDialog::reject);
}

void CalibrationDialog::setRequest(const CalibrationRequest& request) {
    m_picker->showSource(request.source, request.labels);
    m_picker->setBatchSize(static_cast<int>(request.batchSize));
}

QString CalibrationDialog::problem() const {
    return m_problem->text();
}

Result<CalibrationRequest> CalibrationDialog::request() const {
    CalibrationRequest request;
    QS_TRY(m_picker->applyTo(request.source));
    request.batchSize = m_picker->batchSize();
    request.labels = m_picker->labels();
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
