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

/// Whether writeFileAtomically could write `path` (its folder exists and is writable, and `path`
/// is no folder), for commands that check their outputs before long work: an Io error naming
/// the path and the reason otherwise.
Result<void> checkWritableTarget(const std::filesystem::path& path);

/// Creates folder `dir` and its parents when missing; an Io error naming it when that fails or
/// `dir` is a file.
Result<void> ensureFolder(const std::filesystem::path& dir);

/// Reads a whole regular file; a directory, missing or unreadable file gives an Io error.
Result<std::string> readFile(const std::filesystem::path& path);

} // namespace qs
