// Import speed and memory against a bare protobuf parse of the same file (issue: import of
// ResNet-50 within 1.5x the parse time and 2.5x the file size in peak RSS).
//
//   qs_import_bench [--benchmark_repetitions=5]     wall time, Google Benchmark, QS_ZOO_DIR models
//   qs_import_bench --rss import|parse MODEL         one run in this process, prints peak RSS
//
// Only core/onnx includes protobuf headers in the product; the benchmark does too, as the peer.

#include "core/onnx/model_io.h"

#include <benchmark/benchmark.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace {
namespace fs = std::filesystem;

fs::path zooModel(const char* name) {
    const char* dir = std::getenv("QS_ZOO_DIR");
    return fs::path(dir != nullptr ? dir : "") / (std::string(name) + ".onnx");
}

/// The peer: what any ONNX tool must do at least — parse the file into a ModelProto.
bool bareParse(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    onnx::ModelProto model;
    google::protobuf::io::FileInputStream stream(fd, 1 << 20);
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
    const bool ok = model.ParseFromCodedStream(&coded);
    ::close(fd);
    benchmark::DoNotOptimize(model.graph().node_size());
    return ok;
}

void BM_BareProtobufParse(benchmark::State& state, const char* name) {
    const fs::path path = zooModel(name);
    if (!fs::exists(path)) {
        state.SkipWithError("model missing: run make_zoo.py into QS_ZOO_DIR");
        return;
    }
    for (auto _ : state) {
        if (!bareParse(path)) {
            state.SkipWithError("parse failed");
            return;
        }
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(fs::file_size(path)));
}

void BM_ImportModel(benchmark::State& state, const char* name) {
    const fs::path path = zooModel(name);
    if (!fs::exists(path)) {
        state.SkipWithError("model missing: run make_zoo.py into QS_ZOO_DIR");
        return;
    }
    for (auto _ : state) {
        auto graph = qs::onnx::importModel(path);
        if (!graph.ok()) {
            state.SkipWithError(graph.error().toString().c_str());
            return;
        }
        benchmark::DoNotOptimize(graph->numNodes());
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(fs::file_size(path)));
}

BENCHMARK_CAPTURE(BM_BareProtobufParse, resnet50, "resnet50")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportModel, resnet50, "resnet50")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BareProtobufParse, efficientnet_b0, "efficientnet_b0")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportModel, efficientnet_b0, "efficientnet_b0")
    ->Unit(benchmark::kMillisecond);

int rssMode(const std::string& mode, const fs::path& path) {
    bool ok = false;
    if (mode == "parse") {
        ok = bareParse(path);
    } else {
        auto graph = qs::onnx::importModel(path);
        ok = graph.ok();
        if (!ok) {
            std::fprintf(stderr, "%s\n", graph.error().toString().c_str());
        }
    }
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    std::printf("%s peak_rss_kb=%ld file_kb=%ld\n", mode.c_str(), usage.ru_maxrss,
                static_cast<long>(fs::file_size(path) / 1024));
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "--rss") == 0) {
        return rssMode(argv[2], argv[3]);
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
