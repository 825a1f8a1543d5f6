// GraphDocument: one open model as the GUI holds it — the imported core Graph, its ModelInfo, its
// quantization state (HW config, preset, rule, proposal, choices, finalized setup; computed with
// the import on the job thread) and the undo stack that every edit goes through. Views read it;
// edits arrive as QUndoCommands that call the setters here, which emit quantizationChanged.
#pragma once

#include "core/compression/weight_compression.h"
#include "core/graph/graph.h"
#include "core/quantization/quantization_state.h"
#include "core/report/model_info.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <QObject>
#include <QString>
#include <QUndoStack>

#include <optional>

namespace qs::ui {

/// What importing a model file yields: the graph and its summary.
struct LoadedModel {
    graph::Graph graph;
    report::ModelInfo info;
    /// Quantizers with the default settings; empty when propagation failed (see the error).
    std::optional<quantization::QuantizationState> quantization;
    QString quantizationError;
};

/// Imports the ONNX model at `path`, computes its ModelInfo and places its quantizers with
/// `settings`; runs on a job thread.
Result<LoadedModel> loadModel(const QString& path, Progress& progress,
                              const quantization::QuantizationSettings& settings = {});

/// An open model: graph, info and undo stack.
class GraphDocument : public QObject {
    Q_OBJECT

public:
    GraphDocument(const QString& filePath, LoadedModel model, QObject* parent = nullptr);

    /// Absolute path of the model file.
    const QString& filePath() const { return m_filePath; }

    /// File name without folder, for titles.
    QString fileName() const;

    const graph::Graph& graph() const { return m_model.graph; }

    const report::ModelInfo& info() const { return m_model.info; }

    QUndoStack& undoStack() { return m_undoStack; }

    /// The quantization state, or nullptr when propagation failed on this model.
    const quantization::QuantizationState* quantization() const {
        return m_model.quantization ? &*m_model.quantization : nullptr;
    }

    /// Why there is no quantization state (empty when there is one).
    const QString& quantizationError() const { return m_model.quantizationError; }

    /// Every quantizer as drawn and listed (active, requantizers, merged away), by id.
    std::vector<quantization::QuantizerMark> quantizerMarks() const;

    /// Chooses the config of every point in `changes` and re-finalizes once.
    Result<void> chooseQuantizerConfigs(const quantization::QuantizerConfigChoice& changes);

    /// Re-runs propagation with `settings` (default choices).
    Result<void> setQuantizationSettings(const quantization::QuantizationSettings& settings);

    /// Puts back a state saved earlier (undo of a settings change).
    void restoreQuantization(quantization::QuantizationState state);

    /// The weight-compression plan shown and exported, or nullptr before Compress Weights. The
    /// graph itself stays float: export applies the plan to a copy.
    const compression::CompressionPlan* compressionPlan() const {
        return m_compressionPlan ? &*m_compressionPlan : nullptr;
    }

    /// Replaces the plan (through ApplyCompressionPlanCommand); emits compressionPlanChanged.
    void setCompressionPlan(std::optional<compression::CompressionPlan> plan);

Q_SIGNALS:
    /// Choices, settings or the setup changed; badges and tables redraw.
    void quantizationChanged();

    /// The weight-compression plan was set, replaced or removed.
    void compressionPlanChanged();

private:
    QString m_filePath;
    LoadedModel m_model;
    QUndoStack m_undoStack;
    std::optional<compression::CompressionPlan> m_compressionPlan;
};

} // namespace qs::ui
