#include "tests/gui/test_models.h"

#include "core/graph/graph.h"
#include "core/onnx/model_io.h"
#include "ui/graph_page.h"
#include "ui/main_window.h"
#include "ui/session.h"

#include <QDir>
#include <QFile>
#include <QTest>
#include <gtest/gtest.h>

#include <vector>

namespace qs::ui::test {

namespace {
graph::Graph convReluGraph() {
    using namespace qs::graph;
    Graph g;
    const ValueId input = g.addValue("input", DataType::Float, TensorShape::ofDims({1, 3, 8, 8}));
    g.addInput(input);
    constexpr size_t kWeightCount = 4 * 3 * 3 * 3;
    const std::vector<float> weights(kWeightCount, 0.25F);
    const ValueId weight = g.addInitializer(
        "conv.weight", TensorData::fromValues<float>(DataType::Float, {4, 3, 3, 3},
                                                     std::span<const float>(weights)));
    const ValueId conv = g.addValue("conv_out", DataType::Float);
    const ValueId output = g.addValue("output", DataType::Float);
    g.addNode("conv", "Conv", {input, weight}, {conv},
              {Attribute{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}});
    g.addNode("relu", "Relu", {conv}, {output});
    g.addOutput(output);
    g.metadata().opsetImports = {{"", 13}};
    g.metadata().producerName = "gui-test";
    return g;
}

graph::Graph customOpGraph() {
    using namespace qs::graph;
    Graph g;
    const ValueId input = g.addValue("input", DataType::Float, TensorShape::ofDims({1, 16}));
    g.addInput(input);
    const ValueId relu = g.addValue("relu_out", DataType::Float, TensorShape::ofDims({1, 16}));
    const ValueId output = g.addValue("output", DataType::Float, TensorShape::ofDims({1, 16}));
    g.addNode("relu", "Relu", {input}, {relu});
    g.addNode("frob", "Frobnicate", {relu}, {output}, {}, "com.example");
    g.addOutput(output);
    g.metadata().opsetImports = {{"", 13}, {"com.example", 1}};
    return g;
}
} // namespace

QString writeCustomOpModel(const QString& folder) {
    QString path = QDir(folder).filePath(QStringLiteral("custom.onnx"));
    const auto written = onnx::exportModel(customOpGraph(), QFile::encodeName(path).toStdString());
    EXPECT_TRUE(written.ok()) << (written.ok() ? std::string() : written.error().toString());
    return path;
}

QString writeConvReluModel(const QString& folder, const QString& fileName) {
    QString path = QDir(folder).filePath(fileName);
    const auto written = onnx::exportModel(convReluGraph(), QFile::encodeName(path).toStdString());
    EXPECT_TRUE(written.ok()) << (written.ok() ? std::string() : written.error().toString());
    return path;
}

QString writeFile(const QString& folder, const QString& fileName, const QByteArray& bytes) {
    QString path = QDir(folder).filePath(fileName);
    QFile file(path);
    EXPECT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(bytes);
    return path;
}

bool openAndLayOut(MainWindow& window, const QString& path, int timeoutMs) {
    window.openModel(path);
    return QTest::qWaitFor(
        [&window] {
            return !window.session().isOpening() && window.session().document() != nullptr &&
                   !window.graphPage().isLayingOut();
        },
        timeoutMs);
}

} // namespace qs::ui::test
