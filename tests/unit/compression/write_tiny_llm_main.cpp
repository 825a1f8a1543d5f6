// qs_write_tiny_llm OUT.onnx: writes the tiny LLM-shaped test model (tiny_llm.h) for the e2e
// tests of compress-weights and convert-fp16.

#include "core/onnx/model_io.h"
#include "tests/unit/compression/tiny_llm.h"

#include <iostream>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: qs_write_tiny_llm OUT.onnx\n";
        return 2;
    }
    auto written = qs::onnx::exportModel(qs::testing::makeTinyLlm(), argv[1]);
    if (!written.ok()) {
        std::cerr << written.error().toString() << '\n';
        return 1;
    }
    return 0;
}
