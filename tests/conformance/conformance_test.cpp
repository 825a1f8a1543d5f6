// Conformance on ONNX's own per-op test data (Debian's libonnx-testdata): every case whose ops
// are all registered runs through the Executor and is compared with ONNX's expected outputs at
// ONNX's tolerances (rtol 1e-3, atol 1e-7). The test writes the op -> passed/total table to
// conformance.md in the build folder (and to docs/conformance.md with QS_UPDATE_CONFORMANCE=1), and
// fails when a case fails that known_failures.txt does not list with its reason.

#include "core/onnx/model_io.h"
#include "core/runtime/executor.h"
#include "core/support/atomic_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace qs::runtime {
namespace {

namespace fs = std::filesystem;

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;
const char* const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

struct CaseResult {
    std::string name; ///< "node/test_relu"
    std::set<std::string> ops;
    bool runnable = false;
    bool passed = false;
    std::string reason;
};

Result<void> compare(const Tensor& actual, const graph::TensorData& expected) {
    if (actual.shape() != expected.dims()) {
        return Error(Errc::Internal, "shape " + shapeToString(actual.shape()) + " != expected " +
                                         shapeToString(expected.dims()));
    }
    const bool sameKind =
        actual.dtype() == expected.dtype() ||
        (graph::isFloatingPoint(actual.dtype()) && graph::isFloatingPoint(expected.dtype()));
    if (!sameKind) {
        return Error(Errc::Internal, "dtype " + std::string(graph::dataTypeName(actual.dtype())) +
                                         " != expected " +
                                         std::string(graph::dataTypeName(expected.dtype())));
    }
    for (int64_t i = 0; i < actual.numElements(); ++i) {
        const double a = actual.elementAsDouble(i);
        const double e = expected.elementAsDouble(i);
        if (std::isnan(e) && std::isnan(a)) {
            continue;
        }
        if (std::isinf(e) && a == e) {
            continue;
        }
        if (!(std::abs(a - e) <= kAtol + kRtol * std::abs(e))) {
            std::ostringstream out;
            out << "element " << i << ": " << a << " != expected " << e;
            return Error(Errc::Internal, out.str());
        }
    }
    return success();
}

Result<void> runCase(const fs::path& dir, const graph::Graph& graph) {
    QS_ASSIGN_OR_RETURN(Executor executor, Executor::create(graph));
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set")) {
            sets.push_back(entry.path());
        }
    }
    std::sort(sets.begin(), sets.end());
    for (const fs::path& set : sets) {
        std::vector<Tensor> inputs;
        for (size_t i = 0; i < executor.inputIds().size(); ++i) {
            QS_ASSIGN_OR_RETURN(graph::TensorPtr data,
                                onnx::readTensorFile(set / ("input_" + std::to_string(i) + ".pb")));
            inputs.push_back(Tensor::wrap(data));
        }
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                            executor.run(inputs).context(set.filename().string()));
        for (size_t i = 0; i < outputs.size(); ++i) {
            QS_ASSIGN_OR_RETURN(
                graph::TensorPtr expected,
                onnx::readTensorFile(set / ("output_" + std::to_string(i) + ".pb")));
            QS_TRY(compare(outputs[i], *expected)
                       .context(set.filename().string() + " output " + std::to_string(i)));
        }
    }
    return success();
}

CaseResult evaluate(const fs::path& dir, const std::string& name) {
    CaseResult result;
    result.name = name;
    onnx::ImportOptions options;
    options.allowOldOpsets = true;
    auto graph = onnx::importModel(dir / "model.onnx", options);
    if (!graph.ok()) {
        result.reason = "import: " + graph.error().toString();
        return result;
    }
    bool allRegistered = true;
    for (const graph::NodeId id : graph->nodeIds()) {
        const graph::Node& node = graph->node(id);
        result.ops.insert(node.opType);
        allRegistered = allRegistered && findOp(node.opType, node.domain) != nullptr;
    }
    if (!allRegistered) {
        result.reason = "uses an unregistered op";
        return result;
    }
    result.runnable = true;
    auto ran = runCase(dir, *graph);
    result.passed = ran.ok();
    if (!ran.ok()) {
        result.reason = ran.error().toString();
    }
    return result;
}

std::map<std::string, std::string> loadKnownFailures() {
    std::map<std::string, std::string> known;
    std::ifstream in(QS_CONFORMANCE_KNOWN_FAILURES);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        const auto space = line.find(' ');
        known[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
    }
    return known;
}

std::string renderTable(const std::vector<CaseResult>& results,
                        const std::map<std::string, std::string>& known) {
    struct Tally {
        int passed = 0;
        int total = 0;
        std::vector<std::string> failing;
    };

    std::map<std::string, Tally> byOp;
    for (const OpDef* def : allOps()) {
        byOp[std::string(def->opType)];
    }
    int runnable = 0;
    int passed = 0;
    for (const CaseResult& r : results) {
        if (!r.runnable) {
            continue;
        }
        ++runnable;
        passed += r.passed ? 1 : 0;
        for (const std::string& op : r.ops) {
            Tally& tally = byOp[op];
            ++tally.total;
            if (r.passed) {
                ++tally.passed;
            } else {
                tally.failing.push_back(r.name);
            }
        }
    }
    std::ostringstream out;
    out << "Cases from libonnx-testdata (`node`, `pytorch-converted`, `pytorch-operator`, "
           "`simple`) "
           "whose ops are all registered, run by the executor and compared at rtol 1e-3, atol "
           "1e-7. A case counts for every op it contains.\n\n";
    out << "Runnable cases: " << runnable << ", passed: " << passed << ", of " << results.size()
        << " cases in the data.\n\n";
    out << "| op | passed / total | failing cases (reason) |\n|---|---|---|\n";
    for (const auto& [op, tally] : byOp) {
        out << "| " << op << " | " << tally.passed << " / " << tally.total << " | ";
        for (size_t i = 0; i < tally.failing.size(); ++i) {
            auto it = known.find(tally.failing[i]);
            out << (i > 0 ? "; " : "") << tally.failing[i];
            if (it != known.end() && !it->second.empty()) {
                out << " (" << it->second << ")";
            }
        }
        out << " |\n";
    }
    return out.str();
}

/// The README keeps the table between two markers; the test fails when it is stale and rewrites
/// it with QS_UPDATE_CONFORMANCE=1.
void checkReadmeTable(const std::string& table, bool update) {
    const std::string begin = "<!-- conformance:begin (generated by tests/conformance; "
                              "QS_UPDATE_CONFORMANCE=1 ctest -L conformance) -->\n";
    const std::string end = "<!-- conformance:end -->";
    const fs::path readme = QS_README_PATH;
    auto text = qs::readFile(readme);
    ASSERT_TRUE(text.ok()) << text.error().toString();
    const size_t from = text->find(begin);
    const size_t to = text->find(end);
    ASSERT_TRUE(from != std::string::npos && to != std::string::npos && from < to)
        << "README.md lacks the conformance markers";
    const size_t bodyStart = from + begin.size();
    if (text->compare(bodyStart, to - bodyStart, table) == 0) {
        return;
    }
    if (!update) {
        ADD_FAILURE() << "README.md's conformance table is stale: run QS_UPDATE_CONFORMANCE=1 "
                         "ctest -L conformance";
        return;
    }
    text->replace(bodyStart, to - bodyStart, table);
    ASSERT_TRUE(qs::writeFileAtomically(readme, *text).ok());
}

TEST(Conformance, OnnxNodeTests) {
    const fs::path root = QS_ONNX_TESTDATA_DIR;
    if (!fs::exists(root)) {
        GTEST_SKIP() << "libonnx-testdata is not installed";
    }
    std::vector<CaseResult> results;
    for (const char* suite : kSuites) {
        std::vector<fs::path> dirs;
        for (const auto& entry : fs::directory_iterator(root / suite)) {
            if (fs::exists(entry.path() / "model.onnx")) {
                dirs.push_back(entry.path());
            }
        }
        std::sort(dirs.begin(), dirs.end());
        for (const fs::path& dir : dirs) {
            results.push_back(evaluate(dir, std::string(suite) + "/" + dir.filename().string()));
        }
    }
    const auto known = loadKnownFailures();
    const std::string table = renderTable(results, known);
    std::ofstream(fs::path(QS_CONFORMANCE_OUT)) << table;
    const char* update = std::getenv("QS_UPDATE_CONFORMANCE");
    checkReadmeTable(table, update != nullptr && *update == '1');
    for (const CaseResult& r : results) {
        if (r.runnable && !r.passed && !known.contains(r.name)) {
            ADD_FAILURE() << r.name << ": " << r.reason;
        }
        if (r.runnable && r.passed && known.contains(r.name)) {
            std::cout << "note: " << r.name << " passes now; drop it from known_failures.txt\n";
        }
    }
}

} // namespace
} // namespace qs::runtime
