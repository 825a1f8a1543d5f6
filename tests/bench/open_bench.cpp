// Open benchmark: what a user waits for when a model opens in the GUI, on the offscreen platform
// through the real GraphPage and JobRunner — time from showGraph() to the first drawn graph
// (grouped, default expansion, quantizer badges), time to expand the biggest collapsed group,
// and how long a Cancel takes to stop an expand-everything layout. One line per model. The
// render and plain-dot figures come from open_bench.sh, which runs this next to them.
//
//   qs_open_bench MODEL.onnx|synthetic:N ...

#include "core/layout/synthetic_graph.h"
#include "core/report/model_info.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/job_runner.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

using qs::ui::GraphPage;

std::unique_ptr<qs::ui::GraphDocument> open(const std::string& what, double& importSeconds) {
    QElapsedTimer clock;
    clock.start();
    if (what.rfind("synthetic:", 0) == 0) {
        qs::graph::Graph graph =
            qs::layout::makeSkipChainGraph(std::strtoull(what.c_str() + 10, nullptr, 10));
        qs::report::ModelInfo info = qs::report::computeModelInfo(graph);
        qs::ui::LoadedModel loaded{std::move(graph), std::move(info), std::nullopt, {}, {}};
        importSeconds = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
        return std::make_unique<qs::ui::GraphDocument>(QString::fromStdString(what),
                                                       std::move(loaded));
    }
    qs::NullProgress progress;
    auto loaded = qs::ui::loadModel(QString::fromStdString(what), progress);
    if (!loaded.ok()) {
        std::fprintf(stderr, "%s: %s\n", what.c_str(), loaded.error().toString().c_str());
        return nullptr;
    }
    importSeconds = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
    return std::make_unique<qs::ui::GraphDocument>(QString::fromStdString(what),
                                                   std::move(loaded).value());
}

/// Runs the event loop until the page reports its layout (or 600 s pass); seconds taken and
/// whether it succeeded.
double waitForLayout(GraphPage& page, bool& ok) {
    QElapsedTimer clock;
    clock.start();
    QEventLoop loop;
    ok = false;
    const auto connection =
        QObject::connect(&page, &GraphPage::layoutFinished, &loop, [&](bool success) {
            ok = success;
            loop.quit();
        });
    QTimer::singleShot(600000, &loop, &QEventLoop::quit);
    loop.exec();
    QObject::disconnect(connection);
    return static_cast<double>(clock.nsecsElapsed()) * 1e-9;
}

/// The collapsed group with the most ops, or none.
std::optional<uint32_t> biggestCollapsed(const GraphPage& page) {
    std::optional<uint32_t> best;
    size_t most = 0;
    const qs::layout::GroupTree& tree = page.groupTree();
    for (uint32_t g = 1; g < tree.groups.size(); ++g) {
        if (page.scene()->groupBox(g) != nullptr && tree.groups[g].nodeCount > most) {
            most = tree.groups[g].nodeCount;
            best = g;
        }
    }
    return best;
}

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    std::printf("%-28s %6s %6s %7s %9s %8s %8s %9s\n", "model", "boxes", "groups", "import",
                "first", "expand", "cancel", "drawn");
    for (int i = 1; i < argc; ++i) {
        const std::string what = argv[i];
        double importSeconds = 0;
        auto document = open(what, importSeconds);
        if (!document) {
            continue;
        }
        qs::ui::JobRunner jobs;
        GraphPage page(jobs);
        page.resize(1400, 900);
        page.show();
        page.showGraph(*document);
        bool ok = false;
        const double first = waitForLayout(page, ok);
        const size_t drawn = page.scene()->nodeItems().size();
        double expand = -1;
        if (const auto group = biggestCollapsed(page)) {
            page.toggleGroup(*group);
            expand = waitForLayout(page, ok);
        }
        // Cancel 50 ms into an expand-everything layout (fresh page: nothing cached).
        double cancel = -1;
        {
            GraphPage fresh(jobs);
            fresh.showGraph(*document);
            waitForLayout(fresh, ok);
            fresh.expandAllGroups(true);
            QElapsedTimer clock;
            bool cancelled = false;
            QTimer::singleShot(50, &fresh, [&] {
                clock.start();
                fresh.cancelLayout();
                cancelled = true;
            });
            waitForLayout(fresh, ok);
            if (cancelled && !ok) {
                cancel = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
            }
        }
        const std::string name = what.substr(what.find_last_of('/') + 1);
        std::printf("%-28s %6zu %6zu %6.2fs %8.3fs %7.3fs %7.3fs %9zu\n", name.c_str(),
                    page.layoutModel().items.size(), page.groupTree().groups.size() - 1,
                    importSeconds, first, expand, cancel, drawn);
        std::fflush(stdout);
    }
    return 0;
}
