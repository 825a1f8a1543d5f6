#include "ui/graph_document.h"

#include "core/onnx/model_io.h"
#include "core/quantization/branch_choice.h"
#include "core/session/session_file.h"

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

namespace {
/// Summary and quantizers of `loaded.graph`, the model read from `file`.
void summarize(LoadedModel& loaded, const std::filesystem::path& file,
               const onnx::ImportNotes* notes, const quantization::QuantizationSettings& settings,
               Progress& progress) {
    progress.report(0.9, "Summarizing model");
    loaded.info = report::computeModelInfo(loaded.graph);
    loaded.info.path = file.string();
    if (notes != nullptr) {
        addImportWarnings(*notes, loaded.info);
    }
    progress.report(0.95, "Placing quantizers");
    auto quantization = quantization::computeQuantization(loaded.graph, settings);
    if (quantization.ok()) {
        loaded.quantization = std::move(quantization).value();
    } else {
        loaded.quantizationError = QString::fromStdString(quantization.error().toString());
    }
    progress.report(1.0, "Done");
}
} // namespace

Result<LoadedModel> loadModel(const QString& path, Progress& progress,
                              const quantization::QuantizationSettings& settings,
                              const ModelDerivation& derive, const QString& derivation) {
    progress.report(0.0, "Reading model");
    const std::filesystem::path file(QFile::encodeName(path).toStdString());
    onnx::ImportNotes notes;
    QS_ASSIGN_OR_RETURN(graph::Graph graph, onnx::importModel(file, {}, &notes));
    QS_ASSIGN_OR_RETURN(std::string hash, session::hashModelFile(file));
    QS_TRY(checkCancelled(progress));
    LoadedModel loaded;
    loaded.modelHash = std::move(hash);
    if (derive) {
        SubProgress deriving(progress, 0.8, 0.9);
        QS_ASSIGN_OR_RETURN(loaded.graph, derive(graph, deriving));
        loaded.sourceGraph = std::make_shared<const graph::Graph>(std::move(graph));
        loaded.derivation = derivation;
    } else {
        loaded.graph = std::move(graph);
    }
    summarize(loaded, file, &notes, settings, progress);
    return loaded;
}

Result<LoadedModel> modelInMemory(graph::Graph graph, std::shared_ptr<const graph::Graph> source,
                                  const QString& derivation, const QString& path,
                                  std::string modelHash,
                                  const quantization::QuantizationSettings& settings,
                                  Progress& progress) {
    LoadedModel loaded;
    loaded.graph = std::move(graph);
    loaded.sourceGraph = std::move(source);
    loaded.derivation = derivation;
    loaded.modelHash = std::move(modelHash);
    QS_TRY(checkCancelled(progress));
    summarize(loaded, std::filesystem::path(QFile::encodeName(path).toStdString()), nullptr,
              settings, progress);
    return loaded;
}

GraphDocument::GraphDocument(const QString& filePath, LoadedModel model, QObject* parent)
    : QObject(parent)
    , m_filePath(QFileInfo(filePath).absoluteFilePath())
    , m_model(std::move(model)) {
    // Connected first, so every view sees the states as they follow this change.
    connect(this, &GraphDocument::quantizationChanged, this, &GraphDocument::updateStates);
    updateMarks();
}

QString GraphDocument::fileName() const {
    return QFileInfo(m_filePath).fileName();
}

QString GraphDocument::displayName() const {
    return m_model.derivation.isEmpty() ? fileName()
                                        : tr("%1 (%2)").arg(fileName(), m_model.derivation);
}

void GraphDocument::updateMarks() {
    m_marks = m_model.quantization
                  ? quantization::quantizerMarks(m_model.quantization->setup,
                                                 &m_model.quantization->proposal.setup)
                  : std::vector<quantization::QuantizerMark>{};
}

Result<void>
GraphDocument::chooseQuantizerConfigs(const quantization::QuantizerConfigChoice& changes) {
    if (!m_model.quantization) {
        return Error(Errc::InvalidArgument, "the model has no quantizers");
    }
    const std::vector<int> merged =
        quantization::mergedBranchChoices(*m_model.quantization, changes);
    QS_TRY(quantization::chooseConfigs(*m_model.quantization, changes));
    updateMarks();
    Q_EMIT quantizationChanged();
    if (!merged.empty()) {
        Q_EMIT branchChoiceMerged(QList<int>(merged.begin(), merged.end()));
    }
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
    updateMarks();
    Q_EMIT quantizationChanged();
}

bool DocumentState::followQuantization(const GraphDocument& /*document*/) {
    return false;
}

std::optional<nlohmann::json> DocumentState::sessionSection() const {
    return std::nullopt;
}

std::optional<DocumentState::NodeDetails>
DocumentState::nodeDetails(const QString& /*nodeName*/) const {
    return std::nullopt;
}

const nlohmann::json* GraphDocument::savedSection(std::string_view key) const {
    const auto found = m_model.sessionSections.find(key);
    return found == m_model.sessionSections.end() ? nullptr : &found->second;
}

DocumentState* GraphDocument::state(const QString& key) const {
    const auto found = m_states.find(key);
    return found == m_states.end() ? nullptr : found->second.get();
}

void GraphDocument::setState(const QString& key, std::unique_ptr<DocumentState> state) {
    if (state) {
        m_states[key] = std::move(state);
    } else {
        m_states.erase(key);
    }
    Q_EMIT stateChanged(key);
}

void GraphDocument::updateStates() {
    for (const auto& [key, state] : m_states) {
        if (state->followQuantization(*this)) {
            Q_EMIT stateChanged(key);
        }
    }
}

} // namespace qs::ui
