// MessageReporter: where the GUI sends messages meant for the user (a model that failed to open,
// a recent file that vanished). The application shows them as message boxes; tests install a
// recorder so no modal dialog blocks them.
#pragma once

#include <QString>

class QWidget;

namespace qs::ui {

/// Shows errors and notices to the user.
class MessageReporter {
public:
    MessageReporter() = default;
    MessageReporter(const MessageReporter&) = delete;
    MessageReporter& operator=(const MessageReporter&) = delete;
    virtual ~MessageReporter() = default;

    /// Something the user asked for failed; `text` is the one-line error.
    virtual void error(const QString& title, const QString& text) = 0;

    /// Something the user should know, that is not a failure.
    virtual void notice(const QString& title, const QString& text) = 0;
};

/// Reports through modal QMessageBoxes parented to `parent`.
class MessageBoxReporter final : public MessageReporter {
public:
    explicit MessageBoxReporter(QWidget* parent)
        : m_parent(parent) {}

    void error(const QString& title, const QString& text) override;

    void notice(const QString& title, const QString& text) override;

private:
    QWidget* m_parent;
};

} // namespace qs::ui
