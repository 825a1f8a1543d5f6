#include "ui/features/fp16_export/fp16_export_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QVBoxLayout>

namespace qs::ui {

Fp16ExportDialog::Fp16ExportDialog(QWidget* parent)
    : QDialog(parent)
    , m_keepIoTypes(new QCheckBox(tr("Keep float32 model inputs and outputs"), this))
    , m_blockOps(new QLineEdit(this)) {
    setWindowTitle(tr("Export FP16 ONNX"));
    m_keepIoTypes->setChecked(true);
    m_blockOps->setPlaceholderText(tr("e.g. Softmax, LayerNormalization"));
    QStringList defaults;
    for (const std::string& op : compression::defaultFp16BlockList()) {
        defaults.push_back(QString::fromStdString(op));
    }
    auto* note = new QLabel(
        tr("Always kept in float32: %1.").arg(defaults.join(QStringLiteral(", "))), this);
    note->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(QString(), m_keepIoTypes);
    form->addRow(tr("&Block ops:"), m_blockOps);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(note);
    column->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

compression::Fp16Options Fp16ExportDialog::options() const {
    compression::Fp16Options options;
    options.keepIoTypes = m_keepIoTypes->isChecked();
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    for (const QString& op : m_blockOps->text().split(separators, Qt::SkipEmptyParts)) {
        options.blockedOps.push_back(op.toStdString());
    }
    return options;
}

} // namespace qs::ui
