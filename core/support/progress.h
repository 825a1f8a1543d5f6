// Progress: how long work reports how far it got and learns that the user cancelled. A
// three-method interface so core stays Qt-free; the CLI draws a text bar, the GUI maps it onto
// QPromise. Core takes `Progress&` everywhere (NullProgress where nobody watches); a stage of a
// longer job reports through a SubProgress, and every loop asks checkCancelled() between steps.
#pragma once

#include "core/support/result.h"

#include <algorithm>
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

/// One stage of a longer job: its [0, 1] maps onto [begin, end] of the parent's, and a cancel of
/// the parent is a cancel of the stage.
class SubProgress final : public Progress {
public:
    SubProgress(Progress& parent, double begin, double end)
        : m_parent(parent)
        , m_begin(begin)
        , m_end(end) {}

    void report(double fraction, std::string_view what) override {
        m_parent.report(m_begin + (m_end - m_begin) * std::clamp(fraction, 0.0, 1.0), what);
    }

    bool isCancelled() const override { return m_parent.isCancelled(); }

private:
    Progress& m_parent;
    double m_begin;
    double m_end;
};

/// The standard cancelled error (Errc::Cancelled, "cancelled") once the user cancelled, else
/// success: `QS_TRY(checkCancelled(progress));` between the steps of a loop.
inline Result<void> checkCancelled(const Progress& progress) {
    if (progress.isCancelled()) {
        return Error(Errc::Cancelled, "cancelled");
    }
    return success();
}

} // namespace qs
