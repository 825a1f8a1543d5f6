// Small models and files for the GUI tests, written into a temporary folder: a valid Conv→Relu
// model built with the Graph API, and files that are not models at all; opening one and waiting
// for its layout.
#pragma once

#include <QByteArray>
#include <QString>

namespace qs::ui {
class MainWindow;
} // namespace qs::ui

namespace qs::ui::test {

/// Opens `path` in `window` and waits until the document is open and its graph laid out; false
/// when that takes longer than `timeoutMs`.
bool openAndLayOut(MainWindow& window, const QString& path, int timeoutMs = 60000);

/// Writes a Conv(4 filters, 3x3) → Relu model with input "input" 1x3x8x8 and output "output";
/// returns its path.
QString writeConvReluModel(const QString& folder,
                           const QString& fileName = QStringLiteral("model.onnx"));

/// Writes a model with one Relu and one node of the custom op "com.example.Frobnicate", which
/// Quantscope keeps opaque; returns its path.
QString writeCustomOpModel(const QString& folder);

/// Writes `bytes` to `folder/fileName` and returns the path.
QString writeFile(const QString& folder, const QString& fileName, const QByteArray& bytes);

} // namespace qs::ui::test
