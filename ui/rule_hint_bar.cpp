#include "ui/rule_hint_bar.h"

#include "core/quantization/quantizer_setup.h"
#include "ui/graph_document.h"
#include "ui/quantizer_commands.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace qs::ui {

namespace {
constexpr int kMaxNamedOps = 3;

QString fromView(std::string_view text) {
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}
} // namespace

RuleHintBar::RuleHintBar(QWidget* parent)
    : QFrame(parent)
    , m_text(new QLabel(this))
    , m_switch(new QPushButton(tr("Switch Rule"), this))
    , m_close(new QPushButton(tr("Dismiss"), this)) {
    setObjectName(QStringLiteral("ruleHintBar"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    QPalette shade = palette();
    shade.setColor(QPalette::Window, shade.color(QPalette::ToolTipBase));
    shade.setColor(QPalette::WindowText, shade.color(QPalette::ToolTipText));
    setPalette(shade);
    m_text->setWordWrap(true);
    m_switch->setToolTip(tr("Re-run propagation with MERGE_WITH_POTENTIAL_REQUANTIZATION "
                            "(undoable)"));
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(8, 4, 8, 4);
    row->addWidget(m_text, 1);
    row->addWidget(m_switch);
    row->addWidget(m_close);
    connect(m_switch, &QPushButton::clicked, this, &RuleHintBar::acceptOffer);
    connect(m_close, &QPushButton::clicked, this, &RuleHintBar::dismiss);
    hide();
}

void RuleHintBar::offer(GraphDocument& document, const QList<int>& ids) {
    const quantization::QuantizationState* state = document.quantization();
    if (state == nullptr || ids.isEmpty()) {
        return;
    }
    m_document = &document;
    const auto& point = state->proposal.setup.quantizationPoints.at(ids.front());
    QStringList ops;
    for (const std::string& op : point.directlyQuantizedOperatorNodeNames) {
        if (ops.size() == kMaxNamedOps) {
            ops << QStringLiteral("…");
            break;
        }
        ops << QString::fromStdString(op);
    }
    m_text->setText(
        tr("Quantizer #%1 at %2 serves %3 branches (%4); under %5 they all get the bit width "
           "chosen for it. To give branches their own bit widths, switch to "
           "MERGE_WITH_POTENTIAL_REQUANTIZATION.")
            .arg(ids.front())
            .arg(QString::fromStdString(point.insertionPoint.toString()))
            .arg(point.directlyQuantizedOperatorNodeNames.size())
            .arg(ops.join(QStringLiteral(", ")),
                 fromView(quantization::ruleName(state->settings.rule))));
    show();
}

void RuleHintBar::acceptOffer() {
    GraphDocument* document = m_document.data();
    hide();
    if (document == nullptr || document->quantization() == nullptr) {
        return;
    }
    quantization::QuantizationSettings settings = document->quantization()->settings;
    settings.rule = quantization::QuantizerPropagationRule::MergeWithPotentialRequantization;
    document->undoStack().push(new ChangeQuantizationSettingsCommand(*document, settings));
}

void RuleHintBar::dismiss() {
    hide();
}

QString RuleHintBar::text() const {
    return m_text->text();
}

} // namespace qs::ui
