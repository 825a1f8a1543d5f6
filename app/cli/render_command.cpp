// `quantscope-cli render MODEL --out GRAPH.svg|png|pdf|dot [--theme light|dark]
//  [--input-shape NAME=DIMS]... [--setup SETUP.json | --hw cpu|gpu|npu|FILE.json]`: the graph
// image the GUI shows, drawn headless, with the quantizer badges of a setup written by
// `quantscope-cli quantize` or of a fresh propagation for a HW config. Qt starts here only, on
// the offscreen platform, so no display is needed.

#include "app/cli/command.h"
#include "app/cli/offscreen_qt.h"
#include "core/onnx/model_io.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/setup_reader.h"
#include "ui/graph_export.h"
#include "ui/theme.h"

#include <fstream>
#include <iostream>
#include <memory>

namespace qs::cli {

namespace {
struct RenderOptions {
    std::string modelPath;
    std::string outPath;
    std::string theme = "light";
    std::vector<std::string> inputShapes;
    std::string setupPath;
    std::string hw;
};

/// The badges to draw: from --setup, or from propagation for --hw, or none.
Result<std::vector<quantization::QuantizerMark>> quantizersFor(const RenderOptions& options,
                                                               const graph::Graph& graph) {
    if (!options.setupPath.empty()) {
        QS_ASSIGN_OR_RETURN(quantization::SingleConfigQuantizerSetup setup,
                            quantization::readSetupFile(options.setupPath, graph));
        return quantization::quantizerMarks(setup, nullptr);
    }
    if (options.hw.empty()) {
        return std::vector<quantization::QuantizerMark>{};
    }
    quantization::QuantizationSettings settings;
    settings.hw = options.hw;
    QS_ASSIGN_OR_RETURN(quantization::QuantizationState state,
                        quantization::computeQuantization(graph, settings));
    return quantization::quantizerMarks(state.setup, &state.proposal.setup);
}

int runRender(const RenderOptions& options) {
    const QString out = QString::fromStdString(options.outPath);
    if (!ui::imageFormatForPath(out)) {
        return reportError(Error(Errc::Usage, "--out must end in .svg, .png, .pdf or "
                                              ".dot, got '" +
                                                  options.outPath + "'"));
    }
    onnx::ImportOptions importOptions;
    for (const std::string& text : options.inputShapes) {
        auto parsed = onnx::parseInputShapeOverride(text).context("--input-shape");
        if (!parsed.ok()) {
            return reportError(parsed.error());
        }
        importOptions.inputShapes.push_back(std::move(parsed).value());
    }
    auto graph = onnx::importModel(options.modelPath, importOptions);
    if (!graph.ok()) {
        return reportError(graph.error());
    }
    auto quantizers = quantizersFor(options, *graph);
    if (!quantizers.ok()) {
        return reportError(quantizers.error());
    }
    const auto app = startOffscreenQt();
    const bool dark = ui::applyTheme(ui::themeFromName(QString::fromStdString(options.theme)));
    StderrProgressBar progress;
    auto written = ui::renderGraphFile(*graph, out, ui::graphThemeFor(dark), progress, *quantizers);
    if (!written.ok()) {
        return reportError(written.error());
    }
    return kExitOk;
}
} // namespace

Command addRenderCommand(CLI::App& parent) {
    auto options = std::make_shared<RenderOptions>();
    CLI::App* app = parent.add_subcommand(
        "render", "Draw the graph as the GUI does, to SVG, PNG or PDF, or write its DOT");
    app->add_option("MODEL", options->modelPath, "ONNX model file")->required();
    app->add_option("--out,-o", options->outPath, "Output file: .svg, .png, .pdf or .dot")
        ->required()
        ->type_name("GRAPH");
    app->add_option("--theme", options->theme, "Colours: light (default) or dark")
        ->check(CLI::IsMember({"light", "dark"}));
    app->add_option("--input-shape", options->inputShapes,
                    "Fix a dynamic input shape, e.g. input=1,3,224,224 (repeatable)")
        ->type_name("NAME=DIMS");
    auto* setup = app->add_option("--setup", options->setupPath,
                                  "Draw the quantizers of this setup JSON (from quantize)")
                      ->type_name("SETUP.json");
    app->add_option("--hw", options->hw,
                    "Draw the quantizers proposed for cpu, gpu, npu or a HW config JSON")
        ->excludes(setup);
    return {app, [options] { return runRender(*options); }};
}

} // namespace qs::cli
