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

Result<LoadedModel> loadModel(const QString& path, Progress& progress) {
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
    progress.report(1.0, "Done");
    return LoadedModel{std::move(graph), std::move(info)};
}

GraphDocument::GraphDocument(const QString& filePath, LoadedModel model, QObject* parent)
    : QObject(parent)
    , m_filePath(QFileInfo(filePath).absoluteFilePath())
    , m_model(std::move(model)) {}

QString GraphDocument::fileName() const {
    return QFileInfo(m_filePath).fileName();
}

} // namespace qs::ui
