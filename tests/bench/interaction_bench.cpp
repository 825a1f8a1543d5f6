// Interaction benchmark: how long one quantizer edit takes from the user's click to redrawn
// badges — ChooseQuantizerConfigCommand (re-finalize) plus GraphScene::showQuantizers — and how
// long switching the HW config takes (re-propagation plus badges), on a real model (default
// $QS_ZOO_DIR/resnet50.onnx; the target is <= 50 ms per edit on a 500-node model). Prints the
// median of each. Then the same edits in the whole main window, where the Quantizers table, the
// Bit Widths charts and the Inspector (showing the edited quantizer) redraw too.
//
//   qs_interaction_bench [MODEL.onnx] [--runs R]

#include "core/layout/layout.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/inspector_panel.h"
#include "ui/main_window.h"
#include "ui/quantizer_commands.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QApplication>
#include <QTemporaryDir>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

std::string defaultModel() {
    const char* zoo = std::getenv("QS_ZOO_DIR");
    return std::string(zoo != nullptr ? zoo : ".") + "/resnet50.onnx";
}

/// Median milliseconds of `runs` config edits (and undos) in the whole window on `path`; -1 if
/// the model does not open.
std::pair<double, double> windowEditMs(const QString& path, int runs) {
    QTemporaryDir dir;
    qs::ui::Settings settings(dir.filePath(QStringLiteral("settings.ini")));
    qs::ui::MainWindow window(settings);
    window.resize(1280, 820);
    window.show();
    window.openModel(path);
    while (window.session().isOpening() || window.session().document() == nullptr ||
           window.graphPage().isLayingOut()) {
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
        if (!window.session().isOpening() && window.session().document() == nullptr) {
            return {-1, -1};
        }
    }
    qs::ui::GraphDocument& document = *window.session().document();
    std::vector<std::pair<int, qs::quantization::QuantizerConfig>> edits;
    for (const auto& [id, point] : document.quantization()->proposal.setup.quantizationPoints) {
        if (point.possibleConfigs.size() > 1) {
            edits.emplace_back(id, point.possibleConfigs[1]);
        }
    }
    if (edits.empty()) {
        return {-1, -1};
    }
    std::vector<double> edit, undo;
    for (int run = 0; run < runs; ++run) {
        const auto& [id, config] = edits[static_cast<size_t>(run) % edits.size()];
        window.inspector().showQuantizer(id);
        auto start = Clock::now();
        document.undoStack().push(new qs::ui::ChooseQuantizerConfigCommand(document, id, config));
        edit.push_back(millisecondsSince(start));
        start = Clock::now();
        document.undoStack().undo();
        undo.push_back(millisecondsSince(start));
    }
    return {median(edit), median(undo)};
}

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    std::string path = defaultModel();
    int runs = 20;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--runs" && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else {
            path = arg;
        }
    }
    const QApplication app(argc, argv);
    qs::NullProgress progress;
    auto loaded = qs::ui::loadModel(QString::fromStdString(path), progress);
    if (!loaded.ok() || !loaded->quantization) {
        std::fprintf(stderr, "cannot load %s\n", path.c_str());
        return 1;
    }
    qs::ui::GraphDocument document(QString::fromStdString(path), std::move(loaded).value());
    qs::ui::GraphScene scene;
    const auto model = scene.prepareLayout(document.graph());
    auto placed = qs::layout::computeLayout(model.input, {}, progress);
    if (!placed.ok()) {
        return 1;
    }
    scene.populate(document.graph(), model, *placed);
    QObject::connect(&document, &qs::ui::GraphDocument::quantizationChanged,
                     [&] { scene.showQuantizers(document.quantizerMarks()); });
    qs::quantization::QuantizationSettings npu;
    npu.hw = "npu";
    auto start = Clock::now();
    document.undoStack().push(new qs::ui::ChangeQuantizationSettingsCommand(document, npu));
    const double switchMs = millisecondsSince(start);
    // Every kept point with a second candidate, cycled through.
    std::vector<std::pair<int, qs::quantization::QuantizerConfig>> edits;
    for (const auto& [id, point] : document.quantization()->proposal.setup.quantizationPoints) {
        if (point.possibleConfigs.size() > 1) {
            edits.emplace_back(id, point.possibleConfigs[1]);
        }
    }
    if (edits.empty()) {
        std::fprintf(stderr, "no multi-config point\n");
        return 1;
    }
    std::vector<double> edit, undo;
    for (int run = 0; run < runs; ++run) {
        const auto& [id, config] = edits[static_cast<size_t>(run) % edits.size()];
        start = Clock::now();
        document.undoStack().push(new qs::ui::ChooseQuantizerConfigCommand(document, id, config));
        edit.push_back(millisecondsSince(start));
        start = Clock::now();
        document.undoStack().undo();
        undo.push_back(millisecondsSince(start));
    }
    std::printf("model %s: %zu ops, %zu quantizers, %zu badges\n", path.c_str(),
                document.graph().numNodes(),
                document.quantization()->setup.quantizationPoints.size(),
                scene.badgeItems().size());
    std::printf("switch HW config to npu (propagate + finalize + badges): %.2f ms\n", switchMs);
    std::printf("choose a config (finalize + badges), median of %d: %.2f ms\n", runs, median(edit));
    std::printf("undo it, median of %d: %.2f ms\n", runs, median(undo));
    const auto [windowEdit, windowUndo] = windowEditMs(QString::fromStdString(path), runs);
    std::printf("whole window (badges, table, charts, inspector): choose %.2f ms, undo %.2f ms "
                "(medians of %d)\n",
                windowEdit, windowUndo, runs);
    return 0;
}
