#include "core/runtime/npy.h"

#include "core/support/atomic_file.h"

#include <cstring>
#include <regex>

namespace qs::runtime {

using graph::DataType;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DescrEntry {
    const char* descr;
    DataType dtype;
};

// Little-endian descriptors; '|' marks single-byte types.
constexpr DescrEntry kDescrs[] = {
    {"<f4", DataType::Float}, {"<f2", DataType::Float16}, {"<f8", DataType::Double},
    {"|u1", DataType::UInt8}, {"|i1", DataType::Int8},    {"<i4", DataType::Int32},
    {"<i8", DataType::Int64}, {"|b1", DataType::Bool},
};

Result<DataType> dtypeFromDescr(const std::string& descr) {
    for (const DescrEntry& entry : kDescrs) {
        if (descr == entry.descr) {
            return entry.dtype;
        }
    }
    return Error(Errc::Unsupported, "dtype '" + descr +
                                        "' is not supported (float32, float16, float64, uint8, "
                                        "int8, int32, int64, bool)");
}

Result<std::string> descrFromDtype(DataType dtype) {
    for (const DescrEntry& entry : kDescrs) {
        if (entry.dtype == dtype) {
            return std::string(entry.descr);
        }
    }
    return Error(Errc::Unsupported,
                 "cannot write " + std::string(graph::dataTypeName(dtype)) + " as .npy");
}

} // namespace

Result<Tensor> parseNpy(const std::string& bytes) {
    if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
        return Error(Errc::InvalidArgument, "not a .npy file (bad magic)");
    }
    const auto major = static_cast<uint8_t>(bytes[6]);
    size_t headerLength = 0;
    size_t headerStart = 0;
    if (major == 1) {
        headerLength = static_cast<uint8_t>(bytes[8]) |
                       (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
        headerStart = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) {
            return Error(Errc::InvalidArgument, "truncated .npy header");
        }
        uint32_t length = 0;
        std::memcpy(&length, bytes.data() + 8, 4);
        headerLength = length;
        headerStart = 12;
    } else {
        return Error(Errc::Unsupported, "unknown .npy format version " + std::to_string(major));
    }
    if (headerStart + headerLength > bytes.size()) {
        return Error(Errc::InvalidArgument, "truncated .npy header");
    }
    const std::string header = bytes.substr(headerStart, headerLength);
    std::smatch match;
    if (!std::regex_search(header, match, std::regex(R"('descr'\s*:\s*'([^']*)')"))) {
        return Error(Errc::InvalidArgument, ".npy header has no descr");
    }
    QS_ASSIGN_OR_RETURN(DataType dtype, dtypeFromDescr(match[1].str()));
    if (std::regex_search(header, std::regex(R"('fortran_order'\s*:\s*True)"))) {
        return Error(Errc::Unsupported,
                     "Fortran-order .npy files are not supported (save in C order)");
    }
    if (!std::regex_search(header, match, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) {
        return Error(Errc::InvalidArgument, ".npy header has no shape");
    }
    Shape shape;
    const std::string dims = match[1].str();
    const std::regex number(R"(\d+)");
    for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number);
         it != std::sregex_iterator(); ++it) {
        shape.push_back(std::stoll(it->str()));
    }
    Tensor tensor = Tensor::allocate(dtype, shape);
    const size_t dataStart = headerStart + headerLength;
    if (bytes.size() - dataStart != tensor.byteSize()) {
        return Error(Errc::InvalidArgument,
                     ".npy data holds " + std::to_string(bytes.size() - dataStart) +
                         " bytes, the header needs " + std::to_string(tensor.byteSize()));
    }
    if (tensor.byteSize() > 0) {
        std::memcpy(tensor.mutableRawData(), bytes.data() + dataStart, tensor.byteSize());
    }
    return tensor;
}

Result<Tensor> readNpy(const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
    return parseNpy(bytes).context("file '" + path.string() + "'");
}

Result<std::string> serializeNpy(const Tensor& tensor) {
    QS_ASSIGN_OR_RETURN(std::string descr, descrFromDtype(tensor.dtype()));
    std::string shape = "(";
    for (size_t d = 0; d < tensor.rank(); ++d) {
        shape += std::to_string(tensor.shape()[d]) +
                 (tensor.rank() == 1 ? "," : (d + 1 < tensor.rank() ? ", " : ""));
    }
    shape += ")";
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // Pad so the data starts on a 64-byte boundary; the header ends with a newline.
    const size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
    std::string out(kMagic, kMagicSize);
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xFF);
    out += static_cast<char>((header.size() >> 8) & 0xFF);
    out += header;
    out.append(static_cast<const char*>(tensor.rawData()), tensor.byteSize());
    return out;
}

Result<void> writeNpy(const Tensor& tensor, const std::filesystem::path& path) {
    QS_ASSIGN_OR_RETURN(std::string bytes, serializeNpy(tensor));
    return writeFileAtomically(path, bytes);
}

} // namespace qs::runtime
