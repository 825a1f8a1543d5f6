// Import, export and bad-input behaviour of core/onnx.

#include "core/graph/graph_builder.h"
#include "core/graph/metatype.h"
#include "core/onnx/model_io.h"
#include "core/support/atomic_file.h"
#include "tests/support/bad_models.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace qs::onnx {
namespace {
namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "qs-test-XXXXXX").string();
        m_path = ::mkdtemp(tmpl.data());
    }

    ~TempDir() {
        std::error_code ec;
        fs::permissions(m_path, fs::perms::owner_all, ec);
        fs::remove_all(m_path, ec);
    }

    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

TEST(OnnxImport, ConstantNodesBecomeInitializersWithTraceableNames) {
    auto graph = importModelFromBytes(testing::validModelBytes(), {});
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    EXPECT_EQ(graph->numNodes(), 2U); // Relu, Add; the Constant is gone
    const auto bias = graph->findValue("bias");
    ASSERT_TRUE(bias);
    const graph::Value& value = graph->value(*bias);
    ASSERT_TRUE(value.isInitializer());
    EXPECT_EQ(value.constantNodeName, "bias_const");
    EXPECT_EQ(value.initializer->as<float>()[3], 1.5F);
    EXPECT_EQ(value.shape.toString(), "4");
}

TEST(OnnxImport, ShapesAreInferredAndCanBeOverridden) {
    ImportOptions options;
    options.inputShapes.push_back({"x", {3, 4}});
    auto graph = importModelFromBytes(testing::validModelBytes(), options);
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    EXPECT_EQ(graph->value(*graph->findValue("r")).shape.toString(), "3x4");

    options.inputShapes = {{"nope", {1}}};
    auto wrong = importModelFromBytes(testing::validModelBytes(), options);
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().code(), Errc::Usage);
    EXPECT_NE(wrong.error().toString().find("'nope'"), std::string::npos);
}

TEST(OnnxImport, ParsesInputShapeFlags) {
    auto parsed = parseInputShapeOverride("input=1,3,224,224");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->inputName, "input");
    EXPECT_EQ(parsed->dims, (std::vector<int64_t>{1, 3, 224, 224}));
    auto dynamic = parseInputShapeOverride("a=b=-1,8");
    ASSERT_TRUE(dynamic.ok());
    EXPECT_EQ(dynamic->inputName, "a=b");
    for (const char* bad : {"input", "=1,2", "x=", "x=1,,2", "x=1,two", "x=-2", "x=1e3"}) {
        EXPECT_FALSE(parseInputShapeOverride(bad).ok()) << bad;
    }
}

TEST(OnnxImport, ExternalDataInsideTheFolderLoads) {
    TempDir dir;
    testing::writeExternalDataModel(dir.path(), "model.onnx");
    auto graph = importModel(dir.path() / "model.onnx");
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    const auto w = graph->findValue("w");
    ASSERT_TRUE(w);
    EXPECT_EQ(graph->value(*w).initializer->as<float>()[1], -2.0F);
}

TEST(OnnxImport, BadInputsGiveOneLineErrorsNamingTheProblem) {
    TempDir dir;
    const auto cases = testing::writeBadModels(dir.path() / "models");
    ASSERT_GE(cases.size(), 15U);
    for (const testing::BadModel& bad : cases) {
        const fs::path path = dir.path() / "models" / bad.name;
        auto graph = importModel(path);
        ASSERT_FALSE(graph.ok()) << bad.name << " imported";
        const std::string message = graph.error().toString();
        EXPECT_NE(message.find(bad.expectedMessagePart), std::string::npos)
            << bad.name << ": " << message;
        EXPECT_NE(message.find(bad.name), std::string::npos) << "names the file: " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(OnnxImport, UnreadableFileIsAnIoError) {
    TempDir dir;
    const fs::path path = dir.path() / "locked.onnx";
    ASSERT_TRUE(writeFileAtomically(path, testing::validModelBytes()).ok());
    fs::permissions(path, fs::perms::none);
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_exec);
    // root reads anything, so check as an unprivileged user in a child process.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
            ::_exit(3);
        }
        auto graph = importModel(path);
        const bool expected = !graph.ok() && graph.error().code() == Errc::Io &&
                              graph.error().toString().find("cannot open") != std::string::npos;
        ::_exit(expected ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(OnnxImport, OpaqueNodesAreKeptAndListed) {
    // A custom-domain op and an unknown default-domain op survive import and export.
    graph::Graph g;
    g.metadata().opsetImports = {{"", 13}, {"com.example", 1}};
    const auto x = g.addValue("x", graph::DataType::Float, graph::TensorShape::ofDims({2}));
    const auto a = g.addValue("a", graph::DataType::Float, graph::TensorShape::ofDims({2}));
    const auto b = g.addValue("b", graph::DataType::Float, graph::TensorShape::ofDims({2}));
    g.addInput(x);
    g.addNode("custom", "FancyOp", {x}, {a}, {}, "com.example");
    g.addNode("future", "NotAnOnnxOpYet", {a}, {b});
    g.addOutput(b);
    auto bytes = serializeModel(g);
    ASSERT_TRUE(bytes.ok());
    ImportNotes notes;
    auto back = importModelFromBytes(*bytes, {}, {}, &notes);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->numNodes(), 2U);
    EXPECT_EQ(notes.warnings.size(), 2U);
    std::string diff;
    EXPECT_TRUE(graph::graphsEqual(g, *back, &diff)) << diff;
}

TEST(OnnxExport, WritesAtomicallyAndKeepsTheOldFileOnFailure) {
    TempDir dir;
    const fs::path path = dir.path() / "out.onnx";
    ASSERT_TRUE(writeFileAtomically(path, "old contents").ok());
    graph::Graph cyclic;
    cyclic.metadata().opsetImports = {{"", 13}};
    const auto a = cyclic.addValue("a", graph::DataType::Float);
    const auto b = cyclic.addValue("b", graph::DataType::Float);
    cyclic.addNode("n1", "Relu", {a}, {b});
    cyclic.addNode("n2", "Relu", {b}, {a});
    cyclic.addOutput(b);
    auto written = exportModel(cyclic, path);
    ASSERT_FALSE(written.ok());
    EXPECT_EQ(readFile(path).value(), "old contents");
    for (const auto& entry : fs::directory_iterator(dir.path())) {
        EXPECT_EQ(entry.path().filename(), "out.onnx") << "temp file left behind";
    }
    EXPECT_FALSE(exportModel(cyclic, dir.path() / "no" / "such" / "dir.onnx").ok());
}

} // namespace
} // namespace qs::onnx

namespace qs::onnx {
namespace {

TEST(OnnxImport, ModelsOver64MegabytesImportWithoutCopyingWeights) {
    // Protobuf's old default limit was 64 MB; a 72 MB weight must still load, byte for byte.
    graph::GraphBuilder b;
    const auto x = b.input("x", {1, 18'000'000});
    std::vector<float> big(18'000'000);
    for (size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<float>(i % 1000);
    }
    const auto w = b.weight("big", {1, 18'000'000}, big);
    const auto y = b.op("Add", "add", {x, w});
    b.output(y, graph::DataType::Float, {1, 18'000'000});
    auto bytes = serializeModel(b.take());
    ASSERT_TRUE(bytes.ok());
    ASSERT_GT(bytes->size(), 64U << 20);
    auto graph = importModelFromBytes(*bytes, {});
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    const auto& tensor = *graph->value(*graph->findValue("big")).initializer;
    EXPECT_EQ(tensor.numElements(), 18'000'000);
    EXPECT_EQ(tensor.as<float>()[17'999'999], 999.0F);
}

} // namespace
} // namespace qs::onnx
