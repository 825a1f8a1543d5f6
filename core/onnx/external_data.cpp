#include "core/onnx/external_data.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace qs::onnx::detail {
namespace fs = std::filesystem;

bool usesExternalData(const ::onnx::TensorProto& tensor) {
    return tensor.data_location() == ::onnx::TensorProto::EXTERNAL;
}

namespace {

struct ExternalRef {
    std::string location;
    int64_t offset = 0;
    int64_t length = -1;
};

Result<int64_t> parseNonNegative(const std::string& key, const std::string& text) {
    if (text.empty() || text.size() > 18 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
        return Error(Errc::InvalidModel,
                     "external data " + key + " '" + text + "' is not a non-negative integer");
    }
    return std::stoll(text);
}

Result<ExternalRef> readRef(const ::onnx::TensorProto& tensor) {
    ExternalRef ref;
    for (const auto& entry : tensor.external_data()) {
        if (entry.key() == "location") {
            ref.location = entry.value();
        } else if (entry.key() == "offset") {
            QS_ASSIGN_OR_RETURN(ref.offset, parseNonNegative("offset", entry.value()));
        } else if (entry.key() == "length") {
            QS_ASSIGN_OR_RETURN(ref.length, parseNonNegative("length", entry.value()));
        }
    }
    if (ref.location.empty()) {
        return Error(Errc::InvalidModel, "external data has no location");
    }
    return ref;
}

/// Resolves `location` inside `baseDir`, refusing anything that leaves it.
Result<fs::path> resolveInside(const std::string& location, const fs::path& baseDir) {
    const fs::path rel(location);
    if (rel.is_absolute() || location.find('\0') != std::string::npos) {
        return Error(Errc::InvalidModel, "external data location '" + location +
                                             "' is absolute; only paths inside "
                                             "the model's folder are allowed");
    }
    for (const auto& part : rel) {
        if (part == "..") {
            return Error(Errc::InvalidModel, "external data location '" + location +
                                                 "' escapes the model's folder with '..'");
        }
    }
    std::error_code ec;
    const fs::path base = fs::canonical(baseDir, ec);
    if (ec) {
        return Error(Errc::Io, "cannot resolve the model's folder '" + baseDir.string() + "'");
    }
    const fs::path resolved = fs::canonical(base / rel, ec);
    if (ec) {
        return Error(Errc::Io, "external data file '" + location + "' not found next to the model");
    }
    const auto [baseEnd, unused] =
        std::mismatch(base.begin(), base.end(), resolved.begin(), resolved.end());
    if (baseEnd != base.end()) {
        return Error(Errc::InvalidModel,
                     "external data location '" + location + "' links outside the model's folder");
    }
    if (!fs::is_regular_file(resolved, ec)) {
        return Error(Errc::InvalidModel,
                     "external data location '" + location + "' is not a regular file");
    }
    return resolved;
}

} // namespace

Result<void> loadExternalData(::onnx::TensorProto& tensor, const fs::path& baseDir) {
    const std::string where = "initializer '" + tensor.name() + "'";
    if (baseDir.empty()) {
        return Error(Errc::InvalidModel,
                     "uses external data but the model was not read from a file")
            .context(where);
    }
    QS_ASSIGN_OR_RETURN(const ExternalRef ref, readRef(tensor).context(where));
    QS_ASSIGN_OR_RETURN(const fs::path file, resolveInside(ref.location, baseDir).context(where));
    std::error_code ec;
    const auto fileSize = static_cast<int64_t>(fs::file_size(file, ec));
    if (ec) {
        return Error(Errc::Io, "cannot stat external data file '" + ref.location + "'")
            .context(where);
    }
    const int64_t length = ref.length >= 0 ? ref.length : fileSize - ref.offset;
    if (ref.offset > fileSize || length < 0 || length > fileSize - ref.offset) {
        return Error(Errc::InvalidModel, "external data range [" + std::to_string(ref.offset) +
                                             ", +" + std::to_string(length) +
                                             ") is past the end of '" + ref.location + "' (" +
                                             std::to_string(fileSize) + " bytes)")
            .context(where);
    }
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error(Errc::Io, "cannot open external data file '" + ref.location +
                                   "': " + std::strerror(errno))
            .context(where);
    }
    std::string bytes(static_cast<size_t>(length), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done,
                                  static_cast<off_t>(ref.offset) + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ::close(fd);
            return Error(Errc::Io, "cannot read external data file '" + ref.location + "'")
                .context(where);
        }
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    *tensor.mutable_raw_data() = std::move(bytes);
    tensor.clear_external_data();
    tensor.set_data_location(::onnx::TensorProto::DEFAULT);
    return success();
}

} // namespace qs::onnx::detail
