#include "core/support/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace qs {
namespace fs = std::filesystem;

namespace {

Error ioError(const fs::path& path, std::string_view what, int err) {
    return Error(Errc::Io, std::string(what) + ": " + std::strerror(err))
        .context("file '" + path.string() + "'");
}

/// Owns a temp file path; removes it unless released.
class TempFile {
public:
    explicit TempFile(std::string path)
        : m_path(std::move(path)) {}

    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    ~TempFile() {
        if (!m_released) {
            ::unlink(m_path.c_str());
        }
    }

    const std::string& path() const { return m_path; }

    void release() { m_released = true; }

private:
    std::string m_path;
    bool m_released = false;
};

Result<void> writeAll(int fd, std::string_view data, const fs::path& path) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return ioError(path, "cannot write", errno);
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return success();
}

} // namespace

Result<void> writeFileAtomically(const fs::path& path, std::string_view contents) {
    if (path.empty()) {
        return Error(Errc::InvalidArgument, "empty output path");
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        return Error(Errc::Io, "is a directory").context("file '" + path.string() + "'");
    }
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
        return ioError(path, "cannot create a temporary file in '" + dir.string() + "'", errno);
    }
    TempFile temp(tmpl);
    Result<void> written = writeAll(fd, contents, path);
    if (written.ok() && ::fsync(fd) != 0) {
        written = ioError(path, "cannot flush", errno);
    }
    ::fchmod(fd, 0644);
    if (::close(fd) != 0 && written.ok()) {
        written = ioError(path, "cannot close", errno);
    }
    QS_TRY(std::move(written));
    if (::rename(temp.path().c_str(), path.c_str()) != 0) {
        return ioError(path, "cannot replace", errno);
    }
    temp.release();
    return success();
}

Result<void> writeFileAtomically(const fs::path& path,
                                 const std::function<Result<void>(std::ostream&)>& writer) {
    std::ostringstream buffer;
    QS_TRY(writer(buffer));
    if (!buffer) {
        return Error(Errc::Io, "cannot format output").context("file '" + path.string() + "'");
    }
    return writeFileAtomically(path, buffer.view());
}

Result<void> checkWritableTarget(const fs::path& path) {
    const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    std::error_code error;
    if (!fs::is_directory(folder, error)) {
        return Error(Errc::Io, "cannot write '" + path.string() + "': the folder '" +
                                   folder.string() + "' does not exist");
    }
    if (fs::is_directory(path, error)) {
        return Error(Errc::Io, "cannot write '" + path.string() + "': it is a folder");
    }
    if (::access(folder.c_str(), W_OK) != 0) {
        return Error(Errc::Io, "cannot write '" + path.string() + "': the folder '" +
                                   folder.string() + "' is not writable");
    }
    return {};
}

Result<void> ensureFolder(const fs::path& dir) {
    std::error_code error;
    fs::create_directories(dir, error);
    if (error || !fs::is_directory(dir)) {
        return Error(Errc::Io, "cannot create the folder '" + dir.string() +
                                   "': " + (error ? error.message() : std::string("it is a file")));
    }
    return {};
}

Result<std::string> readFile(const fs::path& path) {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
        return Error(Errc::Io, "no such file").context("file '" + path.string() + "'");
    }
    if (fs::is_directory(status)) {
        return Error(Errc::Io, "is a directory, not a file")
            .context("file '" + path.string() + "'");
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return ioError(path, "cannot open", errno);
    }
    std::string data;
    const auto size = fs::file_size(path, ec);
    if (!ec) {
        data.reserve(static_cast<size_t>(size));
    }
    char chunk[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            const int err = errno;
            ::close(fd);
            return ioError(path, "cannot read", err);
        }
        if (n == 0) {
            break;
        }
        data.append(chunk, static_cast<size_t>(n));
    }
    ::close(fd);
    return data;
}

} // namespace qs
