// quantscope-cli: the headless twin of the GUI. Parses the command line, runs one subcommand,
// and turns errors into one line on stderr plus an exit code (0 ok, 1 bad input, 2 usage).

#include "app/cli/command.h"

#include <exception>
#include <iostream>
#include <vector>

namespace qs::cli {

int reportError(const Error& error) {
    std::cerr << "quantscope-cli: error: " << error.toString() << '\n';
    return error.code() == Errc::Usage ? kExitUsage : kExitBadInput;
}

} // namespace qs::cli

int main(int argc, char** argv) {
    using namespace qs::cli;
    CLI::App app{"Quantscope: see where quantizers go, choose bitwidths, export compressed "
                 "ONNX models",
                 "quantscope-cli"};
    app.set_version_flag("--version", std::string("quantscope-cli ") + QS_VERSION);
    app.require_subcommand(1);
    std::vector<Command> commands;
    commands.push_back(addInfoCommand(app));
    commands.push_back(addQuantizeCommand(app));
    commands.push_back(addCompressWeightsCommand(app));
    commands.push_back(addConvertFp16Command(app));
#ifdef QS_HAVE_RENDER
    commands.push_back(addRenderCommand(app));
    commands.push_back(addReportCommand(app));
    commands.push_back(addDiffCommand(app));
#endif
    commands.push_back(addRunCommand(app));
    commands.push_back(addHessianCommand(app));
    commands.push_back(addHawqCommand(app));
    commands.push_back(addEvaluateCommand(app));
    commands.push_back(addPruneCommand(app));
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "quantscope-cli: usage error: " << e.what() << "\n"
                  << "Run 'quantscope-cli --help' for usage.\n";
        return kExitUsage;
    }
    try {
        for (const Command& command : commands) {
            if (command.app->parsed()) {
                return command.run();
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "quantscope-cli: internal error: " << e.what() << '\n';
        return kExitBadInput;
    }
    return kExitUsage;
}
