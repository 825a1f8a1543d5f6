#include "core/support/atomic_file.h"
#include "core/support/result.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace qs {
namespace {
namespace fs = std::filesystem;

Result<int> half(int value) {
    if (value % 2 != 0) {
        return Error(Errc::InvalidArgument, "odd value " + std::to_string(value));
    }
    return value / 2;
}

Result<int> quarter(int value) {
    QS_ASSIGN_OR_RETURN(const int h, half(value).context("first halving"));
    return half(h).context("second halving");
}

TEST(Result, ContextChainsPrintOutermostFirst) {
    EXPECT_EQ(quarter(8).value(), 2);
    auto failed = quarter(6);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().toString(), "second halving: odd value 3");
    auto withFile = std::move(failed).context("file 'x.onnx'");
    EXPECT_EQ(withFile.error().toString(), "file 'x.onnx': second halving: odd value 3");
}

TEST(AtomicFile, ReplacesContentAndReportsUnwritablePaths) {
    const fs::path dir = fs::temp_directory_path() / ("qs-atomic-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path file = dir / "a.txt";
    ASSERT_TRUE(writeFileAtomically(file, "one").ok());
    ASSERT_TRUE(writeFileAtomically(file, "two").ok());
    EXPECT_EQ(readFile(file).value(), "two");
    auto intoDir = writeFileAtomically(dir, "x");
    ASSERT_FALSE(intoDir.ok());
    EXPECT_NE(intoDir.error().toString().find("is a directory"), std::string::npos);
    auto missing = writeFileAtomically(dir / "missing" / "b.txt", "x");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), Errc::Io);
    EXPECT_FALSE(readFile(dir / "nope").ok());
    fs::remove_all(dir);
}

} // namespace
} // namespace qs
