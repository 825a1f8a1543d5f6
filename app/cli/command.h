// CLI subcommands: each file under app/cli/ adds one subcommand to the CLI11 app and returns the
// function that runs it. Commands call the same core functions as the GUI.
#pragma once

#include "core/runtime/dataset_source.h"
#include "core/support/error.h"
#include "core/support/progress.h"

#include <CLI/CLI.hpp>

#include <functional>
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
};

/// Adds the three mutually exclusive dataset options, named by `source.names`, bound to `source`.
void addDatasetOptions(CLI::App& app, runtime::DatasetSource& source,
                       const DatasetOptionHelp& help);

/// A text progress bar on stderr, redrawn in place on a terminal; into a file or a pipe (a CI log)
/// one line per tenth of the work instead of carriage-return redraws. Never cancels.
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

Command addRunCommand(CLI::App& parent);

/// `hessian MODEL ...` and `hessian --merge ...` (hessian_command.cpp).
Command addHessianCommand(CLI::App& parent);
Command addEvaluateCommand(CLI::App& parent);

} // namespace qs::cli
