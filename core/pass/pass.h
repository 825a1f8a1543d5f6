// Graph passes: small stateless functions over a Graph, each in its own file with one entry
// function, returning whether they changed anything. A pipeline is a comma-separated list of
// pass names ("remove-identity,fold-batch-norm,fold-constants"); the graph is verified after
// every pass. The CLI and the GUI run the same pipelines.
#pragma once

#include "core/graph/graph.h"
#include "core/support/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace qs::pass {

/// How long one pass of a pipeline took, and whether it changed the graph.
struct PassTiming {
    std::string name;
    double seconds = 0.0;
    bool changed = false;
};

/// What passes report back: one line per change, and (filled by runPipeline) one timing per pass
/// run, both for --verbose.
struct PassContext {
    std::vector<std::string> log;
    std::vector<PassTiming> timings;
};

using PassFn = Result<bool> (*)(graph::Graph&, PassContext&);

struct Pass {
    std::string_view name;
    std::string_view doc;
    PassFn run = nullptr;
};

/// Removes Identity and inference Dropout nodes, rewiring their consumers to the input.
Result<bool> removeIdentity(graph::Graph& graph, PassContext& context);

/// Folds BatchNormalization into the Conv, Gemm or MatMul + Add that feeds it ("freeze" for
/// inference): w'[m] = w[m] a[m], b'[m] = (b[m] - mean[m]) a[m] + beta[m], a = gamma / sqrt(var +
/// eps), with m the output channel.
Result<bool> foldBatchNorm(graph::Graph& graph, PassContext& context);

/// Evaluates nodes whose inputs are all constants with the runtime's kernels and turns their
/// outputs into initializers (shape arithmetic, constant reshapes of weights, ...).
Result<bool> foldConstants(graph::Graph& graph, PassContext& context);

/// Every pass, by name.
const std::vector<Pass>& allPasses();

/// Runs "a,b,c" in order, verifying the graph after each; true when any pass changed it.
Result<bool> runPipeline(graph::Graph& graph, std::string_view pipeline, PassContext& context);

/// The inference clean-up pipeline: remove-identity, fold-constants, fold-batch-norm.
inline constexpr std::string_view kInferencePipeline =
    "remove-identity,fold-constants,fold-batch-norm";

} // namespace qs::pass
