// Atomic file writing: every file the tool writes goes to a temporary file in the target folder
// and is renamed over the target only once complete, so a failure leaves the old file intact.
#pragma once

#include "core/support/result.h"

#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace qs {

/// Writes `contents` to `path` atomically (temp file in the same folder, fsync, rename).
Result<void> writeFileAtomically(const std::filesystem::path& path, std::string_view contents);

/// Streams into a temp file through `writer`, then renames; the writer's error aborts the write.
Result<void> writeFileAtomically(const std::filesystem::path& path,
                                 const std::function<Result<void>(std::ostream&)>& writer);

/// Reads a whole regular file; a directory, missing or unreadable file gives an Io error.
Result<std::string> readFile(const std::filesystem::path& path);

} // namespace qs
