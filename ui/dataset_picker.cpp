#include "ui/dataset_picker.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace qs::ui {

namespace {
constexpr int kMaxSamples = 100000;
constexpr int kMaxBatch = 1024;

bool isFolderKind(DatasetPicker::Kind kind) {
    return kind == DatasetPicker::Kind::ImageFolder || kind == DatasetPicker::Kind::ClassFolders;
}

QHBoxLayout* withButton(QLineEdit* edit, QPushButton* button) {
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(button);
    return row;
}

std::string localPath(const QString& path) {
    return QDir::toNativeSeparators(path).toStdString();
}
} // namespace

DatasetPicker::DatasetPicker(const Options& options, QWidget* parent)
    : QWidget(parent)
    , m_kind(new QComboBox(this))
    , m_path(new QLineEdit(this))
    , m_browsePath(new QPushButton(tr("&Browse…"), this))
    , m_labels(new QLineEdit(this))
    , m_browseLabels(new QPushButton(tr("Bro&wse…"), this))
    , m_samples(new QSpinBox(this))
    , m_batch(new QSpinBox(this)) {
    if (options.allowNone) {
        m_kind->addItem(tr("No dataset"), static_cast<int>(Kind::None));
    }
    m_kind->addItem(tr("Random samples (seeded standard normal)"), static_cast<int>(Kind::Random));
    m_kind->addItem(tr("NumPy file (.npy, one input)"), static_cast<int>(Kind::Npy));
    m_kind->addItem(tr("Image folder"), static_cast<int>(Kind::ImageFolder));
    m_kind->addItem(tr("Image folder with class subfolders"), static_cast<int>(Kind::ClassFolders));
    m_kind->setCurrentIndex(m_kind->findData(static_cast<int>(Kind::Random)));
    m_samples->setRange(1, kMaxSamples);
    m_samples->setValue(options.defaultSamples);
    m_batch->setRange(options.autoBatch ? 0 : 1, kMaxBatch);
    m_batch->setSpecialValueText(options.autoBatch ? tr("automatic") : QString());
    m_batch->setValue(options.defaultBatch);
    m_batch->setToolTip(tr("Samples per run of the model"));
    m_labels->setPlaceholderText(tr("Optional: one class index per sample"));

    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("&Dataset:"), m_kind);
    auto* pathLabel = new QLabel(tr("&Path:"), this);
    pathLabel->setBuddy(m_path); // a row with a layout gets no buddy by itself
    form->addRow(pathLabel, withButton(m_path, m_browsePath));
    auto* labelsLabel = new QLabel(tr("&Labels (.npy):"), this);
    labelsLabel->setBuddy(m_labels);
    form->addRow(labelsLabel, withButton(m_labels, m_browseLabels));
    form->addRow(tr("&Samples:"), m_samples);
    form->addRow(tr("Batch si&ze:"), m_batch);

    connect(m_kind, &QComboBox::currentIndexChanged, this, &DatasetPicker::syncEnabled);
    connect(m_browsePath, &QPushButton::clicked, this, &DatasetPicker::browsePath);
    connect(m_browseLabels, &QPushButton::clicked, this, &DatasetPicker::browseLabels);
    for (QLineEdit* edit : {m_path, m_labels}) {
        connect(edit, &QLineEdit::textChanged, this, &DatasetPicker::changed);
    }
    for (QSpinBox* box : {m_samples, m_batch}) {
        connect(box, &QSpinBox::valueChanged, this, &DatasetPicker::changed);
    }
    syncEnabled();
}

DatasetPicker::Kind DatasetPicker::kind() const {
    return static_cast<Kind>(m_kind->currentData().toInt());
}

void DatasetPicker::setKind(Kind kind) {
    const int index = m_kind->findData(static_cast<int>(kind));
    if (index >= 0) {
        m_kind->setCurrentIndex(index);
    }
}

QString DatasetPicker::path() const {
    return m_path->text().trimmed();
}

void DatasetPicker::setPath(const QString& path) {
    m_path->setText(path);
}

int DatasetPicker::samples() const {
    return m_samples->value();
}

void DatasetPicker::setSamples(int samples) {
    m_samples->setValue(samples);
}

int DatasetPicker::batchSize() const {
    return m_batch->value();
}

void DatasetPicker::setBatchSize(int batchSize) {
    m_batch->setValue(batchSize);
}

QString DatasetPicker::labelsPath() const {
    const Kind shown = kind();
    return shown == Kind::Npy || shown == Kind::ImageFolder ? m_labels->text().trimmed()
                                                            : QString();
}

void DatasetPicker::setLabelsPath(const QString& path) {
    m_labels->setText(path);
}

void DatasetPicker::showSource(const runtime::DatasetRequest& source) {
    switch (source.kind()) {
    case runtime::DatasetKind::Random:
        setKind(Kind::Random);
        m_samples->setValue(static_cast<int>(source.randomSamples));
        break;
    case runtime::DatasetKind::NpyFiles:
        setKind(Kind::Npy);
        m_path->setText(QString::fromStdString(source.npyFiles.front()));
        break;
    case runtime::DatasetKind::ImageFolder:
        setKind(Kind::ImageFolder);
        m_path->setText(QString::fromStdString(source.imagesDir));
        break;
    case runtime::DatasetKind::ClassFolders:
        setKind(Kind::ClassFolders);
        m_path->setText(QString::fromStdString(source.classesDir));
        break;
    case runtime::DatasetKind::None:
        setKind(Kind::None);
        break;
    }
    if (source.kind() != runtime::DatasetKind::Random && source.maxSamples <= kMaxSamples) {
        m_samples->setValue(static_cast<int>(source.maxSamples));
    }
    if (source.batchSize) {
        m_batch->setValue(static_cast<int>(*source.batchSize));
    }
    m_labels->setText(QString::fromStdString(source.labelsNpy));
}

Result<void> DatasetPicker::applyTo(runtime::DatasetRequest& source) const {
    source.npyFiles.clear();
    source.imagesDir.clear();
    source.classesDir.clear();
    source.labelsNpy.clear();
    source.randomSamples = 0;
    source.batchSize.reset();
    const Kind chosen = kind();
    if (chosen == Kind::None) {
        return {};
    }
    if (m_batch->value() > 0) {
        source.batchSize = m_batch->value();
    }
    if (chosen == Kind::Random) {
        source.randomSamples = m_samples->value();
        return {};
    }
    const QString file = path();
    if (isFolderKind(chosen)) {
        if (file.isEmpty() || !QFileInfo(file).isDir()) {
            return Error(Errc::InvalidArgument, file.isEmpty()
                                                    ? "choose a folder of images"
                                                    : "'" + localPath(file) + "' is not a folder");
        }
        (chosen == Kind::ClassFolders ? source.classesDir : source.imagesDir) = localPath(file);
    } else {
        if (file.isEmpty() || !QFileInfo(file).isFile()) {
            return Error(Errc::InvalidArgument, file.isEmpty()
                                                    ? "choose a .npy file"
                                                    : "'" + localPath(file) + "' is not a file");
        }
        source.npyFiles = {localPath(file)};
    }
    const QString labels = labelsPath();
    if (!labels.isEmpty() && !QFileInfo(labels).isFile()) {
        return Error(Errc::InvalidArgument,
                     "the labels '" + localPath(labels) + "' are not a file");
    }
    source.labelsNpy = localPath(labels);
    source.maxSamples = m_samples->value();
    return {};
}

void DatasetPicker::setPickerEnabled(bool enabled) {
    m_enabled = enabled;
    syncEnabled();
}

void DatasetPicker::syncEnabled() {
    const Kind shown = kind();
    const bool files = shown != Kind::None && shown != Kind::Random;
    m_kind->setEnabled(m_enabled);
    m_path->setEnabled(m_enabled && files);
    m_browsePath->setEnabled(m_enabled && files);
    const bool labels = m_enabled && (shown == Kind::Npy || shown == Kind::ImageFolder);
    m_labels->setEnabled(labels);
    m_browseLabels->setEnabled(labels);
    m_samples->setEnabled(m_enabled && shown != Kind::None);
    m_batch->setEnabled(m_enabled && shown != Kind::None);
    m_path->setPlaceholderText(shown == Kind::ImageFolder ? tr("Folder of PNG, JPEG or BMP images")
                               : shown == Kind::ClassFolders
                                   ? tr("Folder with one subfolder of images per class")
                               : shown == Kind::Npy ? tr("File with samples on axis 0")
                                                    : QString());
    Q_EMIT changed();
}

void DatasetPicker::browsePath() {
    const QString chosen =
        isFolderKind(kind())
            ? QFileDialog::getExistingDirectory(this, tr("Dataset Folder"), path())
            : QFileDialog::getOpenFileName(this, tr("Dataset Samples"), path(),
                                           tr("NumPy arrays (*.npy);;All files (*)"));
    if (!chosen.isEmpty()) {
        m_path->setText(chosen);
    }
}

void DatasetPicker::browseLabels() {
    const QString chosen = QFileDialog::getOpenFileName(
        this, tr("Dataset Labels"), m_labels->text(), tr("NumPy arrays (*.npy);;All files (*)"));
    if (!chosen.isEmpty()) {
        m_labels->setText(chosen);
    }
}

} // namespace qs::ui
