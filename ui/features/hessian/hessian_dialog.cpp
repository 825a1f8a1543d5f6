#include "ui/features/hessian/hessian_dialog.h"

#include "ui/dataset_picker.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace qs::ui {

namespace {
constexpr int kMaxIterations = 100000;
}

hessian::HessianScoresRequest HessianJobRequest::scoresRequest() const {
    hessian::HessianScoresRequest request;
    request.mode = hessian::HessianMode::Activation;
    request.granularity = hessian::HessianScoresGranularity::PerOutputChannel;
    request.samples = samples;
    request.batch = std::min(batch, samples);
    request.iterations = iterations;
    return request;
}

HessianDialog::HessianDialog(QWidget* parent)
    : QDialog(parent)
    , m_picker(new DatasetPicker(
          {.allowNone = false, .defaultSamples = 8, .defaultBatch = 8, .autoBatch = false}, this))
    , m_iterations(new QSpinBox(this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
    setWindowTitle(tr("Compute Hessian Scores"));
    m_iterations->setRange(1, kMaxIterations);
    m_iterations->setValue(hessian::kDefaultHessianIterations);
    m_iterations->setToolTip(tr("Hutchinson iterations: one reverse sweep to every target per "
                                "iteration and batch (100: MCT's default)"));
    m_picker->samplesBox().setToolTip(tr("Samples scored: random N, or the first N of the file "
                                         "or folder"));
    m_picker->batchBox().setToolTip(tr("Hessian batch: samples per forward pass and sweep"));
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #c62828"));
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Compute"));
    auto* column = new QVBoxLayout(this);
    column->addWidget(m_picker);
    auto* form = new QFormLayout;
    form->addRow(tr("&Iterations:"), m_iterations);
    column->addLayout(form);
    column->addWidget(m_problem);
    column->addWidget(m_buttons);
    connect(m_picker, &DatasetPicker::changed, m_problem, &QLabel::clear);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &HessianDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &HessianDialog::reject);
}

void HessianDialog::setRequest(const HessianJobRequest& request) {
    m_picker->showSource(request.dataset);
    m_picker->setSamples(static_cast<int>(request.samples));
    m_picker->setBatchSize(static_cast<int>(request.batch));
    m_iterations->setValue(request.iterations);
}

Result<HessianJobRequest> HessianDialog::request() const {
    HessianJobRequest request;
    QS_TRY(m_picker->applyTo(request.dataset));
    request.samples = m_picker->samples();
    request.batch = m_picker->batchSize();
    request.iterations = m_iterations->value();
    QS_TRY(request.scoresRequest().validate());
    return request;
}

void HessianDialog::accept() {
    const Result<HessianJobRequest> checked = request();
    if (!checked.ok()) {
        m_problem->setText(QString::fromStdString(checked.error().message()));
        return;
    }
    QDialog::accept();
}

QString HessianDialog::problem() const {
    return m_problem->text();
}

} // namespace qs::ui
