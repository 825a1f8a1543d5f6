#include "ui/features/weight_compression/weight_compression_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <string>

namespace qs::ui {

namespace {
using compression::CompressionMode;
using compression::GroupSizeFallback;
using compression::SensitivityMetric;

constexpr int kMaxGroupSize = 4096;
constexpr int kDefaultSamples = 32;

QString qstr(std::string_view text) {
    return QString::fromStdString(std::string(text));
}

int indexOfData(const QComboBox& box, int value) {
    const int index = box.findData(value);
    return index < 0 ? 0 : index;
}
} // namespace

WeightCompressionDialog::WeightCompressionDialog(QWidget* parent)
    : QDialog(parent)
    , m_mode(new QComboBox(this))
    , m_groupSize(new QSpinBox(this))
    , m_ratio(new QDoubleSpinBox(this))
    , m_fallback(new QComboBox(this))
    , m_backup(new QComboBox(this))
    , m_allLayers(new QCheckBox(tr("Last MatMul and embeddings take the primary mode too"), this))
    , m_metric(new QComboBox(this))
    , m_picker(new DatasetPicker({.allowNone = true,
                                  .defaultSamples = kDefaultSamples,
                                  .defaultBatch = 0,
                                  .autoBatch = true},
                                 this))
    , m_hint(new QLabel(this))
    , m_problem(new QLabel(this)) {
    setWindowTitle(tr("Compress Weights"));
    for (const CompressionMode mode : {CompressionMode::Int4Asym, CompressionMode::Int4Sym,
                                       CompressionMode::Int8Asym, CompressionMode::Int8Sym}) {
        m_mode->addItem(qstr(compression::modeName(mode)), static_cast<int>(mode));
    }
    m_groupSize->setRange(-1, kMaxGroupSize);
    m_groupSize->setSpecialValueText(tr("per channel"));
    m_groupSize->setToolTip(tr("Group size along the reduction axis; 0 = the mode's default "
                               "(128 for int4, per channel for int8)"));
    m_ratio->setRange(0.0, 1.0);
    m_ratio->setSingleStep(0.05);
    m_ratio->setDecimals(2);
    m_ratio->setValue(1.0);
    m_ratio->setToolTip(tr("Share of ratio-defining parameters in the 4-bit mode"));
    for (const GroupSizeFallback fallback :
         {GroupSizeFallback::Error, GroupSizeFallback::Ignore, GroupSizeFallback::Adjust}) {
        m_fallback->addItem(qstr(compression::fallbackName(fallback)), static_cast<int>(fallback));
    }
    for (const CompressionMode mode :
         {CompressionMode::Int8Asym, CompressionMode::Int8Sym, CompressionMode::None}) {
        m_backup->addItem(qstr(compression::modeName(mode)), static_cast<int>(mode));
    }
    for (const SensitivityMetric metric :
         {SensitivityMetric::WeightQuantizationError, SensitivityMetric::MaxActivationVariance,
          SensitivityMetric::MeanActivationVariance, SensitivityMetric::MeanActivationMagnitude}) {
        m_metric->addItem(qstr(compression::sensitivityMetricName(metric)),
                          static_cast<int>(metric));
    }
    m_picker->setKind(DatasetPicker::Kind::None);

    auto* form = new QFormLayout;
    form->addRow(tr("&Mode:"), m_mode);
    form->addRow(tr("&Group size:"), m_groupSize);
    form->addRow(tr("&Ratio:"), m_ratio);
    form->addRow(tr("Group-size &fallback:"), m_fallback);
    form->addRow(tr("&Backup mode:"), m_backup);
    form->addRow(QString(), m_allLayers);
    form->addRow(tr("&Sensitivity:"), m_metric);
    m_hint->setWordWrap(true);
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #c62828"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Compress"));
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(m_picker);
    column->addWidget(m_hint);
    column->addWidget(m_problem);
    column->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &WeightCompressionDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    for (QComboBox* box : {m_mode, m_metric, &m_picker->kindBox()}) {
        connect(box, &QComboBox::currentIndexChanged, this, &WeightCompressionDialog::syncEnabled);
    }
    connect(m_picker, &DatasetPicker::changed, m_problem, &QLabel::clear);
    connect(m_ratio, &QDoubleSpinBox::valueChanged, this, &WeightCompressionDialog::syncEnabled);
    syncEnabled();
}

void WeightCompressionDialog::syncEnabled() {
    const auto mode = static_cast<CompressionMode>(m_mode->currentData().toInt());
    const bool mixing = compression::modeBits(mode) == 4 && m_ratio->value() < 1.0;
    const auto metric = static_cast<SensitivityMetric>(m_metric->currentData().toInt());
    m_ratio->setEnabled(compression::modeBits(mode) == 4);
    m_metric->setEnabled(mixing);
    const bool needsData = mixing && compression::isDataAware(metric);
    m_picker->setPickerEnabled(needsData);
    if (needsData && m_picker->kind() == DatasetPicker::Kind::None) {
        m_hint->setText(
            tr("%1 runs the model on a dataset: choose one.").arg(m_metric->currentText()));
    } else if (!mixing) {
        m_hint->setText(tr("Every ratio-defining weight takes the primary mode."));
    } else {
        m_hint->setText(tr("The least sensitive weights take the 4-bit mode until the ratio."));
    }
}

void WeightCompressionDialog::setRequest(const WeightCompressionRequest& request) {
    const compression::WeightCompressionOptions& options = request.options;
    m_mode->setCurrentIndex(indexOfData(*m_mode, static_cast<int>(options.mode)));
    // 0 means "the mode's default": show the size that applies, as the dock does (128, not 0).
    m_groupSize->setValue(static_cast<int>(
        options.groupSize == 0 ? compression::defaultGroupSize(options.mode) : options.groupSize));
    m_ratio->setValue(options.ratio);
    m_fallback->setCurrentIndex(
        indexOfData(*m_fallback, static_cast<int>(options.groupSizeFallback)));
    m_backup->setCurrentIndex(indexOfData(*m_backup, static_cast<int>(options.backupMode)));
    m_allLayers->setChecked(options.allLayers);
    m_metric->setCurrentIndex(indexOfData(*m_metric, static_cast<int>(options.sensitivity)));
    m_picker->showSource(request.dataset);
    m_picker->setBatchSize(static_cast<int>(request.dataset.batchSize.value_or(0)));
    syncEnabled();
}

Result<WeightCompressionRequest> WeightCompressionDialog::request() const {
    WeightCompressionRequest request;
    compression::WeightCompressionOptions& options = request.options;
    options.mode = static_cast<CompressionMode>(m_mode->currentData().toInt());
    options.groupSize = m_groupSize->value();
    options.ratio = m_ratio->value();
    options.groupSizeFallback = static_cast<GroupSizeFallback>(m_fallback->currentData().toInt());
    options.backupMode = static_cast<CompressionMode>(m_backup->currentData().toInt());
    options.allLayers = m_allLayers->isChecked();
    options.sensitivity = static_cast<SensitivityMetric>(m_metric->currentData().toInt());
    const bool mixing = compression::modeBits(options.mode) == 4 && options.ratio < 1.0;
    if (!mixing) {
        options.sensitivity = SensitivityMetric::WeightQuantizationError; // nothing is ranked
        return request;
    }
    if (!compression::isDataAware(options.sensitivity)) {
        return request;
    }
    QS_TRY(m_picker->applyTo(request.dataset));
    return request;
}

void WeightCompressionDialog::accept() {
    const Result<WeightCompressionRequest> checked = request();
    if (!checked.ok()) {
        m_problem->setText(QString::fromStdString(checked.error().message()));
        return;
    }
    QDialog::accept();
}

} // namespace qs::ui
