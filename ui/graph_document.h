// GraphDocument: one open model as the GUI holds it — the imported core Graph, its ModelInfo and
// the undo stack that every edit will go through. Views read it; edits arrive as QUndoCommands.
#pragma once

#include "core/graph/graph.h"
#include "core/report/model_info.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <QObject>
#include <QString>
#include <QUndoStack>

namespace qs::ui {

/// What importing a model file yields: the graph and its summary.
struct LoadedModel {
    graph::Graph graph;
    report::ModelInfo info;
};

/// Imports the ONNX model at `path` and computes its ModelInfo; runs on a job thread.
Result<LoadedModel> loadModel(const QString& path, Progress& progress);

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

private:
    QString m_filePath;
    LoadedModel m_model;
    QUndoStack m_undoStack;
};

} // namespace qs::ui
