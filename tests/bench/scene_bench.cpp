// Scene benchmark: the whole path from graph to pixels for the synthetic skip chain (10,000 ops
// by default) on the offscreen platform — measuring boxes, the sectioned layout, building the
// scene items, and painting one frame of the view at "fit" and at reading zoom. Prints the
// median of each step; compare the total with plain `dot -Tsvg` from qs_layout_bench.
//
//   qs_scene_bench [--ops N] [--runs R]

#include "core/layout/layout.h"
#include "core/layout/synthetic_graph.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"

#include <QApplication>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

/// Paints the view's visible area once into an image, as a window repaint would.
void paintFrame(qs::ui::GraphView& view) {
    QImage frame(view.viewport()->size(), QImage::Format_RGB32);
    QPainter painter(&frame);
    view.render(&painter);
}

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    size_t ops = 10000;
    int runs = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view flag = argv[i];
        if (flag == "--ops") {
            ops = std::strtoull(argv[i + 1], nullptr, 10);
        } else if (flag == "--runs") {
            runs = std::max(1, std::atoi(argv[i + 1]));
        }
    }
    const QApplication app(argc, argv);
    const qs::graph::Graph graph = qs::layout::makeSkipChainGraph(ops);
    std::vector<double> measure, layout, build, fitFrame, readFrame, total;
    for (int run = 0; run < runs; ++run) {
        qs::ui::GraphScene scene;
        qs::ui::GraphView view(&scene);
        view.resize(1200, 800);
        auto start = Clock::now();
        const auto model = scene.prepareLayout(graph);
        measure.push_back(secondsSince(start));
        start = Clock::now();
        qs::NullProgress progress;
        auto placed = qs::layout::computeLayout(model.input, {}, progress);
        layout.push_back(secondsSince(start));
        if (!placed.ok()) {
            std::fprintf(stderr, "layout failed: %s\n", placed.error().toString().c_str());
            return 1;
        }
        start = Clock::now();
        scene.populate(graph, model, *placed);
        view.sceneChanged();
        build.push_back(secondsSince(start));
        start = Clock::now();
        view.fitGraph();
        paintFrame(view);
        fitFrame.push_back(secondsSince(start));
        start = Clock::now();
        view.centerOnNode(scene.nodeItems()[scene.nodeItems().size() / 2]);
        paintFrame(view);
        readFrame.push_back(secondsSince(start));
        total.push_back(measure.back() + layout.back() + build.back() + fitFrame.back());
    }
    std::printf("skip chain of %zu ops, median of %d runs:\n", ops, runs);
    std::printf("  measure boxes      %.3f s\n", median(measure));
    std::printf("  layout (sections)  %.3f s\n", median(layout));
    std::printf("  build scene+map    %.3f s\n", median(build));
    std::printf("  first frame (fit)  %.3f s\n", median(fitFrame));
    std::printf("  frame at 80%% zoom  %.3f s\n", median(readFrame));
    std::printf("  graph to pixels    %.3f s\n", median(total));
    return 0;
}
