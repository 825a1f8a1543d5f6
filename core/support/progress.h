// Progress: how long work reports how far it got and learns that the user cancelled. A
// three-method interface so core stays Qt-free; the CLI draws a text bar, the GUI maps it onto
// QPromise.
#pragma once

#include <string_view>

namespace qs {

class Progress {
public:
    virtual ~Progress() = default;

    /// `fraction` in [0, 1]; `what` names the current step ("layer 12/53").
    virtual void report(double fraction, std::string_view what) = 0;

    virtual bool isCancelled() const = 0;
};

/// Progress that ignores reports and never cancels.
class NullProgress final : public Progress {
public:
    void report(double, std::string_view) override {}

    bool isCancelled() const override { return false; }
};

} // namespace qs
