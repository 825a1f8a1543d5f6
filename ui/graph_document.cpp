#include "ui/graph_document.h"

#include "core/onnx/model_io.h"

#include <QFile>
#include <QFileInfo>

#include <filesystem>

namespace qs::ui {

namespace {
/// Import notes worth showing next to the info; opaque nodes are listed on their own already.
void addImportWarnings(const onnx::ImportNotes& notes, report::ModelInfo& info) {
    for (const std::string& warning : notes.warnings) {
        if (warning.find("opaque") == std::string::npos) {
            info.warnings.push_back(warning);
        }
    }
}
} // namespace

Result<LoadedModel> loadModel(const QString& path, Progress& progress,
                              const quantization::QuantizationSettings& settings) {
    progress.report(0.0, "Reading model");
    const std::filesystem::path file(QFile::encodeName(path).toStdString());
    onnx::ImportNotes notes;
    QS_ASSIGN_OR_RETURN(graph::Graph graph, onnx::importModel(file, {}, &notes));
    if (progress.isCancelled()) {
        return Error(Errc::Cancelled, "cancelled");
    }
    progress.report(0.9, "Summarizing model");
    report::ModelInfo info = report::computeModelInfo(graph);
    info.path = file.string();
    addImportWarnings(notes, info);
    progress.report(0.95, "Placing quantizers");
    LoadedModel loaded{std::move(graph), std::move(info), std::nullopt, {}};
    auto quantization = quantization::computeQuantization(loaded.graph, settings);
    if (quantization.ok()) {
        loaded.quantization = std::move(quantization).value();
    } else {
        loaded.quantizationError = QString::fromStdString(quantization.error().toString());
    }
    progress.report(1.0, "Done");
    return loaded;
}

GraphDocument::GraphDocument(const QString& filePath, LoadedModel model, QObject* parent)
    : QObject(parent)
    , m_filePath(QFileInfo(filePath).absoluteFilePath())
    , m_model(std::move(model)) {}

QString GraphDocument::fileName() const {
    return QFileInfo(m_filePath).fileName();
}

std::vector<quantization::QuantizerMark> GraphDocument::quantizerMarks() const {
    if (!m_model.quantization) {
        return {};
    }
    return quantization::quantizerMarks(m_model.quantization->setup,
                                        &m_model.quantization->proposal.setup);
}

Result<void>
GraphDocument::chooseQuantizerConfigs(const quantization::QuantizerConfigChoice& changes) {
    if (!m_model.quantization) {
        return Error(Errc::InvalidArgument, "the model has no quantizers");
    }
    QS_TRY(quantization::chooseConfigs(*m_model.quantization, changes));
    Q_EMIT quantizationChanged();
    return {};
}

Result<void>
GraphDocument::setQuantizationSettings(const quantization::QuantizationSettings& settings) {
    QS_ASSIGN_OR_RETURN(quantization::QuantizationState state,
                        quantization::computeQuantization(m_model.graph, settings));
    restoreQuantization(std::move(state));
    return {};
}

void GraphDocument::restoreQuantization(quantization::QuantizationState state) {
    m_model.quantization = std::move(state);
    m_model.quantizationError.clear();
    Q_EMIT quantizationChanged();
}

void GraphDocument::setCompressionPlan(std::optional<compression::CompressionPlan> plan) {
    m_compressionPlan = std::move(plan);
    Q_EMIT compressionPlanChanged();
}

} // namespace qs::ui
