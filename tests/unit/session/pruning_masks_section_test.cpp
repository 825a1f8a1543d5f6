// The session's "pruning" section on the trained demo model (digits_cnn, two pruning sections):
// an l2 run with a fixed kept count and an LFH run on given H_c survive the session file round
// trip exactly and restore to the same masks and constraints without a dataset; a session without
// the section has none; a malformed section is an error naming the field; a section restored on
// another model is an error saying it does not match; an applied section makes sessionGraph the
// pruned graph the workflow builds (and an unapplied one the file's).

#include "core/onnx/model_io.h"
#include "core/pruning/pruning_workflow.h"
#include "core/quantization/quantization_state.h"
#include "core/session/pruning_masks_section.h"
#include "core/session/session_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace qs::session {
namespace {

const std::filesystem::path kDigits = QS_DIGITS_MODEL;
const std::filesystem::path kDemo = QS_DEMO_MODEL;

std::filesystem::path tempPath(const std::string& name) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("qs_pruning_section_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir / name;
}

graph::Graph digits() {
    auto model = onnx::importModel(kDigits);
    EXPECT_TRUE(model.ok()) << model.error().toString();
    return std::move(model).value();
}

pruning::PruningRequest l2Request() {
    pruning::PruningRequest request;
    request.target = {true, 0.8};
    request.simd = 4;
    request.importance = pruning::ImportanceMetric::L2;
    request.keep = {{"/head/head.0/Conv", 4}};
    return request;
}

/// Writes `section` into a session of the model, reads the file back and returns its section.
PruningMasksSection throughTheFile(const graph::Graph& graph, const PruningMasksSection& section,
                                   const std::string& name) {
    auto session = captureSession(kDigits, *hashModelFile(kDigits),
                                  *quantization::computeQuantization(graph, {}));
    EXPECT_TRUE(session.ok());
    setPruningMasksSection(*session, section);
    const auto path = tempPath(name);
    EXPECT_TRUE(writeSessionFile(path, *session).ok());
    auto read = readSessionFile(path);
    EXPECT_TRUE(read.ok()) << read.error().toString();
    auto found = pruningMasksSection(*read);
    EXPECT_TRUE(found.ok()) << found.error().toString();
    EXPECT_TRUE(found->has_value());
    return **found;
}

TEST(PruningMasksSection, AnL2RunRoundTripsAndRestoresItsMasks) {
    const graph::Graph graph = digits();
    const pruning::PruningRequest request = l2Request();
    NullProgress progress;
    pruning::PruningAnalysis analysis;
    auto outcome = pruning::runPruning(graph, request, progress, &analysis);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    ASSERT_EQ(analysis.entryNames.size(), 2U);
    const PruningMasksSection section =
        capturePruning(request, analysis, *outcome, {}, *hashModelFile(kDigits));
    EXPECT_EQ(section.sections[1].constraint.kind, pruning::EntryConstraint::Kind::Keep);
    EXPECT_EQ(section.sections[1].kept, 4);
    EXPECT_TRUE(section.sections[0].hessian.empty());

    const PruningMasksSection read = throughTheFile(graph, section, "l2.qscope");
    EXPECT_EQ(read, section);
    auto restored = restorePruning(graph, read, progress);
    ASSERT_TRUE(restored.ok()) << restored.error().toString();
    EXPECT_EQ(restored->outcome.info.masks, outcome->info.masks);
    EXPECT_EQ(restored->outcome.constraints, outcome->constraints);
    EXPECT_EQ(restored->outcome.prunedBytes, outcome->prunedBytes);
    EXPECT_EQ(restored->request.keep, request.keep);
    EXPECT_TRUE(restored->outcome.pruned.nodeIds().empty()); // the masks only
}

TEST(PruningMasksSection, AnLfhRunRestoresFromItsSavedHessianScores) {
    const graph::Graph graph = digits();
    NullProgress progress;
    // The entries' H_c as the Hessian service would give them (seeded positive values), so the
    // test needs no Hessian sweep; the restore must need no dataset either.
    pruning::PruningRequest request = l2Request();
    request.importance = pruning::ImportanceMetric::Lfh;
    request.keep.clear();
    request.lock = {"/se/fc1/Conv"};
    request.samples = 2;
    auto sections = pruning::analyzePruning(graph, l2Request(), progress);
    ASSERT_TRUE(sections.ok());
    hessian::HessianScores scores;
    scores.mode = hessian::HessianMode::Weights;
    scores.granularity = hessian::HessianScoresGranularity::PerOutputChannel;
    scores.sampleIndices = {0, 1};
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> uniform(0.1, 2.0);
    std::vector<std::vector<double>> hessian;
    for (size_t s = 0; s < sections->entryNames.size(); ++s) {
        hessian::HessianTargetScores target;
        target.node = sections->entryNames[s];
        const auto channels = static_cast<size_t>(sections->detection.sections[s].channels);
        target.shape = {static_cast<int64_t>(channels)};
        target.perSample.assign(2, std::vector<double>(channels));
        for (auto& sample : target.perSample) {
            for (double& v : sample) {
                v = uniform(rng);
            }
        }
        hessian.push_back(target.mean());
        scores.targets.push_back(std::move(target));
    }
    request.scores = scores;
    pruning::PruningAnalysis analysis;
    auto outcome = pruning::runPruning(graph, request, progress, &analysis);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    const PruningMasksSection section =
        capturePruning(request, analysis, *outcome, hessian, *hashModelFile(kDigits));
    EXPECT_EQ(section.samples, 2);
    EXPECT_EQ(section.sections[0].constraint.kind, pruning::EntryConstraint::Kind::Lock);

    const PruningMasksSection read = throughTheFile(graph, section, "lfh.qscope");
    EXPECT_EQ(read, section);
    EXPECT_EQ(read.sections[1].hessian, hessian[1]);
    auto restored = restorePruning(graph, read, progress);
    ASSERT_TRUE(restored.ok()) << restored.error().toString();
    EXPECT_EQ(restored->outcome.info.masks, outcome->info.masks);
    EXPECT_EQ(restored->outcome.info.scores, outcome->info.scores);
    EXPECT_EQ(restored->analysis.samples, 2);
    EXPECT_EQ(restored->request.lock, request.lock);

    // Without the saved H_c an LFH section cannot come back.
    PruningMasksSection stripped = read;
    stripped.sections[1].hessian.clear();
    auto refused = restorePruning(graph, stripped, progress);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("hessian"), std::string::npos)
        << refused.error().toString();
}

TEST(PruningMasksSection, ASessionWithoutTheSectionHasNone) {
    const graph::Graph graph = digits();
    auto session = captureSession(kDigits, *hashModelFile(kDigits),
                                  *quantization::computeQuantization(graph, {}));
    ASSERT_TRUE(session.ok());
    auto found = pruningMasksSection(*session);
    ASSERT_TRUE(found.ok());
    EXPECT_FALSE(found->has_value());
}

TEST(PruningMasksSection, AMalformedSectionNamesTheField) {
    const graph::Graph graph = digits();
    NullProgress progress;
    pruning::PruningAnalysis analysis;
    auto outcome = pruning::runPruning(graph, l2Request(), progress, &analysis);
    ASSERT_TRUE(outcome.ok());
    const nlohmann::json good =
        toJson(capturePruning(l2Request(), analysis, *outcome, {}, "fnv1a64:0"));
    ASSERT_TRUE(pruningMasksSectionFromJson(good).ok());
    const auto expectError = [](const nlohmann::json& json, const std::string& words) {
        auto read = pruningMasksSectionFromJson(json);
        ASSERT_FALSE(read.ok()) << "accepted: " << json.dump();
        EXPECT_NE(read.error().toString().find(words), std::string::npos)
            << read.error().toString();
    };
    nlohmann::json bad = good;
    bad.erase("importance");
    expectError(bad, "\"importance\"");
    bad = good;
    bad["importance"] = "hessian";
    expectError(bad, "hessian");
    bad = good;
    bad["target"]["value"] = 1.5;
    expectError(bad, "\"target\"");
    bad = good;
    bad["sections"][0]["mask"][0] = 2;
    expectError(bad, "sections[0]: \"mask\"");
    bad = good;
    bad["sections"][1]["kept"] = 63;
    expectError(bad, "sections[1]: \"kept\"");
    bad = good;
    bad["sections"][1]["constraint"] = "pin";
    expectError(bad, "\"constraint\"");
    bad = good;
    bad["sections"][0]["scores"] = "many";
    expectError(bad, "sections[0]: \"scores\": expected an array, got a string");
    bad = good;
    bad["sections"][0]["channels"] = 1e30;
    expectError(bad, "sections[0]: \"channels\": expected an integer");
    bad = good;
    bad["sections"][0]["scores"].erase(0);
    expectError(bad, "one value per channel");
    bad = good;
    bad["sections"] = 3;
    expectError(bad, "\"sections\"");
}

TEST(PruningMasksSection, AnAppliedSectionMakesTheSessionGraphThePrunedModel) {
    const graph::Graph graph = digits();
    NullProgress progress;
    pruning::PruningAnalysis analysis;
    auto outcome = pruning::runPruning(graph, l2Request(), progress, &analysis);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    auto session = captureSession(kDigits, *hashModelFile(kDigits),
                                  *quantization::computeQuantization(graph, {}));
    ASSERT_TRUE(session.ok());
    PruningMasksSection section =
        capturePruning(l2Request(), analysis, *outcome, {}, *hashModelFile(kDigits));
    EXPECT_FALSE(section.applied);

    // Not applied: the session works on the file's graph.
    setPruningMasksSection(*session, section);
    EXPECT_FALSE(sessionHasAppliedPruning(*session));
    auto dense = sessionGraph(graph, *session, progress);
    ASSERT_TRUE(dense.ok()) << dense.error().toString();
    EXPECT_TRUE(graph::graphsEqual(*dense, graph));
    const auto channels = [](const graph::Graph& g, const std::string& node) {
        return g.value(g.node(*g.findNode(node)).inputs[1]).initializer->dims().front();
    };
    EXPECT_EQ(channels(*dense, "/head/head.0/Conv"), 64);

    // Applied, through the file: the pruned graph, equal to the workflow's.
    section.applied = true;
    const PruningMasksSection read = throughTheFile(graph, section, "applied.qscope");
    EXPECT_TRUE(read.applied);
    EXPECT_EQ(read, section);
    setPruningMasksSection(*session, read);
    EXPECT_TRUE(sessionHasAppliedPruning(*session));
    auto pruned = sessionGraph(graph, *session, progress);
    ASSERT_TRUE(pruned.ok()) << pruned.error().toString();
    EXPECT_EQ(channels(*pruned, "/head/head.0/Conv"), 4);
    std::string diff;
    EXPECT_TRUE(graph::graphsEqual(*pruned, outcome->pruned, &diff)) << diff;

    // The graph check: the pruned graph fits the applied session, the dense one does not, and
    // a session whose pruning is not applied wants the dense graph.
    EXPECT_TRUE(checkSessionGraph(*pruned, *session).ok());
    const Result<void> denseRefused = checkSessionGraph(graph, *session);
    ASSERT_FALSE(denseRefused.ok());
    EXPECT_NE(denseRefused.error().toString().find("works on the pruned model"), std::string::npos)
        << denseRefused.error().toString();
    SessionFile unapplied = *session;
    PruningMasksSection notApplied = read;
    notApplied.applied = false;
    setPruningMasksSection(unapplied, notApplied);
    EXPECT_TRUE(checkSessionGraph(graph, unapplied).ok());
    EXPECT_FALSE(checkSessionGraph(*pruned, unapplied).ok());
    // A malformed "applied" is never read as the dense graph: sessionGraph names it.
    SessionFile odd = *session;
    odd.sections["pruning"]["applied"] = "yes";
    EXPECT_TRUE(sessionHasAppliedPruning(odd));
    const Result<graph::Graph> oddGraph = sessionGraph(graph, odd, progress);
    ASSERT_FALSE(oddGraph.ok());
    EXPECT_NE(oddGraph.error().toString().find("applied"), std::string::npos)
        << oddGraph.error().toString();

    // Files written before "applied" existed read as not applied.
    nlohmann::json older = toJson(section);
    older.erase("applied");
    auto old = pruningMasksSectionFromJson(older);
    ASSERT_TRUE(old.ok()) << old.error().toString();
    EXPECT_FALSE(old->applied);
    older["applied"] = "yes";
    EXPECT_FALSE(pruningMasksSectionFromJson(older).ok());

    // An applied section that no longer matches the model is an error, not the dense graph.
    auto other = onnx::importModel(kDemo);
    ASSERT_TRUE(other.ok());
    auto refused = sessionGraph(*other, *session, progress);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("applied pruning"), std::string::npos)
        << refused.error().toString();
}

TEST(PruningMasksSection, RestoringOnAnotherModelIsAnError) {
    const graph::Graph graph = digits();
    NullProgress progress;
    pruning::PruningAnalysis analysis;
    auto outcome = pruning::runPruning(graph, l2Request(), progress, &analysis);
    ASSERT_TRUE(outcome.ok());
    PruningMasksSection section = capturePruning(l2Request(), analysis, *outcome, {}, "fnv1a64:0");
    auto other = onnx::importModel(kDemo);
    ASSERT_TRUE(other.ok());
    auto restored = restorePruning(*other, section, progress);
    ASSERT_FALSE(restored.ok());
    EXPECT_NE(restored.error().toString().find("does not match"), std::string::npos)
        << restored.error().toString();
    // The same model, with a mask the greedy would not choose (one kept channel of the head
    // swapped for a pruned one): also refused, naming the entry.
    std::vector<uint8_t>& mask = section.sections[1].mask;
    const auto one = std::find(mask.begin(), mask.end(), 1);
    const auto zero = std::find(mask.begin(), mask.end(), 0);
    ASSERT_NE(one, mask.end());
    ASSERT_NE(zero, mask.end());
    std::iter_swap(one, zero);
    auto changed = restorePruning(graph, section, progress);
    ASSERT_FALSE(changed.ok());
    EXPECT_NE(changed.error().toString().find("/head/head.0/Conv"), std::string::npos)
        << changed.error().toString();
}

} // namespace
} // namespace qs::session
