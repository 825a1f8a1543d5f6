#include "ui/features/pruning/pruning_dialog.h"

#include "ui/dataset_picker.h"
#include "ui/features/pruning/pruning_state.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

namespace qs::ui {

namespace {
constexpr int kMaxSimd = 4096;
constexpr int kMaxSamples = 100000;
constexpr int kMaxIterations = 100000;
constexpr double kMaxBytes = 1e15;
constexpr int kPercentIndex = 0;
constexpr int kBytesIndex = 1;
} // namespace

PruningDialog::PruningDialog(QWidget* parent)
    : QDialog(parent)
    , m_targetKind(new QComboBox(this))
    , m_slider(new QSlider(Qt::Horizontal, this))
    , m_percent(new QDoubleSpinBox(this))
    , m_bytes(new QDoubleSpinBox(this))
    , m_targetHint(new QLabel(this))
    , m_hw(new QComboBox(this))
    , m_simd(new QSpinBox(this))
    , m_padding(new QCheckBox(tr("Pad output channels to the SIMD size"), this))
    , m_importance(new QComboBox(this))
    , m_samples(new QSpinBox(this))
    , m_iterations(new QSpinBox(this))
    , m_seed(new QSpinBox(this))
    , m_picker(
          new DatasetPicker({.allowNone = false, .defaultSamples = 32, .autoBatch = true}, this))
    , m_problem(new QLabel(this)) {
    setWindowTitle(tr("Prune"));
    m_targetKind->addItem(tr("% of the dense weights"));
    m_targetKind->addItem(tr("bytes"));
    m_targetKind->setToolTip(tr("The weight memory to reach, counted in FP32 bytes"));
    m_slider->setRange(1, 100);
    m_slider->setValue(50);
    m_percent->setRange(0.1, 100.0);
    m_percent->setDecimals(1);
    m_percent->setSuffix(QStringLiteral(" %"));
    m_percent->setValue(50.0);
    m_bytes->setRange(1, kMaxBytes);
    m_bytes->setDecimals(0);
    m_bytes->setSuffix(QStringLiteral(" B"));
    m_bytes->setGroupSeparatorShown(true);
    m_targetHint->setWordWrap(true);
    m_hw->addItems({QStringLiteral("cpu"), QStringLiteral("gpu"), QStringLiteral("npu")});
    m_hw->setEditable(true);
    m_hw->setToolTip(tr("A built-in HW config or the path of a HW config JSON: its SIMD sizes"));
    m_simd->setRange(0, kMaxSimd);
    m_simd->setSpecialValueText(tr("from the HW config"));
    m_simd->setToolTip(tr("SIMD group size for every entry (1 = plain channel pruning)"));
    m_padding->setChecked(true);
    m_importance->addItem(tr("lfh (label-free Hessian)"), QStringLiteral("lfh"));
    m_importance->addItem(tr("l2 (weight norm)"), QStringLiteral("l2"));
    m_importance->addItem(tr("random (seeded baseline)"), QStringLiteral("random"));
    m_samples->setRange(1, kMaxSamples);
    m_samples->setValue(32);
    m_samples->setToolTip(tr("Samples of the LFH scores (MCT's num_score_approximations)"));
    m_iterations->setRange(1, kMaxIterations);
    m_iterations->setValue(hessian::kDefaultHessianIterations);
    m_iterations->setToolTip(tr("Hutchinson iterations per batch (MCT: 100, early stop after 10)"));
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setToolTip(tr("Seed of the Rademacher draws (lfh) or of the random scores"));
    m_picker->samplesBox().setToolTip(tr("Random N, or the most samples read from the file or "
                                         "folder; the LFH scores use the first Samples of them"));
    m_picker->batchBox().setToolTip(tr("Hessian batch (automatic: the model's static batch or "
                                       "min(32, samples))"));
    m_problem->setStyleSheet(QStringLiteral("color: #c0392b"));
    m_problem->setWordWrap(true);

    auto* target = new QHBoxLayout;
    target->addWidget(m_targetKind);
    target->addWidget(m_slider, 1);
    target->addWidget(m_percent);
    target->addWidget(m_bytes);
    auto* form = new QFormLayout;
    form->addRow(tr("&Target memory:"), target);
    form->addRow(QString(), m_targetHint);
    form->addRow(tr("&HW config:"), m_hw);
    form->addRow(tr("&SIMD:"), m_simd);
    form->addRow(QString(), m_padding);
    form->addRow(tr("&Importance:"), m_importance);
    form->addRow(tr("Sa&mples:"), m_samples);
    form->addRow(tr("Ite&rations:"), m_iterations);
    form->addRow(tr("S&eed:"), m_seed);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Prune"));
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(m_picker);
    column->addWidget(m_problem);
    column->addWidget(buttons);

    connect(m_slider, &QSlider::valueChanged, this, [this](int value) {
        const QSignalBlocker block(m_percent);
        m_percent->setValue(value);
        showTargetHint();
    });
    connect(m_percent, &QDoubleSpinBox::valueChanged, this, [this](double value) {
        const QSignalBlocker block(m_slider);
        m_slider->setValue(static_cast<int>(std::lround(value)));
        showTargetHint();
    });
    connect(m_bytes, &QDoubleSpinBox::valueChanged, this, &PruningDialog::showTargetHint);
    connect(m_targetKind, &QComboBox::currentIndexChanged, this, &PruningDialog::syncFields);
    connect(m_importance, &QComboBox::currentIndexChanged, this, &PruningDialog::syncFields);
    connect(buttons, &QDialogButtonBox::accepted, this, &PruningDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &PruningDialog::reject);
    connect(m_picker, &DatasetPicker::changed, m_problem, &QLabel::clear);
    syncFields();
}

void PruningDialog::syncFields() {
    const bool percent = m_targetKind->currentIndex() == kPercentIndex;
    m_slider->setVisible(percent);
    m_percent->setVisible(percent);
    m_bytes->setVisible(!percent);
    const bool lfh = m_importance->currentData().toString() == QLatin1String("lfh");
    m_samples->setEnabled(lfh);
    m_iterations->setEnabled(lfh);
    m_picker->setPickerEnabled(lfh);
    m_problem->clear();
    showTargetHint();
}

void PruningDialog::showTargetHint() {
    if (m_denseBytes <= 0) {
        m_targetHint->setText(tr("FP32 weight bytes; SIMD padding is counted when asked"));
        return;
    }
    const int64_t target = m_targetKind->currentIndex() == kPercentIndex
                               ? static_cast<int64_t>(std::floor(m_percent->value() / 100.0 *
                                                                 static_cast<double>(m_denseBytes)))
                               : static_cast<int64_t>(m_bytes->value());
    m_targetHint->setText(
        tr("Dense weights: %1; target: %2").arg(formatBytes(m_denseBytes), formatBytes(target)));
}

void PruningDialog::setDenseBytes(int64_t bytes) {
    m_denseBytes = bytes;
    if (bytes > 0 && m_targetKind->currentIndex() == kPercentIndex) {
        m_bytes->setValue(static_cast<double>(bytes) * m_percent->value() / 100.0);
    }
    showTargetHint();
}

void PruningDialog::setRequest(const pruning::PruningRequest& request) {
    m_targetKind->setCurrentIndex(request.target.fraction ? kPercentIndex : kBytesIndex);
    if (request.target.fraction) {
        m_percent->setValue(request.target.value * 100.0);
    } else {
        m_bytes->setValue(request.target.value);
    }
    m_hw->setCurrentText(QString::fromStdString(request.hw));
    m_simd->setValue(static_cast<int>(request.simd));
    m_padding->setChecked(request.simdPadding);
    m_importance->setCurrentIndex(m_importance->findData(
        QString::fromUtf8(pruning::importanceName(request.importance).data())));
    m_samples->setValue(static_cast<int>(request.samples));
    m_iterations->setValue(request.iterations);
    m_seed->setValue(static_cast<int>(request.seed));
    if (!request.dataset.empty()) {
        m_picker->showSource(request.dataset);
    }
    syncFields();
}

Result<pruning::PruningRequest> PruningDialog::request() const {
    pruning::PruningRequest request;
    if (m_targetKind->currentIndex() == kPercentIndex) {
        request.target = {true, m_percent->value() / 100.0};
    } else {
        request.target = {false, std::floor(m_bytes->value())};
    }
    request.hw = m_hw->currentText().trimmed().toStdString();
    if (request.hw.empty()) {
        return Error(Errc::InvalidArgument, "choose a HW config (cpu, gpu, npu or a JSON file)");
    }
    request.simd = m_simd->value();
    request.simdPadding = m_padding->isChecked();
    QS_ASSIGN_OR_RETURN(
        request.importance,
        pruning::parseImportance(m_importance->currentData().toString().toStdString()));
    request.samples = m_samples->value();
    request.iterations = m_iterations->value();
    request.seed = static_cast<uint64_t>(m_seed->value());
    if (request.importance == pruning::ImportanceMetric::Lfh) {
        QS_TRY(m_picker->applyTo(request.dataset));
        request.hessianBatch = m_picker->batchSize();
        if (request.dataset.kind() == runtime::DatasetKind::Random &&
            request.dataset.randomSamples < request.samples) {
            return Error(Errc::InvalidArgument, "the dataset has " +
                                                    std::to_string(request.dataset.randomSamples) +
                                                    " random samples but the LFH scores need " +
                                                    std::to_string(request.samples) + " (Samples)");
        }
    }
    return request;
}

void PruningDialog::accept() {
    const Result<pruning::PruningRequest> checked = request();
    if (!checked.ok()) {
        m_problem->setText(QString::fromStdString(checked.error().message()));
        return;
    }
    QDialog::accept();
}

QString PruningDialog::problem() const {
    return m_problem->text();
}

} // namespace qs::ui
