// Whole-model comparison against the setups NNCF itself computes (tests/data/golden): activation
// insertion points, weight points, chosen configs, unified-scale groups, qp ids, NNCF's setup state
// and the metatype of every weighted op must be equal, on every golden setup. The zoo
// models are not in the repository: they are read from $QS_ZOO_DIR, exported by make_zoo.py
// (packaging/test.sh does it); ppocr_det is in tests/data/models. A missing zoo model skips, or
// fails when $QS_REQUIRE_ZOO=1 (packaging/test.sh sets it).

#include "core/graph/metatype.h"
#include "core/onnx/model_io.h"
#include "core/quantization/finalize_setup.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/quantizer_propagation_solver.h"
#include "core/quantization/setup_import.h"
#include "core/quantization/setup_reader.h"
#include "core/support/atomic_file.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string_view>

namespace qs::quantization {
namespace {

struct GoldenCase {
    std::string model;
    std::string device;
    std::string preset;
};

size_t nonEmptyGroups(const std::vector<std::vector<int>>& groups) {
    return static_cast<size_t>(
        std::count_if(groups.begin(), groups.end(), [](const auto& g) { return !g.empty(); }));
}

std::string configKey(const nlohmann::json& q) {
    std::string out = "B:" + std::to_string(q["bits"].get<int>());
    out += q["mode"] == "symmetric" ? " M:S" : " M:A";
    out += " SGN:";
    out += q["signedness_to_force"].is_null() ? "ANY"
                                              : (q["signedness_to_force"].get<bool>() ? "S" : "U");
    out += q["per_channel"].get<bool>() ? " PC:Y" : " PC:N";
    out += q["narrow_range"].get<bool>() ? " NR:Y" : " NR:N";
    return out;
}

std::string pointKey(const std::string& node, const nlohmann::json& port) {
    return port.is_null() ? node : node + ":" + std::to_string(port.get<int>());
}

std::filesystem::path modelPath(const std::string& model) {
    if (model == "ppocr_det") {
        return std::filesystem::path(QS_TEST_DATA_DIR) / "models" / "ppocr_det.onnx";
    }
    const char* env = std::getenv("QS_ZOO_DIR");
    return env != nullptr ? std::filesystem::path(env) / (model + ".onnx")
                          : std::filesystem::path();
}

bool zooRequired() {
    const char* env = std::getenv("QS_REQUIRE_ZOO");
    return env != nullptr && std::string_view(env) == "1";
}

template <typename Map>
std::string diffMaps(const Map& expected, const Map& actual, const std::string& what) {
    std::string out;
    for (const auto& [key, value] : expected) {
        auto it = actual.find(key);
        if (it == actual.end()) {
            out += "  missing " + what + " " + key + " (" + value + ")\n";
        } else if (it->second != value) {
            out += "  " + what + " " + key + ": expected " + value + ", got " + it->second + "\n";
        }
    }
    for (const auto& [key, value] : actual) {
        if (!expected.contains(key)) {
            out += "  extra " + what + " " + key + " (" + value + ")\n";
        }
    }
    return out;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesNncf) {
    const GoldenCase& c = GetParam();
    const auto path = modelPath(c.model);
    if (path.empty() || !std::filesystem::exists(path)) {
        ASSERT_FALSE(zooRequired()) << "model '" << path << "' not found and QS_REQUIRE_ZOO=1";
        GTEST_SKIP() << "model '" << path << "' not found: export the zoo with "
                     << "make_zoo.py into $QS_ZOO_DIR";
    }
    const auto goldenPath = std::filesystem::path(QS_TEST_DATA_DIR) / "golden" /
                            (c.model + "." + c.device + "." + c.preset + ".json");
    auto text = readFile(goldenPath);
    ASSERT_TRUE(text.ok()) << text.error().toString();
    const nlohmann::json golden = nlohmann::json::parse(*text);

    auto model = onnx::importModel(path);
    ASSERT_TRUE(model.ok()) << model.error().toString();
    auto hw = HWConfig::builtin(c.device);
    ASSERT_TRUE(hw.ok()) << hw.error().toString();
    const auto preset =
        c.preset == "performance" ? QuantizationPreset::Performance : QuantizationPreset::Mixed;
    auto proposal =
        proposeQuantizerSetup(*model, *hw, presetOptions(preset, model->opsetVersion()));
    ASSERT_TRUE(proposal.ok()) << proposal.error().toString();
    auto setup = finalizeSetup(*proposal, selectFirstConfigs(proposal->setup));
    ASSERT_TRUE(setup.ok()) << setup.error().toString();

    std::map<std::string, std::string> expectedAct, actualAct, expectedW, actualW;
    std::map<std::string, std::string> expectedDirect, actualDirect;
    std::map<int, std::string> goldenIdToKey;
    for (const auto& p : golden["activation_quantization_points"]) {
        const std::string key = pointKey(p["target_node_name"], p["input_port_id"]);
        expectedAct[key] = configKey(p["qconfig"]);
        std::set<std::string> names(p["directly_quantized_operator_node_names"].begin(),
                                    p["directly_quantized_operator_node_names"].end());
        std::string joined;
        for (const auto& n : names) {
            joined += n + ";";
        }
        expectedDirect[key] = joined;
        goldenIdToKey[p["qp_id"].get<int>()] = key;
    }
    std::map<std::string, std::string> expectedMetatypes, actualMetatypes;
    for (const auto& p : golden["weight_quantization_points"]) {
        const std::string name = p["target_node_name"].get<std::string>();
        expectedW[name] = configKey(p["qconfig"]);
        goldenIdToKey[p["qp_id"].get<int>()] = name + "[W]";
        // NNCF's metatype of each weighted op (a Paddle conv whose weight is a Constant node is
        // a GroupConvolution, not a DepthwiseConvolution).
        expectedMetatypes[name] = p["target_node_metatype"].get<std::string>();
        if (const auto node = model->findNode(name)) {
            actualMetatypes[name] = std::string(graph::metatypeOf(*model, *node).name);
        }
    }
    std::map<int, std::string> ourIdToKey;
    for (const auto& [id, point] : setup->quantizationPoints) {
        const nlohmann::json q = toJson(point.qconfig);
        nlohmann::json g = {{"bits", q["num_bits"]},
                            {"mode", q["mode"]},
                            {"signedness_to_force", q["signedness_to_force"]},
                            {"per_channel", q["per_channel"]},
                            {"narrow_range", q["narrow_range"]}};
        if (point.insertionPoint.isWeight) {
            actualW[point.insertionPoint.targetNodeName] = configKey(g);
            ourIdToKey[id] = point.insertionPoint.targetNodeName + "[W]";
            continue;
        }
        const std::string key = point.insertionPoint.toString();
        actualAct[key] = configKey(g);
        std::set<std::string> names(point.directlyQuantizedOperatorNodeNames.begin(),
                                    point.directlyQuantizedOperatorNodeNames.end());
        std::string joined;
        for (const auto& n : names) {
            joined += n + ";";
        }
        actualDirect[key] = joined;
        ourIdToKey[id] = key;
    }
    auto groupSet = [](const auto& groups, const std::map<int, std::string>& keys) {
        std::map<std::string, std::string> out;
        for (const auto& members : groups) {
            std::set<std::string> sorted;
            for (const int id : members) {
                sorted.insert(keys.at(id));
            }
            std::string joined;
            for (const auto& k : sorted) {
                joined += k + ";";
            }
            out[joined] = "group";
        }
        return out;
    };
    std::vector<std::vector<int>> goldenGroups, ourGroups;
    for (const auto& g : golden["unified_scale_groups"]) {
        goldenGroups.push_back(g["qp_ids"].get<std::vector<int>>());
    }
    for (const auto& [gid, ids] : setup->unifiedScaleGroups) {
        ourGroups.push_back(ids);
    }
    std::string diff = diffMaps(expectedAct, actualAct, "activation point");
    diff += diffMaps(expectedW, actualW, "weight point");
    diff += diffMaps(expectedDirect, actualDirect, "directly quantized ops of");
    diff += diffMaps(expectedMetatypes, actualMetatypes, "metatype of");
    diff += diffMaps(groupSet(goldenGroups, goldenIdToKey), groupSet(ourGroups, ourIdToKey),
                     "unified group");
    // The deque order and id assignment follow NNCF's, so even the qp ids agree.
    size_t sameIds = 0;
    for (const auto& [id, key] : goldenIdToKey) {
        sameIds += ourIdToKey.contains(id) && ourIdToKey[id] == key ? 1 : 0;
    }
    EXPECT_EQ(sameIds, goldenIdToKey.size()) << "qp ids differ from NNCF's";
    std::vector<std::vector<int>> goldenShared, ourShared;
    for (const auto& g : golden["shared_input_operation_set_groups"]) {
        goldenShared.push_back(g["qp_ids"].get<std::vector<int>>());
    }
    for (const auto& [gid, ids] : setup->sharedInputOperationSetGroups) {
        ourShared.push_back(ids);
    }
    // Our setup state equals NNCF's serialisation, group ids included (names compared as sets).
    auto normalized = [](nlohmann::json state) {
        for (auto& [id, point] : state["quantization_points"].items()) {
            (void)id;
            auto& names = point["directly_quantized_operator_node_names"];
            std::vector<std::string> sorted = names.get<std::vector<std::string>>();
            std::sort(sorted.begin(), sorted.end());
            names = sorted;
        }
        return nlohmann::json{
            {"quantization_points", state["quantization_points"]},
            {"unified_scale_groups", state["unified_scale_groups"]},
            {"shared_input_operation_set_groups", state["shared_input_operation_set_groups"]}};
    };
    EXPECT_EQ(normalized(setup->toJson()), normalized(golden["nncf_setup_state"]))
        << "setup state differs from NNCF's";
    EXPECT_EQ(ourGroups.size(), golden["counts"]["unified_scale_groups"].get<size_t>());
    EXPECT_EQ(nonEmptyGroups(ourGroups), nonEmptyGroups(goldenGroups));
    EXPECT_EQ(actualAct.size(), golden["counts"]["activation_quantizers"].get<size_t>());
    EXPECT_EQ(actualW.size(), golden["counts"]["weight_quantizers"].get<size_t>());
    diff += diffMaps(groupSet(goldenShared, goldenIdToKey), groupSet(ourShared, ourIdToKey),
                     "shared-input group");
    EXPECT_TRUE(diff.empty()) << c.model << "." << c.device << "." << c.preset << ":\n" << diff;

    // NNCF's own setup state passes the strict reader and imports onto our proposal as it is.
    auto read = parseSetup(golden["nncf_setup_state"].dump(), *model);
    ASSERT_TRUE(read.ok()) << read.error().toString();
    auto state = computeQuantization(*model, {.hw = c.device, .preset = preset});
    ASSERT_TRUE(state.ok()) << state.error().toString();
    auto choice = choicesForSetup(*state, *read);
    ASSERT_TRUE(choice.ok()) << choice.error().toString();
    EXPECT_EQ(*choice, state->choice);
}

std::vector<GoldenCase> allCases() {
    std::vector<GoldenCase> cases;
    for (const char* model : {"squeezenet1_1", "resnet18", "mobilenet_v2", "efficientnet_b0",
                              "shufflenet_v2_x1_0", "resnet50", "tiny_bert", "ppocr_det"}) {
        for (const char* device : {"cpu", "npu"}) {
            for (const char* preset : {"performance", "mixed"}) {
                cases.push_back({model, device, preset});
            }
        }
    }
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Zoo, GoldenTest, ::testing::ValuesIn(allCases()), [](const auto& info) {
    return info.param.model + "_" + info.param.device + "_" + info.param.preset;
});

} // namespace
} // namespace qs::quantization
