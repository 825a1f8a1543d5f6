// The options of File ▸ Export ▸ FP16 ONNX…: keep the model's float32 inputs and outputs, and op
// types to keep in float32 besides the built-in block list (shown under the fields).
#pragma once

#include "core/compression/fp16_conversion.h"

#include <QDialog>

class QCheckBox;
class QLineEdit;

namespace qs::ui {

/// FP16 export options: keep the model's float32 inputs/outputs, op types to block.
class Fp16ExportDialog : public QDialog {
    Q_OBJECT

public:
    explicit Fp16ExportDialog(QWidget* parent = nullptr);

    /// Options from the controls; block ops are comma- or space-separated op types.
    compression::Fp16Options options() const;

    QCheckBox& keepIoTypesBox() const { return *m_keepIoTypes; }

    QLineEdit& blockOpsEdit() const { return *m_blockOps; }

private:
    QCheckBox* m_keepIoTypes;
    QLineEdit* m_blockOps;
};

} // namespace qs::ui
