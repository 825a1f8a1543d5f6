// Round trip on every model we can find: import -> export -> import gives the same graph, and
// the exported model passes onnx::checker whenever the original imports.

#include "core/onnx/model_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

namespace qs::onnx {
namespace {
namespace fs = std::filesystem;

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

std::vector<fs::path> testModels() {
    std::vector<fs::path> models = {fs::path(QS_SOURCE_DIR) / "resources/models/demo_cnn.onnx"};
    for (const char* suite : {"node", "simple", "pytorch-operator", "pytorch-converted"}) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(kTestData / suite, ec)) {
            if (fs::exists(entry.path() / "model.onnx")) {
                models.push_back(entry.path() / "model.onnx");
            }
        }
    }
    std::sort(models.begin() + 1, models.end());
    return models;
}

TEST(OnnxRoundTrip, EveryTestModelReimportsIdentically) {
    const auto models = testModels();
    ASSERT_GT(models.size(), 500U)
        << "libonnx-testdata is missing (packaging/setup.sh installs it)";
    size_t imported = 0;
    size_t rejectedOldOpset = 0;
    for (const fs::path& path : models) {
        auto graph = importModel(path);
        if (!graph.ok()) {
            // Only models outside our opset range may be refused, with that reason.
            EXPECT_NE(graph.error().toString().find("is not supported"), std::string::npos)
                << graph.error().toString();
            ++rejectedOldOpset;
            continue;
        }
        ++imported;
        auto bytes = serializeModel(*graph);
        ASSERT_TRUE(bytes.ok()) << path << ": " << bytes.error().toString();
        auto again = importModelFromBytes(*bytes, {});
        ASSERT_TRUE(again.ok()) << path << ": " << again.error().toString();
        std::string diff;
        EXPECT_TRUE(graph::graphsEqual(*graph, *again, &diff)) << path << ": " << diff;
        auto checked = checkModel(*graph);
        EXPECT_TRUE(checked.ok()) << path << ": " << checked.error().toString();
    }
    EXPECT_GT(imported, 800U);
    std::printf("round trip: %zu models imported and re-imported, %zu outside opsets %lld-%lld\n",
                imported, rejectedOldOpset, static_cast<long long>(kMinOpset),
                static_cast<long long>(kMaxOpset));
}

} // namespace
} // namespace qs::onnx
