// Layout benchmark: our sectioned dot layout vs. plain `dot -Tsvg` on the same synthetic graph
// (a chain with skip edges, 10,000 ops by default), measured in the same run; prints the median
// wall time and CPU time of each and the speed-ups (CPU time is the fair figure on a loaded
// machine: both sides are single-threaded). With --write-onnx it only writes the synthetic model
// (for screenshots).
//
//   qs_layout_bench [--ops N] [--runs R] [--dot-runs D] [--section S] [--write-onnx PATH]

#include "core/layout/graph_layout.h"
#include "core/layout/layout.h"
#include "core/layout/synthetic_graph.h"
#include "core/onnx/model_io.h"
#include "core/support/atomic_file.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    size_t ops = 10000;
    int runs = 5;
    int dotRuns = 1;
    size_t section = qs::layout::LayoutOptions{}.maxSectionNodes;
    std::string writeOnnx;
};

double seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
}

/// CPU seconds (user + system) used so far by this process's finished children.
double childrenCpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double cpuSecondsSince(std::clock_t start) {
    return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

bool parse(int argc, char** argv, Options& options) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view flag = argv[i];
        const char* value = argv[i + 1];
        if (flag == "--ops") {
            options.ops = std::strtoull(value, nullptr, 10);
        } else if (flag == "--runs") {
            options.runs = std::atoi(value);
        } else if (flag == "--dot-runs") {
            options.dotRuns = std::atoi(value);
        } else if (flag == "--section") {
            options.section = std::strtoull(value, nullptr, 10);
        } else if (flag == "--write-onnx") {
            options.writeOnnx = value;
        } else {
            return false;
        }
    }
    return argc % 2 == 1 && options.runs > 0 && options.dotRuns >= 0;
}

/// Box sizes close to what the GUI measures: ops 170x58, graph inputs/outputs 120x34.
qs::layout::GraphLayoutModel measuredModel(const qs::graph::Graph& graph) {
    qs::layout::GraphLayoutModel model = qs::layout::buildLayoutModel(graph);
    qs::layout::setSizes(model, [](const qs::layout::LayoutItem& item) {
        return item.kind == qs::layout::ItemKind::Op ? qs::layout::Size{170, 58}
                                                     : qs::layout::Size{120, 34};
    });
    return model;
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    if (!parse(argc, argv, options)) {
        std::fprintf(stderr,
                     "usage: %s [--ops N] [--runs R] [--dot-runs D] [--section S] "
                     "[--write-onnx PATH]\n",
                     argv[0]);
        return 2;
    }
    const qs::graph::Graph graph = qs::layout::makeSkipChainGraph(options.ops);
    if (!options.writeOnnx.empty()) {
        auto written = qs::onnx::exportModel(graph, options.writeOnnx);
        if (!written.ok()) {
            std::fprintf(stderr, "%s\n", written.error().toString().c_str());
            return 1;
        }
        return 0;
    }
    const qs::layout::GraphLayoutModel model = measuredModel(graph);
    std::printf("graph: %zu boxes, %zu edges (skip chain of %zu ops)\n", model.items.size(),
                model.input.edges.size(), options.ops);

    qs::layout::LayoutOptions layoutOptions;
    layoutOptions.maxSectionNodes = options.section;
    std::vector<double> ours;
    std::vector<double> oursCpu;
    size_t sections = 0;
    for (int run = 0; run < options.runs; ++run) {
        qs::NullProgress progress;
        const auto start = Clock::now();
        const std::clock_t cpuStart = std::clock();
        auto layout = qs::layout::computeLayout(model.input, layoutOptions, progress);
        oursCpu.push_back(cpuSecondsSince(cpuStart));
        ours.push_back(seconds(start));
        if (!layout.ok()) {
            std::fprintf(stderr, "layout failed: %s\n", layout.error().toString().c_str());
            return 1;
        }
        sections = layout->sectionCount;
    }
    std::printf("quantscope layout: median %.3f s wall, %.3f s CPU over %d runs (%zu sections "
                "of <= %zu)\n",
                median(ours), median(oursCpu), options.runs, sections, options.section);
    std::fflush(stdout);
    if (options.dotRuns == 0) {
        return 0;
    }
    std::vector<std::string> labels;
    for (const qs::layout::LayoutItem& item : model.items) {
        labels.push_back(qs::layout::itemLabel(graph, item));
    }
    const std::filesystem::path dotPath =
        std::filesystem::temp_directory_path() / "qs_layout_bench.dot";
    auto written = qs::writeFileAtomically(dotPath, qs::layout::toDot(model.input, labels));
    if (!written.ok()) {
        std::fprintf(stderr, "%s\n", written.error().toString().c_str());
        return 1;
    }
    const std::string command = "dot -Tsvg '" + dotPath.string() + "' -o /dev/null 2>/dev/null";
    std::vector<double> plain;
    std::vector<double> plainCpu;
    for (int run = 0; run < options.dotRuns; ++run) {
        const auto start = Clock::now();
        const double cpuStart = childrenCpuSeconds();
        if (std::system(command.c_str()) != 0) {
            std::fprintf(stderr, "'%s' failed\n", command.c_str());
            return 1;
        }
        plainCpu.push_back(childrenCpuSeconds() - cpuStart);
        plain.push_back(seconds(start));
    }
    std::printf("plain dot -Tsvg:   median %.3f s wall, %.3f s CPU over %d runs\n", median(plain),
                median(plainCpu), options.dotRuns);
    std::printf("speed-up: %.1fx wall, %.1fx CPU\n", median(plain) / median(ours),
                median(plainCpu) / median(oursCpu));
    std::filesystem::remove(dotPath);
    return 0;
}
