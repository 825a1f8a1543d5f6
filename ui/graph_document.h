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
#include "ui/features/calibration/calibration.h"

#include <QList>
#include <QObject>
#include <QString>
#include <QUndoStack>

#include <optional>
#include <string>

namespace qs::ui {

/// What importing a model file yields: the graph and its summary.
struct LoadedModel {
    graph::Graph graph;
    report::ModelInfo info;
    /// Quantizers with the default settings; empty when propagation failed (see the error).
    std::optional<quantization::QuantizationState> quantization;
    QString quantizationError;
    std::string modelHash; ///< quantization::hashModelFile() of the file read
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

    /// The weight-compression plan shown and exported, or nullptr before Compress Weights. The
    /// graph itself stays float: export applies the plan to a copy.
    const compression::CompressionPlan* compressionPlan() const {
        return m_compressionPlan ? &*m_compressionPlan : nullptr;
    }

    /// Replaces the plan (through ApplyCompressionPlanCommand); emits compressionPlanChanged.
    void setCompressionPlan(std::optional<compression::CompressionPlan> plan);

    /// The last calibration, fresh or stale, or nullptr.
    const CalibrationResult* calibration() const {
        return m_calibration ? &*m_calibration : nullptr;
    }

    /// The last calibration when it was made for the current setup, else nullptr.
    const CalibrationResult* freshCalibration() const {
        return m_calibration && !m_calibrationStale ? &*m_calibration : nullptr;
    }

    /// True when there is a calibration but the setup changed since (recalibrate).
    bool isCalibrationStale() const { return m_calibration && m_calibrationStale; }

    /// Keeps `result` (computed for the setup its fingerprint names).
    void setCalibration(CalibrationResult result);

Q_SIGNALS:
    /// Choices, settings or the setup changed; badges and tables redraw.
    void quantizationChanged();

    /// A choice gave quantizers `ids`, each serving several branches, their own config under a
    /// branch-merging rule (core's mergedBranchChoices); the GUI offers the requantization rule.
    void branchChoiceMerged(const QList<int>& ids);
    /// The weight-compression plan was set, replaced or removed.
    void compressionPlanChanged();
    /// A calibration arrived or became stale / fresh again (undo back to its setup).
    void calibrationChanged();

private:
    void updateMarks();

    QString m_filePath;
    LoadedModel m_model;
    std::vector<quantization::QuantizerMark> m_marks;
    QUndoStack m_undoStack;
    std::optional<compression::CompressionPlan> m_compressionPlan;
    std::optional<CalibrationResult> m_calibration;
    bool m_calibrationStale = false;

    /// Compares the calibration's setup with the current one (after each quantization change).
    void updateCalibrationStaleness();
};

} // namespace qs::ui
