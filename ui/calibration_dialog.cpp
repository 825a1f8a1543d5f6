#include "ui/calibration_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace qs::ui {

namespace {
constexpr int kDefaultSamples = 300; // NNCF's subset_size
constexpr int kMaxSamples = 100000;
constexpr int kMaxBatch = 1024;
} // namespace

CalibrationDialog::CalibrationDialog(QWidget* parent)
    : QDialog(parent)
    , m_images(new QRadioButton(tr("&Image folder"), this))
    , m_npy(new QRadioButton(tr("&NumPy file (.npy)"), this))
    , m_random(new QRadioButton(tr("&Random samples (seeded standard normal)"), this))
    , m_path(new QLineEdit(this))
    , m_samples(new QSpinBox(this))
    , m_batchSize(new QSpinBox(this))
    , m_estimator(new QComboBox(this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
    setWindowTitle(tr("Calibrate"));
    m_random->setChecked(true);
    auto* browse = new QPushButton(tr("&Browse…"), this);
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    m_samples->setRange(1, kMaxSamples);
    m_samples->setValue(kDefaultSamples);
    m_batchSize->setRange(0, kMaxBatch);
    m_batchSize->setSpecialValueText(tr("Auto"));
    m_batchSize->setValue(0);
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

    auto* form = new QFormLayout;
    form->addRow(tr("Dataset:"), m_images);
    form->addRow(QString(), m_npy);
    form->addRow(QString(), m_random);
    auto* pathLabel = new QLabel(tr("&Path:"), this);
    pathLabel->setBuddy(m_path); // a row with a layout gets no buddy by itself
    form->addRow(pathLabel, pathRow);
    form->addRow(tr("&Samples:"), m_samples);
    form->addRow(tr("&Batch size:"), m_batchSize);
    form->addRow(tr("Range &estimator:"), m_estimator);
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(m_problem);
    column->addWidget(m_buttons);

    for (QRadioButton* button : {m_images, m_npy, m_random}) {
        connect(button, &QRadioButton::toggled, this, &CalibrationDialog::updateFields);
    }
    connect(m_path, &QLineEdit::textChanged, m_problem, &QLabel::clear);
    connect(browse, &QPushButton::clicked, this, &CalibrationDialog::browse);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &CalibrationDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &CalibrationDialog::reject);
    updateFields();
}

void CalibrationDialog::setSource(Source source, const QString& path) {
    (source == Source::Images ? m_images
     : source == Source::Npy  ? m_npy
                              : m_random)
        ->setChecked(true);
    m_path->setText(path);
}

void CalibrationDialog::setSamples(int samples) {
    m_samples->setValue(samples);
}

void CalibrationDialog::setBatchSize(int batchSize) {
    m_batchSize->setValue(batchSize);
}

QString CalibrationDialog::problem() const {
    return m_problem->text();
}

void CalibrationDialog::updateFields() {
    m_path->setEnabled(!m_random->isChecked());
    m_path->setPlaceholderText(m_images->isChecked() ? tr("Folder of PNG, JPEG or BMP images")
                               : m_npy->isChecked()  ? tr("File with samples on axis 0")
                                                     : QString());
    m_problem->clear();
}

void CalibrationDialog::browse() {
    const QString path =
        m_images->isChecked()
            ? QFileDialog::getExistingDirectory(this, tr("Calibration Images"), m_path->text())
            : QFileDialog::getOpenFileName(this, tr("Calibration Samples"), m_path->text(),
                                           tr("NumPy arrays (*.npy);;All files (*)"));
    if (!path.isEmpty()) {
        if (m_random->isChecked()) {
            m_npy->setChecked(true);
        }
        m_path->setText(path);
    }
}

Result<CalibrationRequest> CalibrationDialog::request() const {
    CalibrationRequest request;
    if (m_batchSize->value() > 0) {
        request.dataset.batchSize = m_batchSize->value();
    }
    request.estimator =
        static_cast<quantization::RangeEstimator>(m_estimator->currentData().toInt());
    const QString path = m_path->text().trimmed();
    const std::string local = QDir::toNativeSeparators(path).toStdString();
    if (m_random->isChecked()) {
        request.dataset.randomSamples = m_samples->value();
        return request;
    }
    request.dataset.maxSamples = m_samples->value();
    if (m_images->isChecked()) {
        if (path.isEmpty() || !QFileInfo(path).isDir()) {
            return Error(Errc::InvalidArgument, path.isEmpty() ? "choose a folder of images"
                                                               : "'" + local + "' is not a folder");
        }
        request.dataset.imagesDir = local;
        return request;
    }
    if (path.isEmpty() || !QFileInfo(path).isFile()) {
        return Error(Errc::InvalidArgument,
                     path.isEmpty() ? "choose a .npy file" : "'" + local + "' is not a file");
    }
    request.dataset.npyFiles = {local};
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
