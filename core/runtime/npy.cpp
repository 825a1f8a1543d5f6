#include "core/runtime/npy.h"

#include "core/runtime/parallel.h"
#include "core/support/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

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

/// The header dict, parsed strictly: exactly the keys 'descr' (a string), 'fortran_order' (True
/// or False) and 'shape' (a tuple of non-negative integers), as NumPy writes them.
struct NpyHeader {
    std::string descr;
    bool fortranOrder = false;
    Shape shape;
};

class HeaderParser {
public:
    explicit HeaderParser(std::string_view text)
        : m_text(text) {}

    Result<NpyHeader> parse() {
        NpyHeader header;
        std::set<std::string, std::less<>> seen;
        QS_TRY(expect('{'));
        QS_TRY(entries(header, seen));
        ++m_pos;
        skipSpace();
        if (m_pos != m_text.size()) {
            return bad("text after the header dict");
        }
        for (const char* key : {"descr", "fortran_order", "shape"}) {
            if (!seen.contains(key)) {
                return bad(std::string("no '") + key + "'");
            }
        }
        return header;
    }

private:
    static Error bad(const std::string& what) {
        return {Errc::InvalidArgument, "malformed .npy header: " + what};
    }

    /// The dict's "key: value" entries up to its closing brace; each key once.
    Result<void> entries(NpyHeader& header, std::set<std::string, std::less<>>& seen) {
        while (!peek('}')) {
            QS_ASSIGN_OR_RETURN(const std::string key, quoted());
            QS_TRY(expect(':'));
            QS_TRY(entry(key, header));
            if (!seen.insert(key).second) {
                return bad("key '" + key + "' given twice");
            }
            if (!peek('}')) {
                QS_TRY(expect(','));
            }
        }
        return {};
    }

    /// The value of `key` into `header`.
    Result<void> entry(const std::string& key, NpyHeader& header) {
        if (key == "descr") {
            QS_ASSIGN_OR_RETURN(header.descr, quoted());
        } else if (key == "fortran_order") {
            QS_ASSIGN_OR_RETURN(header.fortranOrder, boolean());
        } else if (key == "shape") {
            QS_ASSIGN_OR_RETURN(header.shape, shape());
        } else {
            return bad("unknown key '" + key + "'");
        }
        return {};
    }

    void skipSpace() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n')) {
            ++m_pos;
        }
    }

    bool peek(char c) {
        skipSpace();
        return m_pos < m_text.size() && m_text[m_pos] == c;
    }

    Result<void> expect(char c) {
        if (!peek(c)) {
            return bad(std::string("expected '") + c + "' at offset " + std::to_string(m_pos));
        }
        ++m_pos;
        return {};
    }

    Result<std::string> quoted() {
        QS_TRY(expect('\''));
        const size_t end = m_text.find('\'', m_pos);
        if (end == std::string_view::npos) {
            return bad("unterminated string");
        }
        std::string out(m_text.substr(m_pos, end - m_pos));
        m_pos = end + 1;
        return out;
    }

    Result<bool> boolean() {
        skipSpace();
        for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
            if (m_text.substr(m_pos).starts_with(word)) {
                m_pos += std::string_view(word).size();
                return value;
            }
        }
        return bad("fortran_order must be True or False");
    }

    Result<Shape> shape() {
        QS_TRY(expect('('));
        Shape out;
        while (!peek(')')) {
            const size_t start = m_pos;
            int64_t dim = 0;
            while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9') {
                if (dim > (std::numeric_limits<int64_t>::max() - 9) / 10) {
                    return bad("a dimension is too large");
                }
                dim = dim * 10 + (m_text[m_pos] - '0');
                ++m_pos;
            }
            if (m_pos == start) {
                return bad("shape must be a tuple of non-negative integers");
            }
            out.push_back(dim);
            if (!peek(')')) {
                QS_TRY(expect(','));
            }
        }
        ++m_pos;
        return out;
    }

    std::string_view m_text;
    size_t m_pos = 0;
};

/// The byte size of `shape` elements of `elementSize` bytes, or nothing when it overflows.
std::optional<uint64_t> byteSize(const Shape& shape, size_t elementSize) {
    uint64_t total = elementSize;
    for (const int64_t dim : shape) {
        const auto extent = static_cast<uint64_t>(dim);
        if (extent != 0 && total > std::numeric_limits<uint64_t>::max() / extent) {
            return std::nullopt;
        }
        total *= extent;
    }
    return total;
}

} // namespace

namespace {

/// What a .npy file's first bytes say: the element type, the shape, where the data starts.
struct NpyPrefix {
    DataType dtype = DataType::Undefined;
    Shape shape;
    size_t dataStart = 0;
};

/// Where the header text starts and how long it is, from the magic, version and length field.
Result<std::pair<size_t, size_t>> headerSpan(std::string_view bytes) {
    if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
        return Error(Errc::InvalidArgument, "not a .npy file (bad magic)");
    }
    const auto major = static_cast<uint8_t>(bytes[6]);
    if (major == 1) {
        const size_t length = static_cast<uint8_t>(bytes[8]) |
                              (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
        return std::pair<size_t, size_t>{10, length};
    }
    if (major == 2 || major == 3) {
        if (bytes.size() < 12) {
            return Error(Errc::InvalidArgument, "truncated .npy header");
        }
        uint32_t length = 0;
        std::memcpy(&length, bytes.data() + 8, 4);
        return std::pair<size_t, size_t>{12, length};
    }
    return Error(Errc::Unsupported, "unknown .npy format version " + std::to_string(major));
}

/// Parses the header in `bytes` (the file's first bytes, at least up to the header's end) of a
/// file of `fileSize` bytes, and checks that the data after it is exactly what the shape needs.
Result<NpyPrefix> parsePrefix(std::string_view bytes, uint64_t fileSize) {
    QS_ASSIGN_OR_RETURN(const auto span, headerSpan(bytes));
    const auto [headerStart, headerLength] = span;
    if (headerStart + headerLength > bytes.size()) {
        return Error(Errc::InvalidArgument, "truncated .npy header");
    }
    QS_ASSIGN_OR_RETURN(const NpyHeader header,
                        HeaderParser(bytes.substr(headerStart, headerLength)).parse());
    QS_ASSIGN_OR_RETURN(const DataType dtype, dtypeFromDescr(header.descr));
    if (header.fortranOrder) {
        return Error(Errc::Unsupported,
                     "Fortran-order .npy files are not supported (save in C order)");
    }
    // Checked before allocating: a hostile header may promise exabytes.
    const size_t dataStart = headerStart + headerLength;
    const uint64_t available = fileSize - dataStart;
    const std::optional<uint64_t> needed = byteSize(header.shape, runtimeElementSize(dtype));
    if (!needed || *needed != available) {
        return Error(Errc::InvalidArgument,
                     ".npy data holds " + std::to_string(available) +
                         " bytes, the header's shape " + shapeToString(header.shape) + " needs " +
                         (needed ? std::to_string(*needed) : std::string("more than 2^64")) +
                         (needed && *needed > available ? " (truncated file?)" : ""));
    }
    return NpyPrefix{dtype, header.shape, dataStart};
}

/// Reads `size` bytes at `offset` of `fd` into `out`; false on an error (errno set) or an early
/// end (errno 0: the file shrank since its size was taken).
bool readFully(int fd, uint64_t offset, size_t size, std::byte* out) {
    errno = 0;
    while (size > 0) {
        const ssize_t n =
            ::pread(fd, out, std::min<size_t>(size, size_t{1} << 30), static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            errno = n == 0 ? 0 : errno;
            return false;
        }
        out += n;
        offset += static_cast<uint64_t>(n);
        size -= static_cast<size_t>(n);
    }
    return true;
}

/// After readFully failed: the system's reason, or that the file shrank while it was read.
Error readError() {
    return Error(Errc::Io, errno != 0 ? std::string("cannot read: ") + std::strerror(errno)
                                      : std::string("the file changed while it was read"));
}

/// Reads bytes [offset, offset + size) of `fd` into `out`, in 8 MiB pieces over the threads: most
/// of a large read is the first touch of the tensor's fresh pages, which threads take in
/// parallel. False when a piece fails, with errno set on this thread as readFully set it on the
/// one that failed (errno is per thread).
bool readPieces(int fd, uint64_t offset, int64_t size, std::byte* out) {
    constexpr int64_t kPiece = int64_t{8} << 20;
    constexpr int kNoFailure = -1;
    std::atomic<int> failure = kNoFailure;
    parallelFor((size + kPiece - 1) / kPiece, 1, [&](int64_t first, int64_t last) {
        for (int64_t piece = first; piece < last && failure == kNoFailure; ++piece) {
            const int64_t begin = piece * kPiece;
            const auto length = static_cast<size_t>(std::min(kPiece, size - begin));
            if (!readFully(fd, offset + static_cast<uint64_t>(begin), length, out + begin)) {
                failure = errno;
            }
        }
    });
    errno = failure == kNoFailure ? 0 : failure.load();
    return failure == kNoFailure;
}

} // namespace

/// The open file and its layout; the descriptor is closed with the last NpyRows sharing it.
struct NpyRows::File {
    explicit File(int descriptor)
        : fd(descriptor) {}

    File(const File&) = delete;
    File& operator=(const File&) = delete;

    ~File() {
        if (fd >= 0) {
            ::close(fd);
        }
    }

    int fd;
    DataType dtype = DataType::Undefined;
    Shape shape;
    uint64_t dataStart = 0;
    uint64_t fileSize = 0;
};

Result<NpyRows> NpyRows::open(const std::filesystem::path& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        return Error(Errc::Io, "no such file");
    }
    if (std::filesystem::is_directory(status)) {
        return Error(Errc::Io, "is a directory, not a file");
    }
    auto file = std::make_shared<File>(::open(path.c_str(), O_RDONLY | O_CLOEXEC));

    struct stat info {};

    if (file->fd < 0 || ::fstat(file->fd, &info) != 0) {
        return Error(Errc::Io, std::string("cannot open: ") + std::strerror(errno));
    }
    const auto fileSize = static_cast<uint64_t>(info.st_size);
    // The magic, version and header length first, then the whole header.
    std::string prefix(static_cast<size_t>(std::min<uint64_t>(fileSize, 12)), '\0');
    if (!readFully(file->fd, 0, prefix.size(), reinterpret_cast<std::byte*>(prefix.data()))) {
        return readError();
    }
    QS_ASSIGN_OR_RETURN(const auto span, headerSpan(prefix));
    const uint64_t headerEnd = span.first + span.second;
    if (headerEnd > fileSize) {
        return Error(Errc::InvalidArgument, "truncated .npy header");
    }
    prefix.resize(static_cast<size_t>(headerEnd));
    if (!readFully(file->fd, 0, prefix.size(), reinterpret_cast<std::byte*>(prefix.data()))) {
        return readError();
    }
    QS_ASSIGN_OR_RETURN(const NpyPrefix layout, parsePrefix(prefix, fileSize));
    file->dtype = layout.dtype;
    file->shape = layout.shape;
    file->dataStart = layout.dataStart;
    file->fileSize = fileSize;
    NpyRows rows;
    rows.m_file = std::move(file);
    return rows;
}

graph::DataType NpyRows::dtype() const {
    return m_file->dtype;
}

const Shape& NpyRows::shape() const {
    return m_file->shape;
}

Result<Tensor> NpyRows::readAll() const {
    Tensor tensor = Tensor::allocate(m_file->dtype, m_file->shape);
    if (!readPieces(m_file->fd, m_file->dataStart, static_cast<int64_t>(tensor.byteSize()),
                    static_cast<std::byte*>(tensor.mutableRawData()))) {
        return readError();
    }
    return tensor;
}

Result<Tensor> NpyRows::read(int64_t begin, int64_t end) const {
    const Shape& shape = m_file->shape;
    QS_CHECK(!shape.empty() && begin >= 0 && begin <= end && end <= shape[0],
             "rows out of the .npy file's range");
    Shape rows = shape;
    rows[0] = end - begin;
    Tensor tensor = Tensor::allocate(m_file->dtype, rows);
    const uint64_t rowBytes =
        end > begin ? tensor.byteSize() / static_cast<uint64_t>(end - begin) : 0;

    // The file is read again at every batch: one that shrank or grew since it was opened is
    // refused rather than read half old, half new.
    struct stat info {};

    if (::fstat(m_file->fd, &info) != 0 ||
        static_cast<uint64_t>(info.st_size) != m_file->fileSize) {
        return Error(Errc::Io, "the file changed since it was opened");
    }
    if (!readPieces(m_file->fd, m_file->dataStart + static_cast<uint64_t>(begin) * rowBytes,
                    static_cast<int64_t>(tensor.byteSize()),
                    static_cast<std::byte*>(tensor.mutableRawData()))) {
        return readError();
    }
    return tensor;
}

Result<Tensor> parseNpy(const std::string& bytes) {
    QS_ASSIGN_OR_RETURN(const NpyPrefix layout, parsePrefix(bytes, bytes.size()));
    Tensor tensor = Tensor::allocate(layout.dtype, layout.shape);
    if (tensor.byteSize() > 0) {
        std::memcpy(tensor.mutableRawData(), bytes.data() + layout.dataStart, tensor.byteSize());
    }
    return tensor;
}

Result<Tensor> readNpy(const std::filesystem::path& path) {
    const auto read = [&]() -> Result<Tensor> {
        QS_ASSIGN_OR_RETURN(const NpyRows rows, NpyRows::open(path));
        return rows.readAll();
    };
    return read().context("file '" + path.string() + "'");
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
