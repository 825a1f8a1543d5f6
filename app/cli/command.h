// CLI subcommands: each file under app/cli/ adds one subcommand to the CLI11 app and returns the
// function that runs it. Commands call the same core functions as the GUI.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/dataset_request.h"
#include "core/session/session_file.h"
#include "core/support/error.h"
#include "core/support/progress.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>

namespace qs::cli {

/// Exit codes of quantscope-cli.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

/// Prints `error` on stderr as one line and returns the exit code for it.
int reportError(const Error& error);

/// Help texts of a command's dataset options.
struct DatasetOptionHelp {
    std::string npy;
    std::string images;
    std::string random;
    std::string samples = "Use at most N samples of the .npy files or images";
    std::string batch = "Samples per executor run (default: the input's static batch, else " +
                        std::to_string(runtime::kDefaultBatchSize) + ")";
    std::string seedAlias; ///< an older name of --calib-seed this command also takes ("--seed")
};

/// A dataset request whose errors name the --calib-* options (calibration's sample limit when
/// `calibration`).
runtime::DatasetRequest cliDatasetRequest(bool calibration);

/// The one dataset and shape option group, bound to `request`: exactly one of --calib-npy
/// FILE... / --calib-images DIR / --calib-classes DIR / --calib-random N, and --calib-samples,
/// --calib-batch, --calib-seed, --labels-npy, --input-shape NAME=DIMS. A request whose names
/// differ (run's --input, --images, --random, --batch) takes those too, as aliases.
void addDatasetOptions(CLI::App& app, runtime::DatasetRequest& request,
                       const DatasetOptionHelp& help);

/// Only --input-shape NAME=DIMS (repeatable), for commands that build a model but run no data.
void addInputShapeOption(CLI::App& app, runtime::DatasetRequest& request);

/// Imports `path` with the request's --input-shape overrides; errors name the model file.
Result<graph::Graph> importModelFor(const std::string& path,
                                    const runtime::DatasetRequest& request);

/// The session file at `sessionPath` when it exists, checked to be saved for the model at
/// `modelPath` (errors name --session); nothing when there is no such file yet.
Result<std::optional<session::SessionFile>> readSessionFor(const std::string& sessionPath,
                                                           const std::string& modelPath);

/// importModelFor, then — when `sessionPath` names an existing session whose pruning is applied
/// (`prune --session`, the GUI's Continue with Pruned Model) — the pruned graph that session
/// works on, so its choices, calibration and exports refer to it (session::sessionGraph).
Result<graph::Graph> importSessionModel(const std::string& path,
                                        const runtime::DatasetRequest& request,
                                        const std::string& sessionPath);

/// The CLI's one progress display: a text bar on stderr, redrawn in place on a terminal; into a
/// file or a pipe (a CI log) one line per tenth of the work instead of carriage-return redraws.
/// Never cancels.
class StderrProgressBar final : public Progress {
public:
    StderrProgressBar();

    void report(double fraction, std::string_view what) override;

    bool isCancelled() const override { return false; }

private:
    bool m_terminal;
    int m_lastTenth = -1;
};

Command addInfoCommand(CLI::App& parent);

Command addQuantizeCommand(CLI::App& parent);

Command addCompressWeightsCommand(CLI::App& parent);

Command addConvertFp16Command(CLI::App& parent);

/// `render MODEL --out GRAPH.svg|png|pdf|dot`; built when the GUI library is.
Command addRenderCommand(CLI::App& parent);

/// `report (MODEL [--setup S] | --session S) --out REVIEW.html`; built when the GUI library is.
Command addReportCommand(CLI::App& parent);

/// `diff A B --out DIFF.html` of two setups or sessions; built when the GUI library is.
Command addDiffCommand(CLI::App& parent);

Command addRunCommand(CLI::App& parent);

/// `hessian MODEL ...` and `hessian --merge ...` (hessian_command.cpp).
Command addHessianCommand(CLI::App& parent);
Command addEvaluateCommand(CLI::App& parent);

/// `hawq MODEL ...` (hawq_command.cpp).
Command addHawqCommand(CLI::App& parent);
/// `prune MODEL --target-memory ...` (prune_command.cpp).
Command addPruneCommand(CLI::App& parent);

} // namespace qs::cli
