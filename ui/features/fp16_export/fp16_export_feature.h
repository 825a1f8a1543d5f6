// Fp16ExportFeature: File ▸ Export ▸ FP16 ONNX… — asks for the FP16 options (Fp16ExportDialog) and
// a path, and writes a copy of the open model with float16 weights and computation
// (compression::convertToFloat16) through ModelExportJob, atomically.
#pragma once

#include "core/compression/fp16_conversion.h"
#include "ui/feature.h"

#include <QPointer>

class QAction;

namespace qs::ui {

class GraphDocument;
class ModelExportJob;

/// The FP16 export.
class Fp16ExportFeature : public Feature {
    Q_OBJECT

public:
    explicit Fp16ExportFeature(const FeatureContext& context);

    ~Fp16ExportFeature() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    /// File ▸ Export ▸ FP16 ONNX… (enabled while a model is open and no export runs).
    QAction* exportAction() const { return m_export; }

    /// Writes the open document converted to float16 to `path` in the background.
    void exportFp16(const QString& path, const compression::Fp16Options& options);

    /// Asks for the options and a path, then exports.
    void showExportDialog();

Q_SIGNALS:
    /// An export job ended; `ok` when `path` was written.
    void exportFinished(bool ok, const QString& path);

private:
    void syncActions();

    FeatureContext m_context;
    ModelExportJob* m_job;
    QAction* m_export = nullptr;
    QPointer<GraphDocument> m_document;
};

} // namespace qs::ui
