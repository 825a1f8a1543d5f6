#include "ui/features/compare/compare_feature.h"

#include "core/session/review_source.h"
#include "ui/actions.h"
#include "ui/features/compare/compare_overlay.h"
#include "ui/graph_document.h"
#include "ui/message_reporter.h"
#include "ui/session.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QStatusBar>

namespace qs::ui {

CompareFeature::CompareFeature(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context)
    , m_overlay(new CompareOverlay(context.page, this)) {
    connect(&context.session, &Session::documentChanged, this, [this](GraphDocument* document) {
        m_document = document;
        m_overlay->setDocument(document);
        syncActions();
    });
    connect(m_overlay, &CompareOverlay::activeChanged, this, &CompareFeature::syncActions);
}

CompareFeature::~CompareFeature() = default;

QString CompareFeature::key() const {
    return QStringLiteral("compare");
}

void CompareFeature::createActions(Actions& actions) {
    m_compare = actions.addFeatureAction(
        key(), FeatureMenu::Quantize,
        {QStringLiteral("compare.open"), tr("Co&mpare With…"),
         tr("Lay another setup, session or compressed export of this model over the graph")});
    m_clear = actions.addFeatureAction(key(), FeatureMenu::Quantize,
                                       {QStringLiteral("compare.clear"), tr("Clear Comparison"),
                                        tr("Remove the comparison overlay")});
    connect(m_compare, &QAction::triggered, this, &CompareFeature::showCompareDialog);
    connect(m_clear, &QAction::triggered, m_overlay, &CompareOverlay::clear);
    syncActions();
}

void CompareFeature::syncActions() {
    const bool open = !m_document.isNull() && m_document->quantization() != nullptr;
    if (m_compare != nullptr) {
        m_compare->setEnabled(open);
    }
    if (m_clear != nullptr) {
        m_clear->setEnabled(open && m_overlay->isActive());
    }
}

bool CompareFeature::compareWith(const QString& path) {
    if (m_document.isNull() || m_document->quantization() == nullptr) {
        m_context.reporter.error(tr("Cannot compare"), tr("No model is open."));
        return false;
    }
    if (m_document->isDerived() && path.endsWith(QStringLiteral(".qscope"), Qt::CaseInsensitive)) {
        // The session's pruning check cannot see a pruned document beside a session of the
        // dense model that was never pruned.
        const Result<session::SessionFile> other =
            session::readSessionFile(QFile::encodeName(path).toStdString());
        if (other.ok() && !session::sessionHasAppliedPruning(*other)) {
            m_context.reporter.error(
                tr("Cannot compare with %1").arg(path),
                tr("The document is the pruned model and that session works on the model file's "
                   "graph: their quantizers are not at the same places."));
            return false;
        }
    }
    QApplication::setOverrideCursor(Qt::WaitCursor);
    Result<std::vector<quantization::QuantizerMark>> marks =
        session::comparisonMarks(m_document->graph(), m_document->filePath().toStdString(),
                                 path.toStdString(), m_document->quantization()->settings.hw);
    QApplication::restoreOverrideCursor();
    if (!marks.ok()) {
        m_context.reporter.error(tr("Cannot compare with %1").arg(path),
                                 QString::fromStdString(marks.error().toString()));
        return false;
    }
    m_overlay->compareWith(QFileInfo(path).fileName(), std::move(marks).value());
    m_context.window.statusBar()->showMessage(
        tr("Compared with %1: %2 points differ").arg(path).arg(m_overlay->changes().size()), 5000);
    return true;
}

void CompareFeature::showCompareDialog() {
    const QString path = QFileDialog::getOpenFileName(
        &m_context.window, tr("Compare With"), {},
        tr("Setups, sessions and exports (*.json *.qscope *.onnx);;All files (*)"));
    if (!path.isEmpty()) {
        compareWith(path);
    }
}

} // namespace qs::ui
