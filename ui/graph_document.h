// GraphDocument: one open model as the GUI holds it — the imported core Graph, its ModelInfo, its
// quantization state (HW config, preset, rule, proposal, choices, finalized setup; computed with
// the import on the job thread), the undo stack that every edit goes through, and one
// DocumentState per feature under the feature's key (a calibration, a compression plan). Views
// read it; edits arrive as QUndoCommands that call the setters here, which emit
// quantizationChanged / stateChanged.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantization_state.h"
#include "core/report/model_info.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QUndoStack>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::ui {

/// What importing a model file yields: the graph and its summary.
struct LoadedModel {
    graph::Graph graph;
    report::ModelInfo info;
    /// Quantizers with the default settings; empty when propagation failed (see the error).
    std::optional<quantization::QuantizationState> quantization;
    QString quantizationError;
    std::string modelHash; ///< quantization::hashModelFile() of the file read
    /// The feature sections of the session this model was opened from, by key (empty when
    /// opened as a model); features restore their state from them (GraphDocument::savedSection).
    std::map<std::string, nlohmann::json, std::less<>> sessionSections;
    /// The graph as the model file holds it, when `graph` was derived from it (a session that
    /// works on its pruned model); null when `graph` is the file's.
    std::shared_ptr<const graph::Graph> sourceGraph;
    /// What `graph` is, when derived ("pruned"), for titles; empty otherwise.
    QString derivation;
};

/// Turns the graph read from a model file into the one the document works on (a session's
/// applied pruning); runs on the job thread.
using ModelDerivation = std::function<Result<graph::Graph>(const graph::Graph&, Progress&)>;

/// Imports the ONNX model at `path`, derives the graph to work on when `derive` is set (then
/// `derivation` names it), computes its ModelInfo and places its quantizers with `settings`;
/// runs on a job thread.
Result<LoadedModel> loadModel(const QString& path, Progress& progress,
                              const quantization::QuantizationSettings& settings = {},
                              const ModelDerivation& derive = {}, const QString& derivation = {});

/// A model for a graph in memory: `graph` — derived, as `derivation`, from `source`, the graph of
/// the file at `path` with content hash `modelHash`, or (null `source`) that graph itself —
/// summarized and with its quantizers placed for `settings`; what Compress ▸ Continue with Pruned
/// Model and Back to Dense Model open. Runs on a job thread.
Result<LoadedModel> modelInMemory(graph::Graph graph, std::shared_ptr<const graph::Graph> source,
                                  const QString& derivation, const QString& path,
                                  std::string modelHash,
                                  const quantization::QuantizationSettings& settings,
                                  Progress& progress);

class GraphDocument;

/// What one feature keeps for an open document, under the feature's key (Feature::key()): the
/// document holds it without knowing its type, so a new feature adds no member, setter or signal
/// here.
class DocumentState {
public:
    virtual ~DocumentState() = default;

    /// The quantization setup of `document` changed (a choice, the settings, an undo); returns
    /// true when this state changed with it (a calibration turning stale), so stateChanged fires.
    virtual bool followQuantization(const GraphDocument& document);

    /// The session section this state saves under its feature's key, or nothing (not saved).
    virtual std::optional<nlohmann::json> sessionSection() const;

    /// What the Inspector adds for op `nodeName`: a section of rows and optional bars.
    struct NodeDetails {
        QString section;
        QList<QPair<QString, QString>> rows;
        QString barsLabel;        ///< what the bars are ("per-channel score")
        std::vector<double> bars; ///< drawn as a small bar chart when not empty
    };

    /// Details of op `nodeName` for the Inspector, or nothing.
    virtual std::optional<NodeDetails> nodeDetails(const QString& nodeName) const;
};

/// An open model: graph, info, undo stack and what each feature keeps for it.
class GraphDocument : public QObject {
    Q_OBJECT

public:
    GraphDocument(const QString& filePath, LoadedModel model, QObject* parent = nullptr);

    /// Absolute path of the model file.
    const QString& filePath() const { return m_filePath; }

    /// File name without folder, for titles.
    QString fileName() const;

    /// The file name, with what the graph was derived as ("resnet50.onnx (pruned)").
    QString displayName() const;

    /// The graph the document works on: the file's, or derived from it (see sourceGraph()).
    const graph::Graph& graph() const { return m_model.graph; }

    /// The graph as the model file holds it: graph() unless that was derived from it.
    const graph::Graph& sourceGraph() const {
        return m_model.sourceGraph ? *m_model.sourceGraph : m_model.graph;
    }

    /// True when graph() was derived from the file's graph (a pruned model).
    bool isDerived() const { return m_model.sourceGraph != nullptr; }

    /// What graph() was derived as ("pruned"), or empty.
    const QString& derivation() const { return m_model.derivation; }

    const report::ModelInfo& info() const { return m_model.info; }

    QUndoStack& undoStack() { return m_undoStack; }

    /// The quantization state, or nullptr when propagation failed on this model.
    const quantization::QuantizationState* quantization() const {
        return m_model.quantization ? &*m_model.quantization : nullptr;
    }

    /// The content hash of the model file as it was read (sessions record it).
    const std::string& modelHash() const { return m_model.modelHash; }

    /// Why there is no quantization state (empty when there is one).
    const QString& quantizationError() const { return m_model.quantizationError; }

    /// Every quantizer as drawn and listed (active, requantizers, merged away), by id; computed
    /// once per change for every view.
    const std::vector<quantization::QuantizerMark>& quantizerMarks() const { return m_marks; }

    /// Chooses the config of every point in `changes` and re-finalizes once.
    Result<void> chooseQuantizerConfigs(const quantization::QuantizerConfigChoice& changes);

    /// Re-runs propagation with `settings` (default choices).
    Result<void> setQuantizationSettings(const quantization::QuantizationSettings& settings);

    /// Puts back a state saved earlier (undo of a settings change).
    void restoreQuantization(quantization::QuantizationState state);

    /// What feature `key` keeps for this document (its calibration, its plan…), or nullptr.
    DocumentState* state(const QString& key) const;

    /// The state of feature `key` as its own type, or nullptr.
    template <typename T>
    T* state(const QString& key) const {
        return dynamic_cast<T*>(state(key));
    }

    /// Replaces (nullptr: removes) what feature `key` keeps; emits stateChanged(key).
    void setState(const QString& key, std::unique_ptr<DocumentState> state);

    /// Every feature's state, by key (sessions save their sections, the Inspector their details).
    const std::map<QString, std::unique_ptr<DocumentState>>& states() const { return m_states; }

    /// The section `key` of the session this document was opened from, or nullptr.
    const nlohmann::json* savedSection(std::string_view key) const;

Q_SIGNALS:
    /// Choices, settings or the setup changed; badges and tables redraw.
    void quantizationChanged();

    /// A choice gave quantizers `ids`, each serving several branches, their own config under a
    /// branch-merging rule (core's mergedBranchChoices); the GUI offers the requantization rule.
    void branchChoiceMerged(const QList<int>& ids);

    /// Feature `key`'s state was set or removed, or changed with the setup (see DocumentState).
    void stateChanged(const QString& key);

private:
    void updateMarks();

    QString m_filePath;
    LoadedModel m_model;
    std::vector<quantization::QuantizerMark> m_marks;
    QUndoStack m_undoStack;
    std::map<QString, std::unique_ptr<DocumentState>> m_states;

    /// Lets every state follow a quantization change before the views hear of it.
    void updateStates();
};

} // namespace qs::ui
