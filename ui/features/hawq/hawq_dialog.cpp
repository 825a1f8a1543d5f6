#include "ui/features/hawq/hawq_dialog.h"

#include "ui/dataset_picker.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace qs::ui {

HawqDialog::HawqDialog(QWidget* parent)
    : QDialog(parent)
    , m_hw(new QComboBox(this))
    , m_ratio(new QDoubleSpinBox(this))
    , m_bits(new QLineEdit(QStringLiteral("2,4,8"), this))
    , m_mode(new QComboBox(this))
    , m_search(new QComboBox(this))
    , m_samples(new QSpinBox(this))
    , m_iterations(new QSpinBox(this))
    , m_picker(
          new DatasetPicker({.allowNone = false, .defaultSamples = 32, .autoBatch = true}, this))
    , m_problem(new QLabel(this)) {
    setWindowTitle(tr("HAWQ Mixed Precision"));
    m_hw->addItems({QStringLiteral("cpu"), QStringLiteral("gpu"), QStringLiteral("npu")});
    m_hw->setEditable(true);
    m_hw->setToolTip(tr("A built-in HW config or the path of a HW config JSON"));
    m_ratio->setRange(0.25, 16.0);
    m_ratio->setDecimals(3);
    m_ratio->setSingleStep(0.05);
    m_ratio->setValue(1.5);
    m_ratio->setToolTip(tr("BitOps compression ratio: uniform INT8 = 1.0, INT4 = 2.0"));
    m_mode->addItems({QStringLiteral("liberal"), QStringLiteral("strict")});
    m_search->addItems({QStringLiteral("trace-order"), QStringLiteral("pareto")});
    m_search->setToolTip(tr("trace-order: NNCF's candidates; pareto: the exact front"));
    m_samples->setRange(1, 100000);
    m_samples->setValue(32);
    m_iterations->setRange(1, 100000);
    m_iterations->setValue(100);
    m_problem->setStyleSheet(QStringLiteral("color: #c0392b"));
    m_problem->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Run HAWQ"));
    auto* form = new QFormLayout;
    form->addRow(tr("HW config:"), m_hw);
    form->addRow(tr("Target ratio:"), m_ratio);
    form->addRow(tr("Bits:"), m_bits);
    form->addRow(tr("Activation bits:"), m_mode);
    form->addRow(tr("Search:"), m_search);
    form->addRow(tr("Hessian samples:"), m_samples);
    form->addRow(tr("Iterations:"), m_iterations);
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(m_picker);
    column->addWidget(m_problem);
    column->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &HawqDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &HawqDialog::reject);
    connect(m_picker, &DatasetPicker::changed, m_problem, &QLabel::clear);
}

void HawqDialog::setRequest(const mixed_precision::HawqRequest& request) {
    m_hw->setCurrentText(QString::fromStdString(request.settings.hw));
    m_ratio->setValue(request.compressionRatio);
    QString bits;
    for (const int b : request.bits) {
        bits += (bits.isEmpty() ? QString() : QStringLiteral(",")) + QString::number(b);
    }
    m_bits->setText(bits);
    m_mode->setCurrentText(QString::fromUtf8(mixed_precision::assignmentModeName(request.mode)));
    m_search->setCurrentText(QString::fromUtf8(mixed_precision::searchName(request.search)));
    m_samples->setValue(static_cast<int>(request.samples));
    m_iterations->setValue(request.iterations);
    if (!request.dataset.empty()) {
        m_picker->showSource(request.dataset);
    }
}

Result<mixed_precision::HawqRequest> HawqDialog::request() const {
    mixed_precision::HawqRequest request;
    request.settings.hw = m_hw->currentText().trimmed().toStdString();
    if (request.settings.hw.empty()) {
        return Error(Errc::InvalidArgument, "choose a HW config");
    }
    request.compressionRatio = m_ratio->value();
    request.bits.clear();
    for (const QString& part : m_bits->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int bits = part.trimmed().toInt(&ok);
        if (!ok || bits < 1 || bits > 32) {
            return Error(Errc::InvalidArgument,
                         "bits: '" + part.trimmed().toStdString() + "' is not a bit width");
        }
        request.bits.push_back(bits);
    }
    if (request.bits.empty()) {
        return Error(Errc::InvalidArgument, "bits: give at least one bit width, e.g. 4,8");
    }
    QS_ASSIGN_OR_RETURN(request.mode,
                        mixed_precision::parseAssignmentMode(m_mode->currentText().toStdString()));
    QS_ASSIGN_OR_RETURN(request.search,
                        mixed_precision::parseSearch(m_search->currentText().toStdString()));
    request.samples = m_samples->value();
    request.iterations = m_iterations->value();
    QS_TRY(m_picker->applyTo(request.dataset));
    return request;
}

void HawqDialog::accept() {
    const Result<mixed_precision::HawqRequest> checked = request();
    if (!checked.ok()) {
        m_problem->setText(QString::fromStdString(checked.error().message()));
        return;
    }
    QDialog::accept();
}

} // namespace qs::ui
